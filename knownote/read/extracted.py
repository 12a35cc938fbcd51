"""What extracting a file gives: the canonical text with its pages, title, warnings and headings."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from knownote.errors import FileTooLarge
from knownote.read.roles import RoleRange
from knownote.read.sections import Heading


@dataclass(frozen=True)
class OcrPage:
    """A page read by OCR: per character of its text, a box in page coordinates (NaN: none)."""

    number: int
    boxes: np.ndarray  # (n, 4) float32: x0, y0, x1, y1
    lines: np.ndarray  # (n,) int32: the recognised line each character belongs to


OcrProgress = Callable[[int, int], None]  # (pages read by OCR so far, pages to read)


@dataclass(frozen=True)
class OcrLimits:
    """How pages are read by OCR, and the limits that keep a hostile file bounded."""

    dpi: int = 200
    max_megapixels: int = 100
    max_pages: int = 200  # 0 switches OCR off
    threads: int = 2
    engine: str = "auto"  # "auto", "tesseract" or "rapidocr": see ocr.engine_for
    languages: str = "eng+chi_sim+jpn+kor"  # Tesseract's, "+"-joined (ocr.DEFAULT_LANGUAGES)
    force: bool = False  # every page of a PDF read by OCR ("Read again by OCR")
    # A PDF's pages read by OCR at its import (their text and boxes), taken as they were read:
    # its page layouts read after the import (knownote.pipeline.roles) never run OCR again.
    before: tuple[tuple[str, OcrPage], ...] = ()


@dataclass(frozen=True)
class Page:
    number: int  # 1-based page / slide / chapter number
    start: int  # str index into Extracted.text
    end: int  # exclusive; text[start:end] is that page's text


def page_of(page_starts: Sequence[int], pages: Sequence[Page], offset: int) -> int | None:
    """The number of the page whose range holds `offset` (or precedes it, in a separator);
    `page_starts` are the pages' starts in order."""
    if not pages:
        return None
    i = bisect.bisect_right(page_starts, offset) - 1
    return pages[max(i, 0)].number


@dataclass(frozen=True)
class Timed:
    """A stretch of a recording's transcript and when it was said (a word, usually)."""

    start: int  # str index into Extracted.text
    end: int
    seconds_start: float
    seconds_end: float


@dataclass(frozen=True)
class Extracted:
    text: str
    kind: str  # "pdf", "docx", "pptx", "epub", "html", "web", "txt", "md", "audio", "video"
    pages: tuple[Page, ...]  # empty for formats without pages (docx, html, txt, md)
    title: str | None
    warnings: tuple[str, ...]
    ocr_pages: tuple[OcrPage, ...] = field(default=())  # pages read by OCR, with their boxes
    headings: tuple[Heading, ...] = field(default=())  # in text order (see sections.py)
    times: tuple[Timed, ...] = field(default=())  # recordings: when each word was said
    roles: tuple[RoleRange, ...] = field(default=())  # what the reader knows (see roles.py)
    # a PDF whose roles are the rules' alone: the layout model reads its pages later
    layout_later: bool = False


def too_many_chars(name: str, max_chars: int) -> FileTooLarge:
    return FileTooLarge(
        f"{name} has more than {max_chars:,} characters of text, over the limit "
        "(setting max_text_chars). Split it into smaller files."
    )
