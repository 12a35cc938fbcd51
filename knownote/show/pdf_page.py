"""A PDF passage on its page: canonical-text offsets -> glyph boxes -> a highlighted page image.

The map from offsets to glyphs is exact, not a text search. `page_glyphs` walks MuPDF's
structured text of a page in the order MuPDF writes its plain text (the text `pdf_page_text`
cleans into the canonical text), keeping each character's box, then repeats `clean_text` step by
step on characters that carry their boxes. Both results are checked against the real thing (the
raw text MuPDF writes, `clean_text` of it, and the page's slice of the stored text); when any check
fails the page is not highlighted and the caller is told why. Newlines MuPDF inserts after lines
have no glyph and are skipped, as is whitespace at either end of a line's run; a space between two
cited glyphs of one line is painted, so the mark runs on through the words.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np
import pymupdf
from pymupdf import mupdf

from knownote.errors import KnowNoteError, NotFound, PageMismatch, PasswordRequired
from knownote.read.canonical import BLANK_LINES, CHAR_MAP, SURROGATES, TRAILING_SPACE, clean_text
from knownote.read.extracted import OcrLimits, OcrPage
from knownote.read.pdf import PDF_TEXT_FLAGS
from knownote.read.table_rows import follow, layer_rows
from knownote.store.db import Document, Store

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in unrotated page coordinates

DEFAULT_ZOOM = 2.0  # pixels per point: a letter page is 1224 px wide
MIN_ZOOM, MAX_ZOOM = 0.25, 6.0
HIGHLIGHT = np.array([1.0, 0.85, 0.25])  # multiplied into the pixels: a yellow marker pen
STRONG = np.array([0.95, 0.55, 0.1])  # a support span inside the passage: a darker orange


@dataclass(frozen=True)
class PageGlyphs:
    """One page's canonical text with, per character, its glyph box and line (None: no glyph)."""

    text: str
    boxes: tuple[Box | None, ...]
    lines: tuple[int, ...]

    def rects(self, start: int, end: int) -> list[Box]:
        """The glyph boxes of `text[start:end]`, one per character that has a glyph.

        Whitespace is skipped, except a space between two glyphs of one line, so a highlight
        runs on through the words of a line instead of stopping at each gap.
        """
        lo, hi = max(start, 0), min(end, len(self.text))
        rects = []
        for i in range(lo, hi):
            box = self.boxes[i]
            if box is None:
                continue
            if self.text[i].isspace() and not (
                lo < i < hi - 1 and self._inked(i - 1, i) and self._inked(i + 1, i)
            ):
                continue
            rects.append(box)
        return rects

    def _inked(self, i: int, beside: int) -> bool:
        return (
            self.boxes[i] is not None
            and not self.text[i].isspace()
            and self.lines[i] == self.lines[beside]
        )


# ---------------------------------------------------------------- text and boxes


def _raw_chars(textpage: pymupdf.TextPage) -> tuple[str, list[Box | None], list[int]]:
    """MuPDF's plain text of a text page, with a box and a line number per character.

    Mirrors PyMuPDF's plain-text writer: per line, the characters whose box overlaps the
    page's media box, then a newline unless the line ended with one (or with U+0000).
    """
    chars: list[str] = []
    boxes: list[Box | None] = []
    lines: list[int] = []
    media = textpage.this.m_internal.mediabox
    infinite = mupdf.fz_is_infinite_rect(mupdf.FzRect(media))
    mx0, my0, mx1, my1 = media.x0, media.y0, media.x1, media.y1
    line_no = 0
    for block in textpage.this:
        if block.m_internal.type != mupdf.FZ_STEXT_BLOCK_TEXT:
            continue
        for line in block:
            line_no += 1
            last = 0
            for ch in line:
                r = pymupdf.JM_char_bbox(line, ch)
                if infinite or not (mx0 >= r.x1 or my0 >= r.y1 or mx1 <= r.x0 or my1 <= r.y0):
                    last = ch.m_internal.c
                    chars.append(chr(last))
                    boxes.append((r.x0, r.y0, r.x1, r.y1))
                    lines.append(line_no)
            if last not in (0, 10):
                chars.append("\n")
                boxes.append(None)
                lines.append(line_no)
    return "".join(chars), boxes, lines


@dataclass
class _Chars:
    """Characters being cleaned, each still carrying its box and line."""

    chars: list[str]
    boxes: list[Box | None]
    lines: list[int]

    @property
    def text(self) -> str:
        return "".join(self.chars)

    def keep(self, indices: Sequence[int], replace: dict[int, str] | None = None) -> None:
        replace = replace or {}
        self.chars = [replace.get(i, self.chars[i]) for i in indices]
        self.boxes = [self.boxes[i] for i in indices]
        self.lines = [self.lines[i] for i in indices]

    def delete_matches(self, pattern: re.Pattern[str], keep_first: int = 0) -> None:
        drop: set[int] = set()
        for m in pattern.finditer(self.text):
            drop.update(range(m.start() + keep_first, m.end()))
        if drop:
            self.keep([i for i in range(len(self.chars)) if i not in drop])


def _union(boxes: Sequence[Box | None]) -> Box | None:
    real = [b for b in boxes if b is not None]
    if not real:
        return None
    return (
        min(b[0] for b in real),
        min(b[1] for b in real),
        max(b[2] for b in real),
        max(b[3] for b in real),
    )


def _nfc(c: _Chars) -> None:
    """NFC, one group at a time (a starter and what composes with it); a group's box is shared."""
    groups: list[list[int]] = []
    for i, ch in enumerate(c.chars):
        if groups and (unicodedata.combining(ch) or _composes(c.chars, groups[-1], ch)):
            groups[-1].append(i)
        else:
            groups.append([i])
    chars, boxes, lines = [], [], []
    for group in groups:
        box = _union([c.boxes[i] for i in group])
        for out in unicodedata.normalize("NFC", "".join(c.chars[i] for i in group)):
            chars.append(out)
            boxes.append(box)
            lines.append(c.lines[group[0]])
    c.chars, c.boxes, c.lines = chars, boxes, lines


def _composes(chars: list[str], group: list[int], ch: str) -> bool:
    before = "".join(chars[i] for i in group)
    nfc = unicodedata.normalize
    return nfc("NFC", before + ch) != nfc("NFC", before) + nfc("NFC", ch)


def _clean_with_boxes(raw: str, boxes: list[Box | None], lines: list[int]) -> _Chars:
    """`clean_text`, step by step, on characters that keep their boxes."""
    c = _Chars(list(raw), list(boxes), list(lines))
    # canonical.scrub: "\r\n" and "\r" become "\n", then the control-character map, then surrogates.
    keep, replace = [], {}
    for i, ch in enumerate(c.chars):
        if ch == "\n" and i and c.chars[i - 1] == "\r":
            continue
        mapped = "\n" if ch == "\r" else CHAR_MAP.get(ord(ch), ch)
        if mapped is None:
            continue
        if SURROGATES.fullmatch(mapped):
            mapped = "\ufffd"
        keep.append(i)
        if mapped != ch:
            replace[i] = mapped
    c.keep(keep, replace)
    if not unicodedata.is_normalized("NFC", c.text):
        _nfc(c)
    c.delete_matches(TRAILING_SPACE)
    c.delete_matches(BLANK_LINES, keep_first=2)
    text = c.text
    head = len(text) - len(text.lstrip())
    tail = len(text.rstrip())
    c.keep(range(head, max(head, tail)))
    return c


def page_glyphs(page: pymupdf.Page, table_rows: bool = True) -> PageGlyphs:
    """The page's canonical text (what `pdf_page_text` gives) with a glyph box per character;
    with `table_rows` false, as it was read before tables were read row by row.

    Raises PageMismatch when the walk over MuPDF's text does not reproduce that text exactly.
    """
    textpage = page.get_textpage(flags=PDF_TEXT_FLAGS)
    raw, boxes, lines = _raw_chars(textpage)
    if raw != textpage.extractText():
        raise PageMismatch(_mismatch(page.number + 1, "its glyphs do not spell MuPDF's text"))
    cleaned = _clean_with_boxes(raw, boxes, lines)
    if cleaned.text != clean_text(raw):
        raise PageMismatch(_mismatch(page.number + 1, "its glyphs do not spell the cleaned text"))
    # as pdf_page_text does
    rows = layer_rows(textpage.extractDICT()["blocks"], cleaned.text) if table_rows else None
    if rows is None:
        return PageGlyphs(cleaned.text, tuple(cleaned.boxes), tuple(cleaned.lines))
    moved_boxes, moved_lines = follow(rows.source, cleaned.boxes, cleaned.lines)
    return PageGlyphs(rows.text, moved_boxes, moved_lines)


def _mismatch(page_no: int, what: str) -> str:
    return (
        f"Page {page_no} cannot be highlighted exactly: {what} (perhaps another PyMuPDF "
        "version than at import). The extracted text above is still exact; importing the "
        "document again may fix the page view."
    )


# ---------------------------------------------------------------- rendering and caches

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, make: Callable[[], V]) -> V:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = self.items[key] = make()
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return value

    def clear(self) -> None:
        self.items.clear()


# MuPDF is not thread-safe and Streamlit serves sessions from threads: one render at a time.
_LOCK = threading.RLock()
_PIXMAPS: _LRU[tuple[str, int, float], pymupdf.Pixmap] = _LRU(16)  # ~6 MB each at zoom 2
_GLYPHS: _LRU[tuple[str, int, bool], PageGlyphs] = _LRU(64)


def clear_caches() -> None:
    with _LOCK:
        _PIXMAPS.clear()
        _GLYPHS.clear()


def _open(path: Path, name: str, password: str | None) -> pymupdf.Document:
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, pymupdf.FileNotFoundError):
        raise NotFound(f"The original file of {name} cannot be opened any more.") from None
    if doc.needs_pass and not (password and doc.authenticate(password)):
        doc.close()
        what = "That password is wrong" if password else "It is password-protected"
        raise PasswordRequired(
            f"{what}: enter the password of {name} to see its pages (it is not stored)."
        )
    return doc


def _pixel_box(box: Box, page: pymupdf.Page, zoom: float, width: int, height: int) -> Box:
    r = pymupdf.Rect(box) * page.rotation_matrix * pymupdf.Matrix(zoom, zoom)
    r = r.irect & pymupdf.IRect(0, 0, width, height)
    return (r.x0, r.y0, r.x1, r.y1)


@dataclass(frozen=True)
class PageImage:
    """One page of a cited passage: the page with the passage painted, and a crop around it."""

    page: int  # 1-based page number
    png: bytes | None  # the whole page; None when not asked for (encoding it is half the work)
    width: int
    height: int
    crop_png: bytes  # the part of the page around the highlight, so it is in view
    crop: Box  # where that part lies on the whole page, in pixels
    rects: tuple[Box, ...]  # highlighted pixel rectangles on the whole page
    pdf_rects: tuple[Box, ...]  # the same in page coordinates (as PyMuPDF's text extraction)
    strong_rects: tuple[Box, ...] = ()  # pixel rectangles of the support spans, painted darker


def _paint(pix: pymupdf.Pixmap, rects: Sequence[Box], strong: Sequence[Box] = ()) -> np.ndarray:
    """The page's pixels with the rectangles marked once each, even where they overlap; the
    `strong` ones in the darker colour instead."""
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    image = image[:, :, :3].copy()
    mask = np.zeros(image.shape[:2], dtype=bool)
    for x0, y0, x1, y1 in rects:
        mask[int(y0) : int(y1), int(x0) : int(x1)] = True
    dark = np.zeros(image.shape[:2], dtype=bool)
    for x0, y0, x1, y1 in strong:
        dark[int(y0) : int(y1), int(x0) : int(x1)] = True
    mask &= ~dark
    image[mask] = (image[mask] * HIGHLIGHT).astype(np.uint8)
    image[dark] = (image[dark] * STRONG).astype(np.uint8)
    return image


def _png(image: np.ndarray) -> bytes:
    h, w, _ = image.shape
    return pymupdf.Pixmap(pymupdf.csRGB, w, h, np.ascontiguousarray(image).tobytes(), 0).tobytes(
        "png"
    )


def _span(lo: float, hi: float, want: float, limit: int) -> tuple[int, int]:
    """An interval of length `want` (at most `limit`) centred on [lo, hi], inside [0, limit]."""
    want = min(max(hi - lo, want), limit)
    start = max(0.0, min((lo + hi - want) / 2, limit - want))
    return int(start), int(min(limit, start + want))


def _crop_box(rects: Sequence[Box], width: int, height: int) -> Box:
    """The highlight with a margin, and at least half the page wide and a third high."""
    if not rects:
        return (0, 0, width, height)
    margin = max(width, height) // 20
    x0, x1 = _span(
        min(r[0] for r in rects) - margin, max(r[2] for r in rects) + margin, width / 2, width
    )
    y0, y1 = _span(
        min(r[1] for r in rects) - margin, max(r[3] for r in rects) + margin, height / 3, height
    )
    return (x0, y0, x1, y1)


def render_page(
    doc: pymupdf.Document,
    key: str,
    page_no: int,
    stored: str,
    start: int,
    end: int,
    zoom: float,
    whole_page: bool = True,
    strong: Sequence[tuple[int, int]] = (),
    glyphs: PageGlyphs | None = None,
) -> PageImage:
    """Page `page_no` (1-based) with `stored[start:end]` highlighted, `stored` being its text,
    and each `strong` range of `stored` highlighted more strongly.

    `glyphs` are the page's boxes when they do not come from its text layer (a page read by OCR).
    """
    page = doc.load_page(page_no - 1)
    if glyphs is None:
        glyphs = _GLYPHS.get((key, page_no, True), lambda: page_glyphs(page))
        if glyphs.text != stored:  # a source imported before tables were read row by row
            glyphs = _GLYPHS.get((key, page_no, False), lambda: page_glyphs(page, False))
    if glyphs.text != stored:
        raise PageMismatch(_mismatch(page_no, "it reads differently now than when imported"))
    pix = _PIXMAPS.get(
        (key, page_no, zoom),
        lambda: page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False),
    )
    pdf_rects = glyphs.rects(start, end)
    rects = [_pixel_box(r, page, zoom, pix.width, pix.height) for r in pdf_rects]
    rects = [r for r in rects if r[2] > r[0] and r[3] > r[1]]
    strong_rects = [
        r
        for a, b in strong
        for r in (_pixel_box(box, page, zoom, pix.width, pix.height) for box in glyphs.rects(a, b))
        if r[2] > r[0] and r[3] > r[1]
    ]
    image = _paint(pix, rects, strong_rects)
    crop = _crop_box(rects, pix.width, pix.height)
    return PageImage(
        page=page_no,
        png=_png(image) if whole_page else None,
        width=pix.width,
        height=pix.height,
        crop_png=_png(image[crop[1] : crop[3], crop[0] : crop[2]]),
        crop=crop,
        rects=tuple(rects),
        pdf_rects=tuple(pdf_rects),
        strong_rects=tuple(strong_rects),
    )


def passage_pages(
    store: Store,
    document_id: int,
    start: int,
    end: int,
    *,
    zoom: float = DEFAULT_ZOOM,
    password: str | None = None,
    whole_page: bool = True,
    spans: Sequence[tuple[int, int]] = (),
) -> list[PageImage]:
    """Every page that `text[start:end]` of a PDF document touches, with those glyphs painted.

    With `whole_page` False only the crop around the highlight is encoded as PNG. Each of
    `spans` (document offsets, support spans inside the passage) is painted more strongly.

    Raises NotFound (no such document, not a PDF, original gone), PasswordRequired (encrypted
    PDF without its password) or PageMismatch (the page no longer reads as the stored text).
    """
    if not MIN_ZOOM <= zoom <= MAX_ZOOM:
        raise KnowNoteError(f"Zoom {zoom:g} is out of range: use {MIN_ZOOM:g} to {MAX_ZOOM:g}.")
    document = store.document(document_id)
    path = _original(store, document)
    text = store.document_text(document_id)
    if not 0 <= start <= end <= len(text):
        raise NotFound(f"Characters {start:,}–{end:,} are outside {document.title}.")
    pages = [p for p in store.pages(document_id) if p.start < end and start < p.end]
    opener = _open if document.kind == "pdf" else _image_opener({p.number for p in pages})
    with _LOCK, opener(path, document.title, password) as doc:
        images = []
        for p in pages:
            lo, hi = max(start, p.start) - p.start, min(end, p.end) - p.start
            if text[p.start + lo : p.start + hi].strip():
                stored = text[p.start : p.end]
                strong = [
                    (max(a, p.start) - p.start, min(b, p.end) - p.start)
                    for a, b in spans
                    if a < min(end, p.end) and max(start, p.start) < b
                ]
                glyphs = _ocr_glyphs(store.ocr_page(document_id, p.number), stored)
                images.append(
                    render_page(
                        doc,
                        document.sha256,
                        p.number,
                        stored,
                        lo,
                        hi,
                        zoom,
                        whole_page,
                        strong,
                        glyphs,
                    )
                )
    return images


def _ocr_glyphs(ocr: OcrPage | None, stored: str) -> PageGlyphs | None:
    """The boxes of a page read by OCR, checked to be one per character of its stored text."""
    if ocr is None:
        return None
    if len(ocr.boxes) != len(stored) or len(ocr.lines) != len(stored):
        raise PageMismatch(
            f"Page {ocr.number} cannot be highlighted exactly: its OCR boxes do not match its "
            "text. The extracted text above is still exact."
        )
    boxes = tuple(
        None if np.isnan(b[0]) else (float(b[0]), float(b[1]), float(b[2]), float(b[3]))
        for b in ocr.boxes
    )
    return PageGlyphs(stored, boxes, tuple(int(n) for n in ocr.lines))


def _image_opener(wanted: set[int]) -> Callable[[Path, str, str | None], pymupdf.Document]:
    """Opens an image source as a PDF of its frames (only `wanted` pages are drawn)."""

    def open_image(path: Path, name: str, password: str | None) -> pymupdf.Document:
        from knownote.read.scans import image_document  # here: loads Pillow only for image sources

        try:
            data = path.read_bytes()
        except OSError:
            raise NotFound(f"The original file of {name} cannot be opened any more.") from None
        return image_document(data, name, OcrLimits(), wanted)

    return open_image


def _original(store: Store, document: Document) -> Path:
    if document.kind not in ("pdf", "image"):
        raise NotFound(f"{document.title} is not a PDF, so it has no pages to show.")
    path = store.file_path(document.sha256)
    if path is None or not path.exists():
        raise NotFound(
            f"The original file of {document.title} is not kept, so no page can be shown."
        )
    return path
