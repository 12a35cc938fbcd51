"""Headings never change the text: every corpus file's extracted text is byte-identical to the
text recorded before headings were found (tests/read/corpus_text_sha256.json, made on main at commit
8deec4c with the same extraction: the text layer of PDFs, OCR off), and every heading is a range
of words in it. The PDFs' texts were recorded again when tables came to be read row by row
(issue 27), which changed 17 of them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from knownote.read.extract import OcrLimits, extract
from tests.conftest import DOCS
from tests.e2e.test_corpus import PASSWORDS

RECORDED = json.loads((Path(__file__).with_name("corpus_text_sha256.json")).read_text())
NO_OCR = OcrLimits(max_pages=0)  # OCR's text is its own (test_scans); the text layer is this one


@pytest.mark.skipif(not DOCS.is_dir(), reason=f"needs the shared corpus ({DOCS} is absent)")
@pytest.mark.parametrize("relative", sorted(RECORDED))
def test_the_extracted_text_is_byte_identical_and_headings_are_ranges_of_it(relative):
    path = DOCS / relative
    extracted = extract(path.read_bytes(), path.name, PASSWORDS.get(path.name), ocr=NO_OCR)
    assert hashlib.sha256(extracted.text.encode()).hexdigest() == RECORDED[relative]
    text = extracted.text
    for heading in extracted.headings:
        assert 0 <= heading.start < heading.end <= len(text) and heading.level >= 1
        words = text[heading.start : heading.end]
        assert words == words.strip() and words
    assert [h.start for h in extracted.headings] == sorted(h.start for h in extracted.headings)
