from __future__ import annotations

import pymupdf
import pytest

from knownote.read.extracted import Extracted, OcrLimits
from knownote.read.pdf import extract_pdf, stored_pdf_roles
from knownote.read.pdf_roles import MODEL_SWITCH
from knownote.read.roles import BODY, ROLES, Roles
from tests.conftest import corpus_file

DPR = "docs/pdf/paper_dpr_2004.04906_2col.pdf"
BOOK = "docs/pdf/book_free_culture_lessig_352p.pdf"
NO_OCR = OcrLimits(max_pages=0)


def pages_of(relative: str, pages: list[int]) -> bytes:
    """Some pages of a corpus PDF, as a PDF of their own (a test reads only what it needs)."""
    with pymupdf.open(corpus_file(relative)) as doc:
        doc.select(pages)
        return doc.tobytes()


def read(data: bytes, name: str = "test.pdf") -> Extracted:
    return extract_pdf(data, name, None, 10**7, 1000, NO_OCR, None)


def role_of(extracted: Extracted, words: str) -> str:
    at = extracted.text.find(words)
    assert at >= 0, words
    return Roles(extracted.roles).at(at + len(words) // 2)


@pytest.fixture(scope="module")
def dpr() -> Extracted:
    """DPR's first page, the page of its Table 1 and the page where its references start."""
    return read(pages_of(DPR, [0, 3, 8]))


def test_every_role_is_a_range_of_the_text_in_order(dpr):
    at = 0
    for r in dpr.roles:
        assert at <= r.start < r.end <= len(dpr.text)
        assert r.role in ROLES and r.role != BODY
        at = r.end
    assert {r.role for r in dpr.roles} >= {"front_matter", "table", "reference", "heading"}


def test_the_roles_leave_the_text_as_it_was(dpr, monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")
    assert read(pages_of(DPR, [0, 3, 8])).text == dpr.text


def test_a_papers_authors_affiliations_and_addresses_are_front_matter(dpr):
    for words in ("Vladimir Karpukhin", "Facebook AI", "University of Washington", "@fb.com"):
        assert role_of(dpr, words) == "front_matter", words


def test_the_arxiv_stamp_in_the_margin_is_a_page_header(dpr):
    assert role_of(dpr, "arXiv:2004.04906v3") == "page_header"


def test_a_table_row_is_table_and_its_caption_caption(dpr):
    assert role_of(dpr, "Natural Questions · 79,168") == "table"
    assert role_of(dpr, "Number of questions in each QA dataset") == "caption"


def test_reference_entries_are_references(dpr):
    assert role_of(dpr, "Akari Asai, Kazuma Hashimoto") == "reference"
    assert role_of(dpr, "Jonathan Berant, Andrew Chou") == "reference"


def test_body_sentences_and_footnotes(dpr):
    assert role_of(dpr, "Open-domain question answering relies on") == BODY
    assert role_of(dpr, "is a task that answers factoid questions") == BODY
    assert role_of(dpr, "The code and trained models have been released") == "footnote"


def test_a_running_foot_repeated_on_pages_is_a_page_footer(monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")  # the rules alone
    book = read(pages_of(BOOK, [19, 20, 21, 22, 23, 24, 25]))
    assert role_of(book, "FREE CULTURE") == "page_footer"
    assert role_of(book, "free-culture.org/get-it") == "page_footer"
    assert role_of(book, "government agencies have been subject") == BODY


def chinese_paper() -> bytes:
    """Four pages of a Chinese paper: a running head and page numbers, a caption and references."""
    doc = pymupdf.open()
    body = "本文研究稠密向量检索在开放域问答中的作用，并与传统稀疏检索方法进行比较。"
    for number in range(1, 5):
        page = doc.new_page(width=420, height=600)
        page.insert_text((40, 30), "中文信息学报 第三十卷", fontname="china-s", fontsize=8)
        for row in range(12):  # each page's lines its own, but one
            line = body[:28] if row == 6 else (body * 2)[row + 5 * number :][:28]
            page.insert_text((40, 90 + 20 * row), line, fontname="china-s", fontsize=10)
        if number == 2:
            page.insert_text((40, 400), "图 1：检索准确率随训练样本数的变化", fontname="china-s")
        if number == 4:
            page.insert_text((40, 420), "参考文献", fontname="china-s", fontsize=14)
            page.insert_text(
                (40, 450), "[1] 张三，李四．稠密检索研究．计算机学报", fontname="china-s"
            )
        page.insert_text((200, 580), str(number), fontsize=8)
    return doc.tobytes()


def test_a_chinese_papers_head_page_numbers_caption_and_references(monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")
    paper = read(chinese_paper())
    assert role_of(paper, "中文信息学报") == "page_header"
    page_three = paper.pages[2]
    assert Roles(paper.roles).at(paper.text.rindex("3", 0, page_three.end)) == "page_footer"
    assert role_of(paper, "检索准确率随训练样本数") == "caption"
    assert role_of(paper, "张三，李四") == "reference"
    assert role_of(paper, "稠密向量检索在开放域") == BODY


def test_a_stored_pdf_gets_the_same_roles_again(monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")
    data = chinese_paper()
    paper = read(data)
    texts = [paper.text[p.start : p.end] for p in paper.pages]
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        assert stored_pdf_roles(doc, paper.pages, texts, set()) == paper.roles


def test_a_papers_text_layer_is_asked_of_mupdf_once_a_page_and_a_re_index_finds_its_roles(
    monkeypatch,
):
    """The table's rows and the sideways arXiv stamp are found as each page's text layer is read,
    not by asking MuPDF for those pages again; a re-index, which reads them again, finds the same
    roles."""
    monkeypatch.setenv(MODEL_SWITCH, "0")
    data = pages_of(DPR, [0, 3, 8])
    made: list[int] = []
    text_page = pymupdf.Page.get_textpage
    with monkeypatch.context() as counted:
        counted.setattr(
            pymupdf.Page,
            "get_textpage",
            lambda page, *a, **k: made.append(page.number) or text_page(page, *a, **k),
        )
        paper = read(data)
    assert sorted(made) == [0, 1, 2]
    assert role_of(paper, "Natural Questions · 79,168") == "table"
    assert role_of(paper, "arXiv:2004.04906v3") == "page_header"
    texts = [paper.text[p.start : p.end] for p in paper.pages]
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        assert stored_pdf_roles(doc, paper.pages, texts, set()) == paper.roles


def test_authors_in_bold_on_a_first_page_are_front_matter_not_headings(monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")
    paper = read(pages_of("docs/pdf/paper_molecular_explanations_preprint.pdf", [0, 1]))
    for words in ("Geemi P. Wellawatte", "University of Rochester", "andrew.white@rochester"):
        assert role_of(paper, words) == "front_matter", words
    assert role_of(paper, "Explanations of Molecular") == "heading"
    assert role_of(paper, "Chemists can be skeptical") == BODY


def test_an_appendix_after_a_papers_bibliography_is_not_a_reference(monkeypatch):
    monkeypatch.setenv(MODEL_SWITCH, "0")
    # the TAM review: its bibliography, found by its line alone, then its Appendix A
    paper = read(pages_of("docs/pdf/paper_tam_review_sprouts.pdf", [17, 21]))
    assert role_of(paper, "MIS Quarterly 16") == "reference"
    assert role_of(paper, "Antecedants to PU and PEOU") != "reference"
