"""Tables read row by row, in born-digital PDFs and on scans; every passage an exact slice."""

from __future__ import annotations

import pymupdf

from knownote.index.split import split
from knownote.read.extract import OcrLimits, extract, pdf_page_text
from knownote.read.table_rows import CELL_SEPARATOR, reorder_rows
from tests.conftest import corpus_file


def test_the_credits_grid_reads_a_row_of_whole_names_a_line():
    text = pdf_page_text(pymupdf.open(corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf"))[0])
    lines = text.split("\n")
    assert "杨启光 · 陈光磊 · 陈学超 · 周小兵 · 赵金铭" in lines
    # a two-character name set to the width of three stays one cell
    assert "干红梅 · 于 珊 · 王 劼 · 刘潇潇 · 刘 慧" in lines
    assert not any(len(line) == 1 for line in lines)  # no name comes a character a line


def test_a_cell_of_running_text_stays_in_its_row():
    text = pdf_page_text(pymupdf.open(corpus_file("docs/pdf/cjk_ko_card_terms_tables.pdf"))[0])
    assert "온라인쇼핑몰 · 삼성카드 쇼핑, G마켓, 옥션, 11번가, 인터파크," in text.split("\n")
    assert "업종 · 적립 대상 · 업종 · 적립 대상" in text.split("\n")


def test_a_page_without_a_table_reads_as_mupdf_writes_it():
    doc = pymupdf.open(corpus_file("docs/pdf/paper_tam_review_sprouts.pdf"))
    for page in doc:
        raw = page.get_text("text", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES)
        assert CELL_SEPARATOR not in pdf_page_text(page) or CELL_SEPARATOR in raw


def test_columns_of_cells_become_rows_and_the_source_of_each_character_is_kept():
    # a reader that went column by column: three rows of three cells
    cells = [("2021", 0, 0), ("2022", 0, 1), ("2023", 0, 2), ("AA+", 1, 0), ("AA", 1, 1),
             ("A", 1, 2), ("稳定", 2, 0), ("负面", 2, 1), ("稳定", 2, 2)]  # fmt: skip
    text = "Ratings\n\n" + "\n".join(c for c, _, _ in cells) + "\n\nEnd of the table."
    boxes = [(0.0, 0.0, 600.0, 10.0), None]
    boxes += [
        (100.0 * col, 20.0 * row + 20, 100.0 * col + 40, 20.0 * row + 30) for _, col, row in cells
    ]
    boxes += [None, (0.0, 100.0, 400.0, 110.0)]
    got = reorder_rows(text, boxes)
    assert got is not None
    assert (
        got.text
        == "Ratings\n\n2021 · AA+ · 稳定\n2022 · AA · 负面\n2023 · A · 稳定\n\nEnd of the table."
    )
    assert len(got.source) == len(got.text)
    for ch, i in zip(got.text, got.source, strict=True):
        assert i == -1 or text[i] == ch


def test_two_text_columns_are_no_table():
    left = [f"line {i} of the left column, a long line of running text" for i in range(6)]
    right = [f"line {i} of the right column, a long line of running text" for i in range(6)]
    text = "\n".join(left + right)
    boxes = [(0.0, 12.0 * i, 290.0, 12.0 * i + 10) for i in range(6)]
    boxes += [(310.0, 12.0 * i, 600.0, 12.0 * i + 10) for i in range(6)]
    assert reorder_rows(text, boxes) is None


def test_a_scanned_table_reads_row_by_row_with_exact_passages():
    # the auditor letter's page 1 holds a table; its noisy layer makes it read by OCR
    data = corpus_file("docs/pdf/cjk_zh_scanned_ocr_auditor_letter.pdf").read_bytes()
    doc = pymupdf.open(stream=data)
    doc.select([0])
    extracted = extract(doc.tobytes(), "letter.pdf", ocr=OcrLimits(engine="rapidocr"))
    assert len(extracted.ocr_pages) == 1
    rows = [line for line in extracted.text.split("\n") if CELL_SEPARATOR in line]
    assert any(line.startswith("被担保 · 金融机构") for line in rows)
    assert any(line.startswith("神鹰集团 · 中信银行杭州分行") for line in rows)
    ocr = extracted.ocr_pages[0]
    assert len(ocr.boxes) == len(extracted.text)  # one box per character, separators with none
    for span in split(extracted.text):
        assert 0 <= span.start < span.end <= len(extracted.text)
