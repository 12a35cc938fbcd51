"""A page read by OCR gets its roles from the page image: the layout model reads it with its OCR
lines as an invisible layer, and its regions are ranges of the text as it was read."""

from __future__ import annotations

import numpy as np
import pymupdf

from knownote.read.extract import extract
from knownote.read.extracted import OcrPage
from knownote.read.pdf import join_pages
from knownote.read.pdf_roles import find_roles
from knownote.read.roles import RoleRange, Roles, normalise
from knownote.read.scan_roles import layered_page, ocr_lines
from tests.conftest import corpus_file
from tests.read.test_pdf_roles import chinese_paper


def as_scan(doc: pymupdf.Document) -> tuple[pymupdf.Document, list[str], list[OcrPage]]:
    """Each page as a scan (its picture alone) and what a faultless OCR engine reads on it: its
    lines' characters with their boxes, a line of text each."""
    scan, texts, read = pymupdf.open(), [], []
    for page in doc:
        copy = scan.new_page(width=page.rect.width, height=page.rect.height)
        copy.insert_image(copy.rect, pixmap=page.get_pixmap(dpi=100))
        chars, boxes, numbers = [], [], []
        lines = [ln for b in page.get_text("rawdict")["blocks"] for ln in b.get("lines", ())]
        for number, line in enumerate(ln for ln in lines if ln["dir"][0] > 0.99):
            for c in [c for s in line["spans"] for c in s["chars"]] + [{"c": "\n", "bbox": None}]:
                chars.append(c["c"])
                boxes.append(c["bbox"] or (np.nan,) * 4)
                numbers.append(number)
        texts.append("".join(chars))
        boxes_array = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        read.append(OcrPage(page.number + 1, boxes_array, np.asarray(numbers, dtype=np.int32)))
    return scan, texts, read


def model_roles(scan: pymupdf.Document, texts: list[str], read: list[OcrPage]) -> list[RoleRange]:
    """The roles found on the scan's pages, all read by OCR (the layout model on every page)."""
    text, pages = join_pages(texts)
    ocr = set(range(len(texts)))
    lines = [[] for _ in texts]
    found = find_roles(scan, pages, texts, lines, ocr, "all", ocr_pages=read)
    return list(normalise(found.chosen, len(text)))


def test_a_scanned_table_and_its_caption_get_their_roles():
    with pymupdf.open(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")) as doc:
        doc.select([3])
        scan, texts, read = as_scan(doc)
    text, _ = join_pages(texts)
    roles = model_roles(scan, texts, read)
    assert all(0 <= r.start < r.end <= len(text) for r in roles)
    found = Roles(roles)
    assert found.at(text.index("79,168")) == "table"
    assert found.at(text.index("Number of questions in each QA dataset")) == "caption"
    assert found.at(text.index("The trick of in-batch negatives")) == "body"


def test_a_chinese_scans_text_is_in_its_layer_and_its_running_head_and_number_found():
    with pymupdf.open(stream=chinese_paper(), filetype="pdf") as doc:
        doc.select([1])
        scan, texts, read = as_scan(doc)
    lines = ocr_lines(texts[0], read[0])
    assert texts[0][lines[0].start : lines[0].end] == "中文信息学报 第三十卷"
    with layered_page(scan[0], texts[0], lines) as layered:
        assert "检索准确率随训练样本数" in layered[0].get_text()
    text, _ = join_pages(texts)
    found = Roles(model_roles(scan, texts, read))
    assert found.at(text.index("中文信息学报")) == "page_header"
    assert found.at(text.rindex("2")) == "page_footer"
    assert found.at(text.index("本文研究稠密向量检索")) == "body"


def test_an_image_file_gets_its_roles_as_a_scanned_page_does():
    with pymupdf.open(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")) as doc:
        png = doc[3].get_pixmap(dpi=150).tobytes("png")
    read = extract(png, "page.png")  # read by OCR
    found = Roles(normalise(read.roles, len(read.text)))
    assert found.at(read.text.index("79,168")) == "table"  # the rules alone find no table
    assert found.at(read.text.index("Number of questions in each QA")) == "caption"
