"""Roles of HTML, web pages, EPUB and plain text: what each element is, as ranges of the text."""

from __future__ import annotations

from knownote.read.extract import extract
from knownote.read.extracted import Extracted
from knownote.read.roles import BODY, Roles, document_roles
from tests.conftest import corpus_file


def roles_of(extracted: Extracted, words: str, after: str = "", stored: bool = False) -> set[str]:
    """The roles of the characters of `words`, found in the text (after `after`, if given), as
    its reader found them or, `stored`, as an import keeps them (`document_roles`)."""
    text = extracted.text
    start = text.index(words, text.index(after) if after else 0)
    roles = extracted.roles
    if stored:
        roles = document_roles(text, extracted.headings, roles)
    pieces = Roles(roles).pieces(start, start + len(words))
    return {p.role for p in pieces if text[p.start : p.end].strip()}


def assert_ranges(extracted: Extracted) -> None:
    """Every range is a non-empty slice of the text, in order, not overlapping, never body."""
    at = 0
    for r in extracted.roles:
        assert at <= r.start < r.end <= len(extracted.text) and r.role != BODY
        at = r.end


def read(relative: str, **options) -> Extracted:
    path = corpus_file(f"docs/{relative}")
    return extract(path.read_bytes(), path.name, **options)


def test_a_wikipedia_page_has_its_references_menus_tables_captions_and_body():
    page = read("web_text/html_wikipedia_tardigrades.html")
    assert_ranges(page)
    assert roles_of(page, "Tardigrades use intrinsically disordered proteins") == {"reference"}
    assert roles_of(page, '"tardigrade". Dictionary.com Unabridged') == {"reference"}
    chrome_lines = ("Jump to content", "Toggle the table of contents", "Edit links", "Categories:")
    for chrome in chrome_lines:
        assert roles_of(page, chrome) == {"navigation"}
    assert roles_of(page, "[edit]", after="Naming") == {"navigation"}
    assert roles_of(page, 'Retrieved from "https://en.wikipedia.org') == {"navigation"}
    assert roles_of(page, "Privacy policy") == {"navigation"}
    assert roles_of(page, "Eukaryota") == {"table"}  # the infobox
    assert roles_of(page, "SEM image of Hypsibius dujardini") == {"caption"}
    assert roles_of(page, "Naming") == {"heading"}
    assert roles_of(page, "Panspermia") == {"navigation"}  # "See also"
    assert roles_of(page, "known colloquially as water bears or moss piglets") == {BODY}
    assert roles_of(page, "The name Tardigradum means") == {BODY}


def test_hatnotes_and_see_also_sections_are_navigation_in_every_format():
    hill = read("web_text/md_wikipedia_gravity_hill.md")
    assert roles_of(hill, "redirect here. For other uses", stored=True) == {"navigation"}
    assert roles_of(hill, "also known as a", stored=True) == {BODY}
    assert roles_of(hill, "[List of gravity hills]", stored=True) == {"navigation"}
    city = read("office/docx_wikipedia_bangalore_with_nav_junk.docx")
    hatnote = "For other uses, see Bangalore (disambiguation)."
    assert roles_of(city, hatnote, stored=True) == {"navigation"}
    notes = read("web_text/md_zh_distributed_training_notes.md")
    stored = document_roles(notes.text, notes.headings, notes.roles)
    assert "navigation" not in {r.role for r in stored}  # nothing there sends elsewhere


def test_a_web_pages_main_content_keeps_its_reference_list_as_references():
    page = read("web_text/html_wikipedia_tardigrades.html", main_content=True)
    assert page.kind == "web"
    assert_ranges(page)
    assert roles_of(page, "Tardigrades use intrinsically disordered proteins") == {"reference"}
    assert roles_of(page, "known colloquially as water bears or moss piglets") == {BODY}
    # the page's chrome is gone; what is navigation is the "See also" list
    assert "Jump to content" not in page.text
    assert roles_of(page, "Panspermia") == {"navigation"}


def test_a_saved_page_in_a_txt_file_and_a_filings_tables():
    bates = read("web_text/txt_actually_html_wikipedia_bates.txt")
    assert_ranges(bates)
    assert roles_of(bates, "Dunbar, Willis F.") == {"reference"}
    assert roles_of(bates, "Categories:") == {"navigation"}
    assert roles_of(bates, "Frederick Bates was born in 1777") == {BODY}
    filing = read("web_text/html_sec_10k_excerpt_ixbrl.html")
    assert_ranges(filing)
    assert roles_of(filing, "Trading symbol") == {"table"}


CHINESE_PAGE = """<html><head><title>水熊虫</title></head><body>
<div role="navigation"><a href="#main">跳到内容</a></div>
<header><a>登录</a> <a>注册</a></header>
<h1>水熊虫</h1>
<p>水熊虫是一类微小的动物，\u00a0能在极端环境中存活。   </p>
<p>Cafe\u0301 au lait   </p>
<figure><img src="x.png"><figcaption>图1：显微镜下的水熊虫</figcaption></figure>
<table><caption>表1：分类</caption><tr><th>界</th><td>动物界</td></tr></table>
<pre><code>print("水熊虫")
exit()</code></pre>
<p>用 <code>pip</code> 安装。</p>
<ul><li>耐高温</li><li>耐辐射</li></ul>
<p><math><mi>E</mi><mo>=</mo><mi>m</mi></math></p>



<h2>参考文献</h2>
<ol class="references"><li id="cite_note-1">张三（2020）。水熊虫研究。科学出版社。</li></ol>
<h2>另见</h2>
<footer><ul><li>隐私政策</li></ul></footer>
</body></html>"""


def test_each_element_of_a_chinese_page_has_its_role_after_cleaning():
    page = extract(CHINESE_PAGE.encode(), "水熊虫.html")
    assert_ranges(page)
    assert roles_of(page, "跳到内容") == {"navigation"}
    assert roles_of(page, "登录 注册") == {"navigation"}  # a site's header
    assert roles_of(page, "水熊虫", after="注册") == {"heading"}
    assert roles_of(page, "水熊虫是一类微小的动物， 能在极端环境中存活。") == {BODY}
    assert roles_of(page, "Café au lait") == {BODY}  # composed by cleaning; still found after it
    assert roles_of(page, "图1：显微镜下的水熊虫") == {"caption"}
    assert roles_of(page, "表1：分类") == {"caption"}
    assert roles_of(page, "界 | 动物界") == {"table"}
    assert roles_of(page, 'print("水熊虫")\nexit()') == {"code"}
    assert roles_of(page, "用 pip 安装。") == {BODY}  # a word of code belongs to its sentence
    assert roles_of(page, "耐高温") == {"list"}
    assert roles_of(page, "E=m") == {"formula"}
    assert roles_of(page, "张三（2020）。水熊虫研究。") == {"reference"}
    assert roles_of(page, "隐私政策") == {"navigation"}  # a list in a footer is the footer


def test_an_epubs_contents_are_navigation_and_its_tables_are_tables():
    book = read("office/epub_winter_sports.epub")
    assert_ranges(book)
    assert roles_of(book, "I. | The Sun-seeker | 1") == {"navigation"}
    assert roles_of(book, "Outside forward to inside back.") == {"table"}
    assert roles_of(book, "THE SUN-SEEKER") == {"heading"}
    for r in book.roles:  # a chapter's roles stay in its chapter
        assert any(p.start <= r.start and r.end <= p.end for p in book.pages) or (
            r.role == "navigation"
        )


def test_plain_text_has_a_reference_section_after_its_last_references_line():
    notes = "关于水熊虫的笔记。\n\n它们很小。\n\n参考文献\n\n"
    notes += "张三（2020）。水熊虫研究。\n李四（2021）。极端环境。"
    text = extract(notes.encode(), "笔记.txt")
    assert roles_of(text, "张三（2020）。水熊虫研究。\n李四（2021）。极端环境。") == {"reference"}
    assert roles_of(text, "它们很小。") == {BODY}
    war = read("web_text/txt_war_and_peace_excerpt.txt")
    assert war.roles == ()
