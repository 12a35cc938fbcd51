"""The roles of a page read by OCR, from its page image: PyMuPDF's layout model reads it as it
reads a born-digital page.

The model reads a page's text boxes and its picture. A scan has no text layer, so the page is
copied into a PDF of its own, with each line the OCR engine read written at its box in invisible
text (render mode 3, as OCR layers are): the model then labels its regions (tables, captions,
footnotes, page heads and feet, …), and each region is mapped to the OCR lines in it, ranges of
the page's text as it was read. The text and its offsets stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pymupdf

from knownote.read.extracted import OcrPage
from knownote.read.pdf_headings import Line

MIN_HEIGHT = 2.0  # points: a line's box lower than this is a speck, not a line of text
_CJK_FONT = "china-s"  # MuPDF's own CJK font: any CJK character has a glyph in it
_LATIN_FONT = "helv"


def ocr_lines(text: str, page: OcrPage) -> list[Line]:
    """The lines the OCR engine read on a page, as ranges of the page's text (white space at
    their edges left out) with their boxes in page coordinates; a line of no box is left out.
    No line when the boxes are not this text's (one a character)."""
    found = []
    ids = page.lines
    if not len(ids) or len(ids) != len(text) or len(page.boxes) != len(text):
        return []
    cuts = np.flatnonzero(np.diff(ids)) + 1
    for start, end in zip(np.r_[0, cuts], np.r_[cuts, len(ids)], strict=True):
        part = text[start:end]
        start, end = start + len(part) - len(part.lstrip()), end - (len(part) - len(part.rstrip()))
        boxes = page.boxes[start:end]
        boxes = boxes[~np.isnan(boxes[:, 0])]
        if start >= end or not len(boxes):
            continue
        box = (
            float(boxes[:, 0].min()),
            float(boxes[:, 1].min()),
            float(boxes[:, 2].max()),
            float(boxes[:, 3].max()),
        )
        if box[3] - box[1] < MIN_HEIGHT:
            continue
        size = round((box[3] - box[1]) * 2) / 2
        found.append(Line(int(start), int(end), size, False, int(ids[start]), False, "", box))
    return found


def layered_page(source: pymupdf.Page, text: str, lines: Sequence[Line]) -> pymupdf.Document:
    """A one-page PDF: `source` (the scanned page) with its OCR lines written over it in
    invisible text, each stretched to its box."""
    doc = pymupdf.open()
    doc.insert_pdf(source.parent, from_page=source.number, to_page=source.number)
    page = doc[0]
    # boxes are in unrotated page points; the copy is drawn unrotated so that they fall in place
    page.set_rotation(0)
    for line in lines:
        words = " ".join(text[line.start : line.end].split())
        x0, y0, x1, y1 = line.box
        height = y1 - y0
        font = _CJK_FONT if any(ord(ch) > 0x2E80 for ch in words) else _LATIN_FONT
        size = 0.8 * height
        width = pymupdf.get_text_length(words, fontname=font, fontsize=size) or 1.0
        stretch = pymupdf.Matrix((x1 - x0) / width, 1)
        at = pymupdf.Point(x0, y1 - 0.2 * height)
        page.insert_text(
            at, words, fontname=font, fontsize=size, render_mode=3, morph=(at, stretch)
        )
    return doc
