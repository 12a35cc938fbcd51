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

import pymupdf

from knownote.errors import KnowNoteError, NotFound
from knownote.pipeline.headings import NO_OCR, read_stored_pdf
from knownote.read.extract import extract
from knownote.read.extracted import Page
from knownote.read.pdf import stored_pdf_roles
from knownote.read.roles import RoleRange, document_roles
from knownote.store.db import Store

NOT_READ_AGAIN = ("image", "audio", "video")  # OCR and transcripts are too dear to redo here


def rebuild_roles(store: Store, document_id: int) -> int:
    """Read and store a document's roles; returns how many ranges it has."""
    document = store.document(document_id)
    text = store.document_text(document_id)
    found = _found(store, document_id, document.kind, document.sha256, document.filename, text)
    roles = document_roles(text, store.headings(document_id), found or ())
    store.replace_roles(document_id, roles)
    return len(roles)


def read_missing_roles(store: Store, limit: int = 1_000_000) -> int:
    """Read the roles of up to `limit` documents that lack them; returns how many. Documents
    deleted meanwhile are passed over."""
    done = 0
    for document_id in store.documents_without_roles(limit):
        try:
            rebuild_roles(store, document_id)
        except NotFound:
            continue
        done += 1
    return done


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
