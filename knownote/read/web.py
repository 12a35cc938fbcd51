"""A fetched web page's readable text: the main content, without navigation, footers or banners.

trafilatura finds the main content (measured against the HTML reader alone on the corpus's saved
Wikipedia pages: `benchmarks/web_pages.py`, docs/benchmarks.md); its result, as HTML, goes
through the same HTML reader as an uploaded file, so blocks, tables and headings read the same
way. A page where trafilatura finds nothing is read whole.
"""

from __future__ import annotations

import trafilatura
from lxml import etree

from knownote.read.html import HtmlText, read_html

_TITLE_PARSER = etree.HTMLParser(remove_comments=True, no_network=True)


def main_content_html(markup: str) -> str | None:
    """The page's main content as a small HTML document; None when none is found."""
    return trafilatura.extract(
        markup,
        output_format="html",
        include_tables=True,
        include_comments=False,
        include_images=False,
        favor_recall=True,
        deduplicate=False,
        with_metadata=False,
    )


def page_title(markup: str) -> str | None:
    """The text of the page's <title> (its main content often starts below it)."""
    try:
        root = etree.fromstring(markup, _TITLE_PARSER)
    except (etree.ParserError, ValueError):
        return None
    if root is None:
        return None
    title = next(root.iter("title"), None)
    return "".join(title.itertext()) if title is not None else None


def web_page_text(
    markup: str, xml_first: bool = False
) -> tuple[str, str | None, list[tuple[str, int]]]:
    """Like `html.html_to_text_and_headings`, over the page's main content only."""
    read = read_web_page(markup, xml_first)
    return read.text, read.title, read.headings


def read_web_page(markup: str, xml_first: bool = False) -> HtmlText:
    """Like `html.read_html`, over the page's main content only."""
    main = main_content_html(markup)
    if not main:
        return read_html(markup, xml_first)
    read = read_html(main)
    if not read.text.strip():
        return read_html(markup, xml_first)
    return HtmlText(read.text, page_title(markup), read.headings, read.roles)
