"""Main-content extraction on the corpus's saved Wikipedia pages: navigation kept, article lost.

    .venv/bin/python benchmarks/web_pages.py

For each saved page, the truth is the article: the text of its `#mw-content-text` element
(without navigation boxes, edit links and category links) read by the HTML reader; navigation is
every line of the whole page's text that is not a line of the article (menus, the sidebar, the
header, the footer, the language list). For each way of reading the page:

- navigation kept: characters of navigation lines that are lines of the result;
- article lost: characters of article lines not found in the result (white space collapsed).

"before" is the HTML reader over the whole page (how an uploaded HTML file is read); "after" is
`knownote.read.web.web_page_text` (trafilatura's main content, then the same reader).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lxml import etree

from knownote.read.canonical import clean_text
from knownote.read.html import html_to_text_and_headings
from knownote.read.sniff import declared_charset, decode
from knownote.read.web import web_page_text

WEB = Path(__file__).resolve().parents[2] / "shared/corpus/docs/web_text"
PAGES = ("html_wikipedia_tardigrades.html", "txt_actually_html_wikipedia_bates.txt")
_SPACE = re.compile(r"\s+")
_EDIT = re.compile(r"\s*\[edit\]$")  # a heading's edit link: the heading is article either way
_NOT_ARTICLE = ["navbox", "vertical-navbox", "mw-editsection", "catlinks", "navbox-styles"]


def _lines(text: str) -> list[str]:
    lines = (_EDIT.sub("", _SPACE.sub(" ", raw).strip()) for raw in text.split("\n"))
    return [line for line in lines if line]


def article_text(markup: str) -> str:
    root = etree.fromstring(markup, etree.HTMLParser(remove_comments=True))
    (content,) = root.xpath('//*[@id="mw-content-text"]')
    for el in content.xpath(".//*[@class]"):
        if set(el.get("class", "").split()) & set(_NOT_ARTICLE) and el.getparent() is not None:
            el.getparent().remove(el)
    return clean_text(html_to_text_and_headings(etree.tostring(content, encoding="unicode"))[0])


def measure(result: str, article: list[str], navigation: list[str]) -> tuple[int, int]:
    lines = set(_lines(result))
    flat = _SPACE.sub(" ", result)
    kept = sum(len(line) for line in navigation if line in lines)
    lost = sum(len(line) for line in article if line not in flat)
    return kept, lost


def main() -> None:
    if not WEB.is_dir():
        sys.exit(f"needs the shared corpus ({WEB} is absent)")
    print(f"{'page':<42} {'way':<7} {'chars':>7} {'nav chars':>9} {'nav kept':>8} "
          f"{'article':>7} {'lost':>6} {'seconds':>7}")  # fmt: skip
    totals = {"before": [0, 0], "after": [0, 0]}
    all_nav = all_article = 0
    for name in PAGES:
        data = (WEB / name).read_bytes()
        markup = decode(data, name, declared_charset(data)).text
        article = _lines(article_text(markup))
        article_set = set(article)
        whole = clean_text(html_to_text_and_headings(markup)[0])
        navigation = [line for line in _lines(whole) if line not in article_set]
        n_nav, n_article = sum(map(len, navigation)), sum(map(len, article))
        all_nav, all_article = all_nav + n_nav, all_article + n_article
        for way, read in (
            ("before", lambda m: html_to_text_and_headings(m)[0]),
            ("after", lambda m: web_page_text(m)[0]),
        ):
            started = time.perf_counter()
            result = clean_text(read(markup))
            seconds = time.perf_counter() - started
            kept, lost = measure(result, article, navigation)
            totals[way][0] += kept
            totals[way][1] += lost
            print(f"{name:<42} {way:<7} {len(result):>7,} {n_nav:>9,} {kept:>8,} "
                  f"{n_article:>7,} {lost:>6,} {seconds:>7.2f}")  # fmt: skip
    for way, (kept, lost) in totals.items():
        print(f"all {way}: navigation kept {kept:,} of {all_nav:,} characters "
              f"({kept / all_nav:.1%}); article lost {lost:,} of {all_article:,} "
              f"({lost / all_article:.1%})")  # fmt: skip


if __name__ == "__main__":
    main()
