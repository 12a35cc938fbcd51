"""HTML and XHTML: the visible text, blocks as line breaks, and the title."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

from lxml import etree

from knownote.read.canonical import scrub
from knownote.read.roles import RoleRange

XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True, remove_pis=True
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HTML_PARSER = etree.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
_SKIP = _words("head script style noscript template svg iframe object embed canvas nav ix:header")
_PARAGRAPH = _words(
    "p h1 h2 h3 h4 h5 h6 table ul ol dl blockquote pre section article header footer aside main "
    "figure hr address form fieldset details"
)
_LINE = _words("div li tr br dt dd caption figcaption summary legend option center body")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# A wiki's "[edit]" link after each heading stays in the text but is not the heading's words.
_EDIT_LINK = re.compile(r"\s*\[\s*edit( source)?\s*\]\s*$", re.IGNORECASE)
_SEPARATOR_RANK = {"": 0, " | ": 1, "\n": 2, "\n\n": 3}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_HTML_SPACE = re.compile(r"[ \t\n\f]+")
# lxml refuses a str that declares its encoding: drop every declaration at the start, each up to
# its first ">" (lxml's check cannot look past one; a damaged declaration may end there).
_XML_PROLOG = re.compile(r"^(\s*<\?xml[^>]*(>|$))+")
_XHTML = "{http://www.w3.org/1999/xhtml}"

# What an element is (roles.py): by its tag, its ARIA role, or a class or id that sites (Wikipedia
# and MediaWiki skins, common themes) give their menus, reference lists and the like.
_TAG_ROLES = {
    "table": "table",
    "caption": "caption",
    "figcaption": "caption",
    "pre": "code",
    "li": "list",
    "math": "formula",
    "nav": "navigation",
    "button": "navigation",
}
_ARIA_NAVIGATION = _words("navigation banner contentinfo menu menubar search doc-toc")
_NAVIGATION_NAMES = re.compile(
    r"navbox.*|navbar.*|navigation.*|breadcrumbs?|menu|sidebar|toc|skip-?link.*|mw-jump-link|"
    r"mw-editsection|catlinks|printfooter|mw-footer|mw-portlet.*|mw-indicators|hatnote|siteSub|"
    r"contentSub|jump-to-nav|mw-navigation|mw-head|mw-panel|footer|portal-bar.*|sistersitebox|"
    r"authority-control|vector-(header|menu|dropdown|page-toolbar|page-titlebar-toc|main-menu|"
    r"user-links|sticky-header|toc|limited-width-toggle|column-start|settings)"
    r"(-(container|content|list|heading|landmark|label|pinned-container|collapsed-button))?|"
    r"cdx-button|ambox.*|metadata",  # buttons; the banners about the article, not in it
    re.IGNORECASE,
)
_REFERENCE_NAMES = re.compile(r"references|reflist|refbegin|mw-references-wrap", re.IGNORECASE)
_FORMULA_NAMES = re.compile(r"mwe-math-element|katex|mathjax.*|MathJax.*", re.IGNORECASE)
# Inside these, an element's own role gives way: a menu's items are the menu, not a list.
_WHOLE = frozenset({"navigation", "reference", "formula"})


def _tag(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""  # entity reference
    if tag.startswith("{"):
        local = tag.rsplit("}", 1)[1]
        tag = local if tag.startswith(_XHTML) or not el.prefix else f"{el.prefix}:{local}"
    return tag.lower()


def _parse_html(markup: str, xml_first: bool) -> etree._Element | None:
    markup = _XML_PROLOG.sub("", scrub(markup), count=1)
    if xml_first:  # XHTML is XML; the HTML parser would misread things like <title/>
        try:
            return etree.fromstring(markup, XML_PARSER)
        except etree.XMLSyntaxError:
            pass
    try:
        return etree.fromstring(markup, _HTML_PARSER)
    except etree.ParserError:
        return None


def _role(el: etree._Element, tag: str, inside: list[etree._Element]) -> str | None:
    """The role an element gives its text, or None; `inside` holds its open ancestors."""
    if tag in ("html", "body"):  # a skin's flags ("vector-toc-available") are not the page's
        return None
    aria = (el.get("role") or "").lower()
    names = [*(el.get("class") or "").split(), el.get("id") or ""]
    if aria in _ARIA_NAVIGATION or any(_NAVIGATION_NAMES.fullmatch(n) for n in names if n):
        return "navigation"
    if tag in ("header", "footer"):  # a site's chrome, not an article's own header
        return None if any(_tag(a) in ("article", "main") for a in inside) else "navigation"
    if any(_REFERENCE_NAMES.fullmatch(n) for n in names if n) or (
        tag == "li" and (el.get("id") or "").startswith("cite_note")
    ):
        return "reference"
    if any(_FORMULA_NAMES.fullmatch(n) for n in names if n):
        return "formula"
    if tag == "code" and "\n" in "".join(el.itertext()).strip():
        return "code"  # a block of code; a word of code inside a sentence is the sentence's
    return _TAG_ROLES.get(tag)


@dataclass(frozen=True)
class HtmlText:
    """What the HTML reader gives: the text before cleaning (canonical.clean_text), the title,
    the words and level of each visible h1-h6 in reading order, and its elements' roles as ranges
    of that text (roles.carry_over takes them to the cleaned text)."""

    text: str
    title: str | None
    headings: list[tuple[str, int]]
    roles: list[RoleRange]


def html_to_text(markup: str, xml_first: bool = False) -> tuple[str, str | None]:
    """Visible text of an HTML/XHTML document (blocks become line breaks) and its title."""
    text, title, _ = html_to_text_and_headings(markup, xml_first)
    return text, title


def html_to_text_and_headings(
    markup: str, xml_first: bool = False
) -> tuple[str, str | None, list[tuple[str, int]]]:
    """`html_to_text`, and the words and level of each visible h1-h6 in reading order.

    The words are as they appear in the text (before cleaning): see `canonical.locate_headings`.
    """
    read = read_html(markup, xml_first)
    return read.text, read.title, read.headings


def read_html(markup: str, xml_first: bool = False) -> HtmlText:
    """The text, title, headings and roles of an HTML/XHTML document (see `HtmlText`)."""
    root = _parse_html(markup, xml_first)
    if root is None:
        return HtmlText("", None, [], [])
    headings: list[tuple[str, int]] = []
    # elements with a role that are open, each with the index in `out` where its text begins
    open_roles: list[tuple[etree._Element, str, int]] = []
    ancestors: list[etree._Element] = []
    pieces: list[tuple[int, int, str]] = []  # indexes into `out` and the role
    heading_at: tuple[etree._Element, int] | None = None  # the open heading, where its text began
    out: list[str] = []
    pending, row_start, in_pre = "", 0, 0

    def request(separator: str) -> None:
        nonlocal pending
        if _SEPARATOR_RANK[separator] > _SEPARATOR_RANK[pending]:
            pending = separator

    def emit(text: str | None) -> None:
        nonlocal pending
        if not text:
            return
        if not in_pre:
            text = _HTML_SPACE.sub(" ", text)
            if pending or not out or out[-1].endswith((" ", "\n")):
                text = text.lstrip(" ")
        if not text:
            return
        if pending and out:
            out[-1] = out[-1].rstrip(" ")
            out.append(pending)
        pending = ""
        out.append(text)

    walker = etree.iterwalk(root, events=("start", "end"))
    skipped = False
    for event, el in walker:
        tag = _tag(el)
        if event == "start":
            if (
                tag in _SKIP
                or el.get("hidden") is not None
                or (_HIDDEN_STYLE.search(el.get("style") or ""))
            ):
                walker.skip_subtree()
                skipped = True  # the next event is this element's "end"
                continue
            if tag in ("td", "th"):
                if len(out) > row_start:
                    request(" | ")
            elif tag in _PARAGRAPH or tag in _LINE:
                request("\n\n" if tag in _PARAGRAPH else "\n")
                row_start = len(out) if tag == "tr" else row_start
            in_pre += tag in ("pre", "textarea")
            if heading_at is None and tag in _HEADINGS:
                heading_at = (el, len(out))
            whole = open_roles and open_roles[-1][1] in _WHOLE
            if not whole and (role := _role(el, tag, ancestors)):
                open_roles.append((el, role, len(out)))
            ancestors.append(el)
            emit(el.text)
            continue
        if not skipped:
            if heading_at is not None and heading_at[0] is el:
                words = _EDIT_LINK.sub("", "".join(out[heading_at[1] :])).strip()
                if words:
                    headings.append((words, _HEADINGS[tag]))
                heading_at = None
            if tag in _PARAGRAPH or tag in _LINE:
                request("\n\n" if tag in _PARAGRAPH else "\n")
            in_pre -= tag in ("pre", "textarea")
            ancestors.pop()
            if open_roles and open_roles[-1][0] is el:
                _, role, begun = open_roles.pop()
                pieces.append((begun, len(out), role))
        skipped = False
        if el is not root:
            emit(el.tail)
    title_el = next(root.iter("{*}title"), None)
    if title_el is None:
        title_el = next(root.iter("{*}h1"), None)
    title = "".join(title_el.itertext()) if title_el is not None else None
    at = [0, *accumulate(len(piece) for piece in out)]
    roles = [RoleRange(at[begun], at[end], role) for begun, end, role in pieces]
    return HtmlText("".join(out), title, headings, roles)
