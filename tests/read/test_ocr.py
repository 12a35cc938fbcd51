"""OCR: reading order of recognised lines, the canonical page text with a box per character,
the noise measure for existing OCR layers, the choice of engine, and both real engines (RapidOCR,
and Tesseract where its program and language packs are installed) on rendered images."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont

from benchmarks.ocr import SETS, edit_distance, normal
from benchmarks.ocr_order import line_order, typeset_columns, typeset_table
from knownote.errors import KnowNoteError
from knownote.pipeline.ingest import ocr_limits
from knownote.read import tesseract
from knownote.read.extract import OcrLimits, clean_text, pdf_page_text
from knownote.read.ocr import (
    OcrLine,
    OcrText,
    engine_for,
    is_chinese,
    layer_noise,
    page_text,
    read_page,
    reading_order,
    recognise,
    suspect_token_share,
)
from knownote.read.scans import ocr_pdf_pages
from knownote.read.table_rows import CELL_SEPARATOR
from knownote.settings import Settings
from tests.conftest import corpus_file


def needs_tesseract(languages: str) -> pytest.MarkDecorator:
    have = tesseract.binary() is not None and all(
        lang in tesseract.installed_languages() for lang in languages.split("+")
    )
    return pytest.mark.skipif(
        not have,
        reason=f"needs Tesseract with {languages} (Debian tesseract-ocr and its language packs; "
        "scripts/setup installs them when run as root)",
    )


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


def assert_boxes_run_left_to_right(page) -> None:
    assert all(box is not None for box in page.boxes)  # every character, word spaces too
    assert all(a[2] <= b[0] + 0.01 for a, b in pairwise(page.boxes))


@needs_tesseract("eng")
def test_tesseract_reads_english_with_a_box_per_letter_and_word_space():
    page = read_page(rendered("The quick brown fox jumps"), "tesseract", "eng", dpi=150)
    assert page.text == "The quick brown fox jumps"
    assert_boxes_run_left_to_right(page)
    fox = page.text.index("fox")
    assert page.boxes[fox][0] > 0.5 * page.boxes[-1][2]


NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk


def drawn(text: str, face: int) -> np.ndarray:
    """A line of CJK text drawn in Noto Sans CJK (face 0: Japanese, 1: Korean) at 40 px."""
    if not NOTO_CJK.exists():
        pytest.skip(f"needs Debian's fonts-noto-cjk ({NOTO_CJK} is absent; .ci/run installs it)")
    font = ImageFont.truetype(str(NOTO_CJK), 40, index=face)
    image = Image.new("RGB", (1000, 160), "white")
    ImageDraw.Draw(image).text((24, 50), text, font=font, fill="black")
    return np.asarray(image)


@needs_tesseract("jpn")
def test_tesseract_reads_japanese_kana_and_kanji_with_a_box_per_character():
    text = "吾輩は猫である。名前はまだ無い。"
    page = read_page(drawn(text, 0), "tesseract", "jpn", dpi=150)
    assert page.text == text
    assert_boxes_run_left_to_right(page)


@needs_tesseract("kor")
def test_tesseract_reads_korean_with_a_box_per_syllable_and_word_space():
    text = "포인트 적립 혜택은 매출전표 기준"
    page = read_page(drawn(text, 1), "tesseract", "kor", dpi=150)
    assert page.text == text
    assert_boxes_run_left_to_right(page)


@needs_tesseract("eng")
def test_tesseract_english_error_rate_on_corpus_papers_at_300_dpi_is_under_2_percent():
    # the first page of each of the benchmark's three two-column papers, as an import reads it
    pages = [pymupdf.open(corpus_file(f"docs/pdf/{name}"))[0] for name in SETS["en"]]
    limits = OcrLimits(dpi=300, threads=2, engine="tesseract", languages="eng")
    errors = length = 0
    for page, read in zip(pages, ocr_pdf_pages(pages, limits, "papers"), strict=True):
        reference = normal(pdf_page_text(page), keep_spaces=False)
        errors += edit_distance(reference, normal(read[0], keep_spaces=False))
        length += len(reference)
    assert errors / length <= 0.02, f"CER {errors / length:.2%}"  # benchmark: about 1 %


def test_the_engine_setting_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("KNOWNOTE_OCR_ENGINE", "rapidocr")
    monkeypatch.setenv("KNOWNOTE_OCR_LANGUAGES", "eng+kor")
    limits = ocr_limits(Settings())
    assert (limits.engine, limits.languages) == ("rapidocr", "eng+kor")
    monkeypatch.setenv("KNOWNOTE_OCR_ENGINE", "abbyy")
    with pytest.raises(KnowNoteError, match="KNOWNOTE_OCR_ENGINE='abbyy'"):
        Settings()


@needs_tesseract("eng")
def test_auto_is_tesseract_when_installed_and_explicit_choices_are_kept():
    assert engine_for("auto", "eng+chi_sim") == "tesseract"
    assert engine_for("auto", "xyz") == "rapidocr"  # none of the languages is installed
    assert engine_for("rapidocr", "eng") == "rapidocr"
    with pytest.raises(KnowNoteError, match="not known"):
        engine_for("abbyy")


def test_without_tesseract_auto_is_rapidocr_and_asking_for_tesseract_says_what_to_do(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("PATH", str(tmp_path))  # no tesseract program on it
    assert engine_for("auto", "eng") == "rapidocr"
    page = read_page(rendered("The quick brown fox jumps"), "auto")
    assert page.text == "The quick brown fox jumps"
    with pytest.raises(tesseract.TesseractMissing, match="KNOWNOTE_OCR_ENGINE=rapidocr"):
        read_page(rendered("The quick brown fox jumps"), "tesseract")


def test_hocr_words_get_spaces_except_between_cjk_and_a_box_per_character():
    hocr = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><body><div class='ocr_page'>
<p class='ocr_par'><span class='ocr_line' title='bbox 10 10 200 30'>
 <span class='ocrx_word' title='bbox 10 10 50 30; x_wconf 90'>
  <span class='ocrx_cinfo' title='x_bboxes 10 12 30 28; x_conf 90'>猫</span>
  <span class='ocrx_cinfo' title='x_bboxes 30 12 50 28; x_conf 90'>で</span></span>
 <span class='ocrx_word' title='bbox 52 10 72 30; x_wconf 80'>
  <span class='ocrx_cinfo' title='x_bboxes 52 12 72 28; x_conf 80'>す</span></span>
 <span class='ocrx_word' title='bbox 90 10 130 30; x_wconf 70'>
  <span class='ocrx_cinfo' title='x_bboxes 90 30 90 30; x_conf 70'>O</span>
  <span class='ocrx_cinfo' title='x_bboxes 90 30 90 30; x_conf 70'>K</span></span>
</span></p></div></body></html>"""
    ((line,),) = tesseract.parse_hocr(hocr)
    text, box, chars, confidence = line
    assert text == "猫です OK" and box == (10, 10, 200, 30)
    assert chars[0] == (10, 10, 30, 30)  # the recogniser's columns over the line's height
    assert chars[3] == (72, 10, 90, 30)  # a word space: the gap between the words
    assert chars[4:] == ((90, 10, 110, 30), (110, 10, 130, 30))  # degenerate: word divided
    assert confidence == pytest.approx(0.8)
    ((line,),) = tesseract.parse_hocr(hocr, "猫ですOK\n")  # its plain text: no space
    assert line[0] == "猫ですOK"


@needs_tesseract("eng+chi_sim+jpn+kor")
def test_auto_reads_chinese_with_rapidocr_and_japanese_with_tesseract():
    chinese = rendered("财务报表审计意见", fontname="china-s", size=28)
    assert read_page(chinese, "auto").text == "财务报表审计意见"
    japanese = "吾輩は猫である。名前はまだ無い。"
    assert read_page(drawn(japanese, 0), "auto").text == japanese


def test_chinese_text_is_told_from_japanese_and_korean():
    assert is_chinese("财务报表审计意见")
    assert not is_chinese("吾輩は猫である。名前はまだ無い。")
    assert not is_chinese("포인트 적립 혜택은")
    assert not is_chinese("The quick brown fox")


@needs_tesseract("eng")
def test_pdf_pages_read_at_once_come_back_in_page_order():
    doc = pymupdf.open()
    words = ["Alpha harbour", "Bravo lighthouse", "Charlie anchor", "Delta beacon"]
    for word in words:
        doc.new_page(width=300, height=100).insert_text((20, 50), word, fontsize=20)
    limits = OcrLimits(dpi=150, threads=2, engine="tesseract", languages="eng")
    reads = list(ocr_pdf_pages(list(doc), limits, "words.pdf"))
    assert [read[0] for read in reads] == words
    assert [read[1].number for read in reads] == [1, 2, 3, 4]


@needs_tesseract("eng+chi_sim+jpn+kor")
def test_the_page_script_picks_its_installed_languages():
    every = "eng+chi_sim+jpn+kor+fra_not_installed"
    assert tesseract.languages_for("Latin", every) == "eng"
    assert tesseract.languages_for("Japanese", every) == "jpn"
    assert tesseract.languages_for("Korean", every) == "kor"
    assert tesseract.languages_for(None, every) == every  # unknown: all (installed) ones
    assert tesseract.mixed(every) and not tesseract.mixed("eng+fra_not_installed")


# ---------------------------------------------------------------- reading order of rendered pages


def _read_rendered(page: pymupdf.Page) -> OcrText:
    pix = page.get_pixmap(dpi=150, alpha=False, colorspace="rgb")
    image = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)
    return read_page(image, "auto", dpi=150)


@pytest.mark.parametrize(
    "columns, chinese", [(2, False), (4, True)], ids=["two columns, English", "four, Chinese"]
)
def test_a_rendered_page_of_columns_reads_one_column_after_the_other(columns, chinese):
    # Lines of every column share baselines; the Chinese columns are 10 characters wide, which
    # the table regrouping read across, row by row, before (order 0.00; benchmarks/ocr_order.py).
    page, truth = typeset_columns(columns, chinese)
    read = _read_rendered(page)
    share, found, lines = line_order(read.text, truth)
    assert found >= 0.8 * lines and share >= 0.95, (share, found, lines)
    assert CELL_SEPARATOR not in read.text
    # each character keeps its box: the first line's characters lie in the first column
    first = truth.split("\n")[0][:4]
    at = read.text.index(first)
    assert all(
        b is not None and b[2] < page.rect.width / columns * 150 / 72
        for b in read.boxes[at : at + 4]
    )
    assert len(read.boxes) == len(read.lines) == len(read.text)


@pytest.mark.parametrize("chinese", [False, True], ids=["English", "Chinese"])
def test_a_rendered_table_page_reads_row_by_row(chinese):
    page, truth = typeset_table(chinese)
    read = _read_rendered(page)
    share, found, lines = line_order(read.text, truth)
    assert found >= 0.8 * lines and share >= 0.95, (share, found, lines)
    assert read.text.count(CELL_SEPARATOR) >= 0.8 * truth.count(CELL_SEPARATOR)


def test_garbage_layers_are_told_from_ocr_text():
    assert layer_noise("«POAH «3E*»CM The memo of 3 May was typed").garbled  # symbols
    assert layer_noise("æˆªè‡³2015å¹´12æœˆ31æ—¥ï¼Œç¥žé¹°é›†å›¢").garbled  # mojibake
    broken = "T h e sur vey te am mea sur ed t h e ti des a t t h e nor th ern p iers " * 2
    assert layer_noise(broken).garbled
    flipped = "The SurvEy teAm measUred thE tides aT the norThern piErs twicE daiLy " * 2
    assert layer_noise(flipped).garbled
    plain = "The survey team measured the tides at the northern piers twice daily. " * 3
    assert not layer_noise(plain).garbled
    assert not layer_noise(
        "截至2015年12月31日，神鹰集团在该担保项下实际融资余额为1.57亿元。"
    ).garbled
