"""Headings for documents imported before they were recorded (migration m016), filled in place.

`rebuild_headings(store, document_id)` finds a stored document's headings again and stores them
with its passages' section paths, in one transaction, without touching the text, the passages or
their offsets. It needs what the import had: the text alone for Markdown, the kept original file
for the other formats (see `Store.save_file`). A PDF's headings are found on its stored page texts
(the outline, else the type of the text layer), so pages read by OCR are never read again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pymupdf

from knownote.errors import KnowNoteError
from knownote.read.extract import extract
from knownote.read.extracted import OcrLimits, Page
from knownote.read.markdown import markdown_headings
from knownote.read.pdf import pdf_headings_of, pdf_lines
from knownote.read.sections import Heading, section_paths
from knownote.store.db import Heading as StoredHeading
from knownote.store.db import Store

NO_OCR = OcrLimits(max_pages=0)
T = TypeVar("T")


def rebuild_headings(store: Store, document_id: int) -> int | None:
    """Find a stored document's headings and store them with its passages' section paths.

    Returns how many headings it found (0 for plain text and images, which have none), or None
    when they cannot be found: the original file is not kept, a PDF needs its password (which is
    never kept), or the file no longer gives exactly the stored text (another extractor version).
    Then nothing changes. Safe to call again: it replaces what an earlier call stored.
    """
    document = store.document(document_id)
    text = store.document_text(document_id)
    headings = _headings(store, document_id, document.kind, document.sha256, document.filename)
    if headings is None:
        return None
    starts = [p.start for p in store.passages(document_id)]
    sections = section_paths(text, headings, starts)
    stored = [StoredHeading(h.start, h.end, h.level) for h in headings]
    store.replace_headings(document_id, stored, sections)
    return len(headings)


def _headings(
    store: Store, document_id: int, kind: str, sha256: str, filename: str
) -> tuple[Heading, ...] | None:
    text = store.document_text(document_id)
    if kind == "md":
        return markdown_headings(text)
    if kind in ("txt", "image", "audio", "video"):  # recordings: never transcribed again here
        return ()
    path = store.file_path(sha256)
    if path is None or not path.exists():
        return None
    data = path.read_bytes()
    if kind == "pdf":
        return _pdf_headings(store, document_id, text, data)
    try:
        extracted = extract(data, filename, ocr=NO_OCR, main_content=kind == "web")
    except KnowNoteError:
        return None
    return extracted.headings if extracted.text == text else None


def _pdf_headings(
    store: Store, document_id: int, text: str, data: bytes
) -> tuple[Heading, ...] | None:
    def headings(
        doc: pymupdf.Document, pages: tuple[Page, ...], texts: list[str], ocr: set[int]
    ) -> tuple[Heading, ...]:
        return pdf_headings_of(doc, pages, texts, pdf_lines(doc, texts, ocr))

    return read_stored_pdf(store, document_id, text, data, headings)


def read_stored_pdf(
    store: Store,
    document_id: int,
    text: str,
    data: bytes,
    read: Callable[[pymupdf.Document, tuple[Page, ...], list[str], set[int]], T],
) -> T | None:
    """`read(doc, pages, page texts, 0-based pages read by OCR)` on a stored PDF's kept file and
    its stored page texts; None when the file does not open, needs its password or no longer
    has the stored pages."""
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.FileDataError:
        return None
    with doc:
        pages = tuple(Page(p.number, p.start, p.end) for p in store.pages(document_id))
        if doc.needs_pass or len(pages) != doc.page_count:
            return None
        texts = [text[p.start : p.end] for p in pages]
        ocr = {number - 1 for number in store.ocr_page_numbers(document_id)}
        return read(doc, pages, texts, ocr)
