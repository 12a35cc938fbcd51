"""Word (.docx) and PowerPoint (.pptx) files."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator

import docx
import docx.opc.exceptions
import pptx
import pptx.exc
from lxml import etree
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape

from knownote.errors import FileTooLarge, UnreadableFile, UnsupportedFile
from knownote.read.canonical import clean_text, good_title, join_pages, locate_headings
from knownote.read.extracted import Extracted
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


def _docx_table(tbl: etree._Element) -> str:
    rows = []
    for tr in tbl.iterchildren(f"{_W}tr"):
        cells = []
        for tc in tr.iterchildren(f"{_W}tc"):
            merge = tc.find("w:tcPr/w:vMerge", _NS)
            if merge is None:
                merge = tc.find("w:tcPr/w:hMerge", _NS)
            if merge is not None and merge.get(f"{_W}val") != "restart":
                continue  # continuation of a merged cell: its text is in the first cell
            if text := "\n".join(_docx_blocks(tc)):
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _docx_blocks(parent: etree._Element) -> Iterator[str]:
    """Non-empty paragraphs and tables under a body or cell, in reading order."""
    for child in parent:
        if child.tag == f"{_W}p":
            text = _docx_paragraph(child)
        elif child.tag == f"{_W}tbl":
            text = _docx_table(child)
        elif child.tag in (f"{_W}sdt", f"{_W}customXml"):
            content = child.find("w:sdtContent", _NS) if child.tag == f"{_W}sdt" else child
            text = "\n\n".join(_docx_blocks(content)) if content is not None else ""
        else:
            continue
        if text.strip():
            yield text


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
    except _OFFICE_ERRORS as error:
        raise _office_error(name, "docx", error) from None
    text = clean_text("\n\n".join(_docx_blocks(body)))
    headings = tuple(locate_headings(text, _docx_headings(body, levels)))
    return Extracted(text, "docx", (), title, (), headings=headings)


def _pptx_shape_texts(shapes: Iterable[BaseShape]) -> Iterator[str]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _pptx_shape_texts(shape.shapes)
        elif shape.has_text_frame:
            yield shape.text_frame.text
        elif shape.has_table:
            rows = []
            for row in shape.table.rows:
                cells = [c.text.strip() for c in row.cells if not c.is_spanned and c.text.strip()]
                rows.append(" | ".join(cells))
            yield "\n".join(rows)


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
    texts, titles = [], []
    for slide in slides:
        shape = slide.shapes.title
        words = shape.text_frame.text if shape is not None and shape.has_text_frame else ""
        titles.append([(words, 1)] if len(words) <= MAX_HEADING_CHARS else [])
        parts = [t for t in _pptx_shape_texts(slide.shapes) if t.strip()]
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            parts.append("Notes:\n" + notes.text)
        texts.append(clean_text("\n\n".join(parts)))
    text, pages = join_pages(texts)
    headings = [  # slide titles, each found on its slide
        heading
        for page, words in zip(pages, titles, strict=True)
        for heading in locate_headings(text, words, page.start, page.end)
    ]
    return Extracted(text, "pptx", pages, title, (), headings=tuple(headings))
