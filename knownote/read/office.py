"""Word (.docx) and PowerPoint (.pptx) files."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import docx
import docx.opc.exceptions
import pptx
import pptx.exc
from lxml import etree
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape

from knownote.errors import FileTooLarge, UnreadableFile, UnsupportedFile
from knownote.read.canonical import clean_text, good_title, join_pages, locate_headings
from knownote.read.extracted import Extracted
from knownote.read.roles import (
    SITE_CHROME,
    SITE_CHROME_WORDS,
    RoleRange,
    carry_over,
    reader_roles,
)
from knownote.read.sniff import ZIP_ERRORS

_OFFICE_ERRORS = (
    *ZIP_ERRORS,
    KeyError,
    # python-docx and python-pptx take a part's XML for the kind its name promises: a part of
    # another kind under that name (a relationships part as the content types) lacks its methods
    AttributeError,
    etree.XMLSyntaxError,
    docx.opc.exceptions.PackageNotFoundError,
    pptx.exc.PythonPptxError,
)


def _office_error(name: str, ext: str, error: Exception) -> UnsupportedFile | UnreadableFile:
    # python-docx and python-pptx raise ValueError("... content type is ...") for the
    # macro-enabled, template and show variants of their formats.
    if isinstance(error, ValueError) and "content type" in str(error):
        return UnsupportedFile(
            f"{name} is a macro-enabled, template or show variant of .{ext}, which KnowNote "
            f"cannot open. Save it as a regular .{ext} file and import that."
        )
    return damaged(name, "Word document" if ext == "docx" else "presentation")


def damaged(name: str, what: str) -> UnreadableFile:
    return UnreadableFile(
        f"{name} is damaged: its {what} cannot be read. "
        "Open it in its application, save a new copy and import that."
    )


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_NS = {
    "w": _W[1:-1],
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
}
# Runs in reading order; skip the fallback copy of alternate content, text boxes and text that
# tracked changes moved away (it is repeated where it moved to).
_DOCX_RUN_ITEMS = etree.XPath(
    ".//w:r[not(ancestor::mc:Fallback or ancestor::w:txbxContent or ancestor::w:moveFrom)]"
    "/*[self::w:t or self::w:tab or self::w:br or self::w:cr or self::w:noBreakHyphen]",
    namespaces=_NS,
)
_DOCX_RUN_TEXT = {f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n", f"{_W}noBreakHyphen": "-"}


def _docx_paragraph(p: etree._Element) -> str:
    return "".join(
        el.text or "" if el.tag == f"{_W}t" else _DOCX_RUN_TEXT[el.tag] for el in _DOCX_RUN_ITEMS(p)
    )


Block = tuple[str, list[RoleRange]]  # a block's text and its roles, as ranges of that text


def _joined(separator: str, blocks: Iterable[Block]) -> Block:
    texts: list[str] = []
    roles: list[RoleRange] = []
    at = 0
    for text, inner in blocks:
        if texts:
            at += len(separator)
        roles += [RoleRange(r.start + at, r.end + at, r.role) for r in inner]
        texts.append(text)
        at += len(text)
    return separator.join(texts), roles


def _whole(block: Block, role: str | None) -> Block:
    text, roles = block
    return (text, [RoleRange(0, len(text), role), *roles]) if role else block


def _docx_table(tbl: etree._Element, styles: _Styles) -> Block:
    rows = []
    for tr in tbl.iterchildren(f"{_W}tr"):
        cells = []
        for tc in tr.iterchildren(f"{_W}tc"):
            merge = tc.find("w:tcPr/w:vMerge", _NS)
            if merge is None:
                merge = tc.find("w:tcPr/w:hMerge", _NS)
            if merge is not None and merge.get(f"{_W}val") != "restart":
                continue  # continuation of a merged cell: its text is in the first cell
            cell = _joined("\n", _docx_blocks(tc, styles))
            if cell[0]:
                cells.append(cell)
        if cells:
            rows.append(_joined(" | ", cells))
    return _whole(_joined("\n", rows), "table")


def _docx_blocks(parent: etree._Element, styles: _Styles) -> Iterator[Block]:
    """Non-empty paragraphs and tables under a body or cell, in reading order, with roles."""
    for child in parent:
        if child.tag == f"{_W}p":
            text = _docx_paragraph(child)
            block = _whole((text, []), _paragraph_role(child, text, styles))
        elif child.tag == f"{_W}tbl":
            block = _docx_table(child, styles)
        elif child.tag in (f"{_W}sdt", f"{_W}customXml"):
            content = child.find("w:sdtContent", _NS) if child.tag == f"{_W}sdt" else child
            block = (
                _joined("\n\n", _docx_blocks(content, styles)) if content is not None else ("", [])
            )
            gallery = child.find("w:sdtPr/w:docPartObj/w:docPartGallery", _NS)
            if gallery is not None and "contents" in gallery.get(f"{_W}val", "").lower():
                block = _whole(block, "navigation")  # a table of contents
        else:
            continue
        if block[0].strip():
            yield block


@dataclass(frozen=True)
class _Styles:
    names: dict[str, str]  # paragraph style id -> its name, lower case
    lists: frozenset[str]  # ids of styles that number their paragraphs


def _docx_styles(styles: etree._Element) -> _Styles:
    names, lists = {}, set()
    for style in styles.iterchildren(f"{_W}style"):
        if style.get(f"{_W}type") != "paragraph" or not (sid := style.get(f"{_W}styleId")):
            continue
        name_el = style.find("w:name", _NS)
        names[sid] = (name_el.get(f"{_W}val", "") if name_el is not None else "").strip().lower()
        if style.find("w:pPr/w:numPr", _NS) is not None:
            lists.add(sid)
    return _Styles(names, frozenset(lists))


# a paragraph that is a site's menu if the document is a saved web page (SITE_CHROME_WORDS)
_MAYBE_CHROME = "maybe navigation"
_LINKED_TEXT = etree.XPath(".//w:hyperlink//w:t/text()", namespaces=_NS)
MAX_LINK_LINE = 80  # a paragraph of links no longer than this is a menu, not a sentence


def _paragraph_role(p: etree._Element, text: str, styles: _Styles) -> str | None:
    """A paragraph's role by its style, numbering, links or words (headings come apart)."""
    style = p.find("w:pPr/w:pStyle", _NS)
    sid = style.get(f"{_W}val", "") if style is not None else ""
    name = styles.names.get(sid, "")
    if (
        name.startswith("toc")
        or name.startswith("html top of form")
        or name.startswith("html bottom of form")
    ):
        return "navigation"
    if name == "caption":
        return "caption"
    if name.startswith(("footnote", "endnote")):
        return "footnote"
    words = text.strip()
    if len(words) <= MAX_LINK_LINE:
        if SITE_CHROME.fullmatch(words):
            return "navigation"  # a web page saved as a document keeps the site's menus
        if SITE_CHROME_WORDS.fullmatch(words):
            return _MAYBE_CHROME
        linked = p.find("w:hyperlink", _NS) is not None and "".join(_LINKED_TEXT(p)).strip()
        if words and linked == words:
            return "navigation"
    if p.find("w:pPr/w:numPr", _NS) is not None or sid in styles.lists or name.startswith("list"):
        return "list"
    return None


_DOCX_PARAGRAPHS = etree.XPath(
    ".//w:p[not(ancestor::mc:Fallback or ancestor::w:txbxContent)]", namespaces=_NS
)
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
MAX_HEADING_CHARS = 300  # a longer "heading" is a paragraph in a heading's style


def _docx_style_levels(styles: etree._Element) -> dict[str, int]:
    """Paragraph style id -> outline level: "Heading N" is N, "Title" 1, else its outline level."""
    own: dict[str, int | None] = {}
    based: dict[str, str] = {}
    for style in styles.iterchildren(f"{_W}style"):
        if style.get(f"{_W}type") != "paragraph" or not (sid := style.get(f"{_W}styleId")):
            continue
        name_el, outline = style.find("w:name", _NS), style.find("w:pPr/w:outlineLvl", _NS)
        name = name_el.get(f"{_W}val", "") if name_el is not None else ""
        level = None
        if match := _HEADING_STYLE.fullmatch(name.strip()):
            level = int(match.group(1))
        elif name.strip().lower() == "title":
            level = 1
        elif outline is not None and (value := outline.get(f"{_W}val", "")).isdigit():
            level = int(value) + 1 if int(value) < 9 else None
        own[sid] = level
        if (parent := style.find("w:basedOn", _NS)) is not None:
            based[sid] = parent.get(f"{_W}val", "")
    levels = {}
    for sid in own:
        at, hops = sid, 0
        while own.get(at) is None and at in based and hops < 10:  # a style based on a heading
            at, hops = based[at], hops + 1
        if own.get(at) is not None:
            levels[sid] = own[at]
    return levels


def _docx_headings(body: etree._Element, levels: dict[str, int]) -> Iterator[tuple[str, int]]:
    """The words and level of each paragraph in a heading style or with an outline level."""
    for p in _DOCX_PARAGRAPHS(body):
        level = None
        outline = p.find("w:pPr/w:outlineLvl", _NS)
        style = p.find("w:pPr/w:pStyle", _NS)
        if outline is not None and (value := outline.get(f"{_W}val", "")).isdigit():
            level = int(value) + 1 if int(value) < 9 else None
        elif style is not None:
            level = levels.get(style.get(f"{_W}val", ""))
        if level and (words := _docx_paragraph(p)).strip() and len(words) <= MAX_HEADING_CHARS:
            yield words, level


def extract_docx(data: bytes, name: str) -> Extracted:
    try:
        document = docx.Document(io.BytesIO(data))
        body = document.element.body
        title = good_title(document.core_properties.title)
        levels = _docx_style_levels(document.styles.element)
        styles = _docx_styles(document.styles.element)
    except _OFFICE_ERRORS as error:
        raise _office_error(name, "docx", error) from None
    raw, found = _joined("\n\n", _docx_blocks(body, styles))
    web_page = any(
        r.role == "navigation" and SITE_CHROME.fullmatch(raw[r.start : r.end].strip())
        for r in found
    )
    found = [
        RoleRange(r.start, r.end, "navigation") if r.role == _MAYBE_CHROME else r
        for r in found
        if web_page or r.role != _MAYBE_CHROME
    ]
    text = clean_text(raw)
    headings = tuple(locate_headings(text, _docx_headings(body, levels)))
    roles = reader_roles(text, headings, carry_over(raw, text, found))
    return Extracted(text, "docx", (), title, (), headings=headings, roles=roles)


_BULLETED = frozenset({PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT})
_SLIDE_FOOTER = frozenset({PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE})


def _pptx_role(shape: BaseShape) -> str | None:
    """A text shape's role by its placeholder: a body's points are a list (with two or more)."""
    if not shape.is_placeholder:
        return None
    kind = shape.placeholder_format.type
    if kind in _SLIDE_FOOTER:
        return "page_footer"
    points = [p for p in shape.text_frame.paragraphs if p.text.strip()]
    return "list" if kind in _BULLETED and len(points) > 1 else None


def _pptx_shape_texts(shapes: Iterable[BaseShape]) -> Iterator[tuple[str, str | None]]:
    """Each shape's text, with its role."""
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _pptx_shape_texts(shape.shapes)
        elif shape.has_text_frame:
            yield shape.text_frame.text, _pptx_role(shape)
        elif shape.has_table:
            rows = []
            for row in shape.table.rows:
                cells = [c.text.strip() for c in row.cells if not c.is_spanned and c.text.strip()]
                rows.append(" | ".join(cells))
            yield "\n".join(rows), "table"


def extract_pptx(data: bytes, name: str, max_pages: int) -> Extracted:
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
        title = good_title(presentation.core_properties.title)
    except _OFFICE_ERRORS as error:
        raise _office_error(name, "pptx", error) from None
    if len(slides) > max_pages:
        raise FileTooLarge(
            f"{name} has {len(slides)} slides, more than the limit of {max_pages}. "
            "Split it into smaller files."
        )
    texts, titles, raws = [], [], []
    for slide in slides:
        shape = slide.shapes.title
        words = shape.text_frame.text if shape is not None and shape.has_text_frame else ""
        titles.append([(words, 1)] if len(words) <= MAX_HEADING_CHARS else [])
        parts = [_whole((t, []), role) for t, role in _pptx_shape_texts(slide.shapes) if t.strip()]
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            parts.append(("Notes:\n" + notes.text, []))
        raws.append(_joined("\n\n", parts))
        texts.append(clean_text(raws[-1][0]))
    text, pages = join_pages(texts)
    headings = [  # slide titles, each found on its slide
        heading
        for page, words in zip(pages, titles, strict=True)
        for heading in locate_headings(text, words, page.start, page.end)
    ]
    roles = [  # each slide's shapes, carried over to its page
        role
        for page, slide_text, (raw, found) in zip(pages, texts, raws, strict=True)
        for role in carry_over(raw, slide_text, found, page.start)
    ]
    roles = reader_roles(text, headings, roles)
    return Extracted(text, "pptx", pages, title, (), headings=tuple(headings), roles=roles)
