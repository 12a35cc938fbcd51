"""OCR: reading order of recognised lines, the canonical page text with a box per character,
the noise measure for existing OCR layers, and the real engine on small rendered images."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pymupdf

from knownote.extract import clean_text
from knownote.ocr import OcrLine, page_text, reading_order, recognise, suspect_token_share


def line(text: str, x0: float, y0: float, x1: float, y1: float) -> OcrLine:
    step = (x1 - x0) / len(text)
    chars = tuple(
        None if c.isspace() else (x0 + i * step, y0, x0 + (i + 1) * step, y1)
        for i, c in enumerate(text)
    )
    return OcrLine(text, (x0, y0, x1, y1), chars, 0.99)


def texts(blocks: list[list[OcrLine]]) -> list[list[str]]:
    return [[ln.text for ln in block] for block in blocks]


def test_two_columns_are_read_column_by_column_even_when_their_lines_share_baselines():
    lines = [
        line("left one", 0, 0, 90, 10),
        line("right one", 120, 0, 210, 10),
        line("left two", 0, 14, 90, 24),
        line("right two", 120, 14, 210, 24),
    ]
    assert texts(reading_order(lines)) == [["left one", "left two"], ["right one", "right two"]]


def test_columns_stay_whole_across_a_paragraph_break_in_one_of_them_and_a_narrow_gutter():
    # The right column has a line where the left one has a blank (a paragraph break), and the
    # gutter (6) is narrower than a line is high (10).
    lines = [
        line("a1", 0, 0, 97, 10),
        line("b1", 103, 2, 200, 12),
        line("b2", 103, 16, 200, 26),
        line("a2", 0, 30, 97, 40),
        line("b3", 103, 32, 200, 42),
    ]
    assert texts(reading_order(lines)) == [["a1", "a2"], ["b1", "b2", "b3"]]


def test_a_title_across_both_columns_comes_first_then_each_column():
    lines = [
        line("b1", 120, 30, 210, 40),
        line("Title over all", 20, 0, 190, 12),
        line("a1", 0, 30, 90, 40),
        line("a2", 0, 44, 90, 54),
        line("b2", 120, 44, 210, 54),
    ]
    assert texts(reading_order(lines)) == [["Title over all"], ["a1", "a2"], ["b1", "b2"]]


def test_single_column_lines_are_one_block_top_to_bottom():
    lines = [line("second", 0, 14, 80, 24), line("first", 0, 0, 60, 10)]
    assert texts(reading_order(lines)) == [["first", "second"]]


def test_page_text_is_canonical_and_has_a_box_for_every_inked_character():
    lines = [
        line("  left one ", 0, 0, 90, 10),
        line("right one", 120, 0, 210, 10),
        line("left two", 0, 14, 90, 24),
    ]
    page = page_text(lines)
    assert page.text == "left one\nleft two\n\nright one"
    assert clean_text(page.text) == page.text
    assert len(page.boxes) == len(page.lines) == len(page.text)
    for ch, box in zip(page.text, page.boxes, strict=True):
        assert (box is None) == ch.isspace()
    first = page.text.index("right")
    assert page.boxes[first][0] == 120


def test_suspect_tokens_flag_digits_read_as_letters_but_not_ordinary_numbers():
    assert suspect_token_share("ZOq5年 20I5 年 2016 年") == 2 / 3
    assert suspect_token_share("in 2015 the 3 firms paid 1,200.50 and H2O v1.2") == 0.0
    assert suspect_token_share("no digits at all") == 0.0


def rendered(text: str, fontname: str = "helv", size: int = 22) -> np.ndarray:
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=90)
    page.insert_text((12, 50), text, fontname=fontname, fontsize=size)
    pix = page.get_pixmap(dpi=150, alpha=False)
    return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)


def test_the_engine_reads_english_with_word_spaces_and_a_box_per_letter():
    lines = recognise(rendered("The quick brown fox jumps"))
    page = page_text(lines)
    assert page.text == "The quick brown fox jumps"
    assert all(box is not None for box in page.boxes)  # letters, and the gaps between words
    boxes = [b for b in page.boxes if b is not None]
    assert all(a[2] <= b[0] + 0.01 for a, b in pairwise(boxes))  # left to right, no overlap
    fox = page.text.index("fox")
    assert boxes[fox][0] > 0.5 * boxes[-1][2]  # "fox" is in the right half of the line


def test_the_engine_reads_chinese():
    page = page_text(recognise(rendered("财务报表审计意见", fontname="china-s", size=28)))
    assert page.text == "财务报表审计意见"
    assert all(box is not None for box in page.boxes)
