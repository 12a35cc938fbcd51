"""File bytes -> canonical text, page ranges and warnings: the one entry point, `extract`.

The text returned here is the canonical text of a document: every offset in the system indexes
exactly this string, so all cleaning happens at extraction and nowhere later (the rules are in
canonical.py). Pages are cleaned one by one and joined with "\\n\\n"; the separator belongs to
no page. What a file is comes from sniff.py; each format has its reader (read_*.py).
"""

from __future__ import annotations

import zipfile
from typing import TYPE_CHECKING

from knownote.errors import NoTextLayer
from knownote.read.audio import SpeechOptions, transcribe
from knownote.read.canonical import PAGE_SEPARATOR, clean_text, good_title, locate_headings
from knownote.read.extracted import Extracted, OcrLimits, OcrProgress, Page, too_many_chars
from knownote.read.markdown import markdown_headings, markdown_roles, markdown_title
from knownote.read.roles import RoleRange, carry_over, reader_roles
from knownote.read.sections import Heading
from knownote.read.sniff import SUPPORTED, Decoded, detect_kind, display_name, sniff
from knownote.read.zipcheck import check_zip

# The readers of PDFs, office files, EPUBs and HTML load with their first file (PyMuPDF and its
# layout model alone take a second or more): text and Markdown are read without waiting for them,
# and the reader server loads them in turn (`timelimit.READERS`).
if TYPE_CHECKING:
    from knownote.read.pdf import (
        PDF_TEXT_FLAGS,
        ocr_warning,
        pdf_page_text,
        pdf_pages_to_ocr,
    )

_FROM_PDF = ("PDF_TEXT_FLAGS", "ocr_warning", "pdf_page_text", "pdf_pages_to_ocr")


def __getattr__(name: str) -> object:
    if name in _FROM_PDF:
        from knownote.read import pdf

        return getattr(pdf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PAGE_SEPARATOR",
    "PDF_TEXT_FLAGS",
    "SUPPORTED",
    "Extracted",
    "OcrLimits",
    "OcrProgress",
    "Page",
    "clean_text",
    "detect_kind",
    "extract",
    "ocr_warning",
    "pdf_page_text",
    "pdf_pages_to_ocr",
]


def extract(
    data: bytes,
    filename: str,
    password: str | None = None,
    *,
    max_chars: int = 20_000_000,
    max_pages: int = 5000,
    ocr: OcrLimits | None = None,
    progress: OcrProgress | None = None,
    main_content: bool = False,
    speech: SpeechOptions | None = None,
    layout: bool = True,
) -> Extracted:
    """Canonical text, page ranges, title and warnings of one file; KnowNoteError if it can't.

    Pages without a text layer (or with a noisy OCR layer) and image files are read by OCR
    within the `ocr` limits; `progress(done, total)` is called per page read so, and per minute
    of a recording transcribed (with `speech`). With `main_content` (a fetched web page), an
    HTML page is read for its main content only (kind "web"). Without `layout`, a PDF's page
    layouts are left for later (`extract_pdf`).
    """
    name = display_name(filename)
    kind, payload = sniff(data, name)
    ocr = ocr or OcrLimits()
    if kind == "pdf":
        from knownote.read.pdf import extract_pdf

        result = extract_pdf(data, name, password, max_chars, max_pages, ocr, progress, layout)
    elif kind == "image":
        from knownote.read.pdf import extract_image

        result = extract_image(data, name, max_chars, ocr, progress)
    elif kind == "recording":
        result = transcribe(data, name, speech, progress)
    elif isinstance(payload, zipfile.ZipFile):
        check_zip(payload, data, name, max_chars)
        if kind == "docx":
            from knownote.read.office import extract_docx

            result = extract_docx(data, name)
        elif kind == "pptx":
            from knownote.read.office import extract_pptx

            result = extract_pptx(data, name, max_pages)
        else:
            from knownote.read.epub import extract_epub

            result = extract_epub(payload, name, max_pages)
    else:
        assert isinstance(payload, Decoded)
        if len(payload.text) > 4 * max_chars:  # markup or not, this cannot end up under the limit
            raise too_many_chars(name, max_chars)
        headings: tuple[Heading, ...] = ()
        roles: tuple[RoleRange, ...] = ()
        if kind == "html":
            from knownote.read.html import read_html
            from knownote.read.web import read_web_page

            read = (read_web_page if main_content else read_html)(
                payload.text, xml_first=payload.text.lstrip().startswith("<?xml")
            )
            kind = "web" if main_content else kind
            text, title = clean_text(read.text), good_title(read.title)
            headings = tuple(locate_headings(text, read.headings))
            roles = reader_roles(text, headings, carry_over(read.text, text, read.roles))
        elif kind == "md":
            text = clean_text(payload.text)
            title, headings = markdown_title(text), markdown_headings(text)
            roles = reader_roles(text, headings, markdown_roles(text))
        else:  # plain text shows no structure but the lines that title references or contents
            text, title = clean_text(payload.text), None
            roles = reader_roles(text, (), ())
        result = Extracted(text, kind, (), title, payload.warnings, headings=headings, roles=roles)
    if len(result.text) > max_chars:
        raise too_many_chars(name, max_chars)
    if not result.text.strip():
        raise NoTextLayer(f"{name} contains no text to import.")
    return result
