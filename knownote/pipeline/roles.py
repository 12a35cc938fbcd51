"""Roles for documents imported before they were read (migration m028), or by older rules.

`rebuild_roles(store, document_id)` reads a stored document's roles again, as `headings.py`
reads its headings: from the kept original file, never changing the text or any offset. A PDF's
roles are read on its stored page texts, so pages read by OCR are never read again. Where the
file is gone or no longer gives the stored text, the document still gets the roles its text
shows (reference sections after their heading), so it is not read again and again. Pages read
by OCR get the layout model's roles from their image and their stored boxes (the OCR is not run
again).
"""

from __future__ import annotations

from dataclasses import replace

import pymupdf

from knownote.errors import KnowNoteError, NotFound
from knownote.pipeline.headings import NO_OCR, read_stored_pdf
from knownote.read.extract import extract
from knownote.read.extracted import Page
from knownote.read.pdf import stored_pdf_roles
from knownote.read.roles import LAYOUT_LATER, RoleRange, document_roles
from knownote.read.timelimit import extract_with_time_limit
from knownote.settings import Settings
from knownote.store.db import Document, Store

NOT_READ_AGAIN = ("image", "audio", "video")  # OCR and transcripts are too dear to redo here


def rebuild_roles(store: Store, document_id: int, settings: Settings | None = None) -> int:
    """Read and store a document's roles; returns how many ranges it has. A PDF imported with
    its page layouts left for later is read again as its import read it (`_layouts`)."""
    document = store.document(document_id)
    text = store.document_text(document_id)
    if document.roles_read == LAYOUT_LATER:
        found = _layouts(store, document, text, settings or Settings())
        # Not read again (damaged since, or it stopped the reader): the rules' roles stay.
        roles = store.roles(document_id) if found is None else None
    else:
        found = _found(store, document_id, document.kind, document.sha256, document.filename, text)
        roles = None
    if roles is None:
        roles = document_roles(text, store.headings(document_id), found or ())
    store.replace_roles(document_id, roles)
    return len(roles)


def read_missing_roles(
    store: Store, limit: int = 1_000_000, settings: Settings | None = None
) -> int:
    """Read the roles of up to `limit` documents that lack them; returns how many. Documents
    deleted meanwhile are passed over."""
    done = 0
    for document_id in store.documents_without_roles(limit):
        try:
            rebuild_roles(store, document_id, settings)
        except NotFound:
            continue
        done += 1
    return done


def _layouts(
    store: Store, document: Document, text: str, settings: Settings
) -> tuple[RoleRange, ...] | None:
    """The roles of a PDF imported with its layouts left for later, read again whole with the
    layout model by a reader under the time limit, as an import reads a file: that model renders
    pages, and the kept file is still the user's. Its pages read by OCR are given their stored
    text and boxes instead of being read again. None when it cannot be read so or no longer
    gives the stored text."""
    path = store.file_path(document.sha256)
    if path is None or not path.exists():
        return None
    pages = {p.number: p for p in store.pages(document.id)}
    before = []
    for number in store.ocr_page_numbers(document.id):
        page, boxes = pages.get(number), store.ocr_page(document.id, number)
        if page is None or boxes is None:
            return None
        before.append((text[page.start : page.end], boxes))
    try:
        extracted = extract_with_time_limit(
            path.read_bytes(),
            document.filename,
            max_chars=settings.max_text_chars,
            max_pages=settings.max_pages,
            seconds=settings.max_extract_seconds,
            ocr=replace(NO_OCR, before=tuple(before)),
        )
    except KnowNoteError:
        return None
    return extracted.roles if extracted.text == text else None


def _found(
    store: Store, document_id: int, kind: str, sha256: str, filename: str, text: str
) -> tuple[RoleRange, ...] | None:
    """What the document's reader finds in its file, or None when it cannot be read again."""
    if kind in NOT_READ_AGAIN:
        return None
    path = store.file_path(sha256)
    if path is None or not path.exists():
        return None
    data = path.read_bytes()
    if kind == "pdf":

        def roles(
            doc: pymupdf.Document, pages: tuple[Page, ...], texts: list[str], ocr: set[int]
        ) -> tuple[RoleRange, ...]:
            # the boxes of its pages read by OCR: the layout model reads those from their image
            read = [store.ocr_page(document_id, index + 1) for index in sorted(ocr)]
            scanned = [p for p in read if p is not None]
            return stored_pdf_roles(doc, pages, texts, ocr, ocr_pages=scanned)

        return read_stored_pdf(store, document_id, text, data, roles)
    try:
        extracted = extract(data, filename, ocr=NO_OCR, main_content=kind == "web")
    except KnowNoteError:
        return None
    return extracted.roles if extracted.text == text else None
