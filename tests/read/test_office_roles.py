"""Roles of Word and PowerPoint files: styles, numbering, tables, links and placeholders."""

from __future__ import annotations

import io

import docx
import pptx
from pptx.util import Inches

from knownote.read.extract import extract
from knownote.read.extracted import Extracted
from knownote.read.roles import BODY
from tests.conftest import corpus_file
from tests.read.test_html_roles import assert_ranges, roles_of


def read(relative: str) -> Extracted:
    path = corpus_file(f"docs/office/{relative}")
    return extract(path.read_bytes(), path.name)


def test_a_web_page_saved_as_word_has_its_menus_as_navigation():
    page = read("docx_wikipedia_bangalore_with_nav_junk.docx")
    assert_ranges(page)
    for chrome in ("Main menu", "Top of Form", "Create account", "Personal tools", "View history"):
        assert roles_of(page, chrome) == {"navigation"}
    assert roles_of(page, "Privacy policy") == {"navigation"}
    assert roles_of(page, "Karnataka", after="State |") == {"table"}  # the infobox
    assert roles_of(page, "Etymology", after="Karnataka") == {"heading"}
    assert roles_of(page, "Bangalore is an anglicised version of the city's Kannada name") == {BODY}
    assert roles_of(page, "Multiple city: writings on Bangalore") == {"reference"}  # Works cited
    assert roles_of(page, "Pune–Bangalore Expressway: Proposed") == {"list"}


def test_every_cell_of_nested_and_merged_tables_is_table():
    tables = read("docx_nested_merged_tables.docx")
    assert_ranges(tables)
    for cell in ("Lorem ipsum", "g&t", ">b<", "c | d"):
        assert roles_of(tables, cell) == {"table"}
    assert roles_of(tables, "Nested Table") == {BODY}


def test_a_long_handbook_has_its_headings_lists_and_tables():
    book = read("docx_doj_ch13_trustee_handbook_long.docx")
    assert_ranges(book)
    roles = {r.role for r in book.roles}
    assert {"heading", "list", "table", "navigation"} <= roles
    assert roles_of(book, "B. ROLE OF UNITED STATES TRUSTEE1-1") == {"navigation"}  # its contents
    assert roles_of(book, "ROLE OF THE UNITED STATES TRUSTEE", after="A.\tPURPOSE") == {"heading"}
    assert sum(r.end - r.start for r in book.roles) < len(book.text) / 10  # most of it is body


def test_a_chinese_word_file_by_its_styles():
    document = docx.Document()
    document.add_heading("分布式训练", level=1)
    document.add_paragraph("数据并行把模型复制到每块显卡上。")
    document.add_paragraph("第一步：切分数据", style="List Bullet")
    document.add_paragraph("第二步：同步梯度", style="List Number")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("方法", "显存"), ("ZeRO-3", "最少")], strict=True):
        for cell, words in zip(row.cells, cells, strict=True):
            cell.text = words
    document.add_paragraph("表1：三种方法的显存", style="Caption")
    document.add_paragraph("模型并行把层分到不同的显卡上。")
    document.add_paragraph("Statistics")  # a site's menu word, in a file that is no web page
    document.add_heading("参考文献", level=1)
    document.add_paragraph("Rajbhandari 等（2020）。ZeRO。", style="List Number")
    data = io.BytesIO()
    document.save(data)
    notes = extract(data.getvalue(), "分布式训练.docx")
    assert_ranges(notes)
    assert roles_of(notes, "分布式训练") == {"heading"}
    assert roles_of(notes, "数据并行把模型复制到每块显卡上。") == {BODY}
    assert roles_of(notes, "第一步：切分数据\n\n第二步：同步梯度") == {"list"}
    assert roles_of(notes, "方法 | 显存\nZeRO-3 | 最少") == {"table"}
    assert roles_of(notes, "表1：三种方法的显存") == {"caption"}
    assert roles_of(notes, "模型并行") == {BODY}
    assert roles_of(notes, "Statistics") == {BODY}
    assert roles_of(notes, "Rajbhandari 等（2020）。ZeRO。") == {"reference"}


def test_slides_have_titles_bullets_and_tables():
    slides = read("pptx_sample_presentation_4slides.pptx")
    assert_ranges(slides)
    assert roles_of(slides, "This is the first content slide") == {"heading"}
    assert roles_of(slides, "With a sub-bullet") == {"list"}
    assert roles_of(slides, "2 | A2 | B2 | C2") == {"table"}
    nasa = read("pptx_nasa_science_directorate_1slide.pptx")
    assert_ranges(nasa)
    assert roles_of(nasa, "Code 610: Earth Sciences Division") == {"list"}

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "训练方法"
    slide.placeholders[1].text_frame.text = "数据并行"
    slide.placeholders[1].text_frame.add_paragraph().text = "模型并行"
    box = slide.shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(1))
    box.text_frame.text = "这是一段说明文字。"
    data = io.BytesIO()
    deck.save(data)
    chinese = extract(data.getvalue(), "训练.pptx")
    assert_ranges(chinese)
    assert roles_of(chinese, "训练方法") == {"heading"}
    assert roles_of(chinese, "数据并行\n模型并行") == {"list"}
    assert roles_of(chinese, "这是一段说明文字。") == {BODY}
