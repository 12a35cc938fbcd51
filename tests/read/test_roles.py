"""Roles label ranges of the text: one role a character, body where none is given."""

from __future__ import annotations

from knownote.read.roles import (
    BODY,
    MINOR,
    ROLES,
    RoleRange,
    Roles,
    document_roles,
    hatnotes,
    normalise,
    reference_sections,
)
from knownote.read.sections import Heading


def test_overlaps_are_settled_by_the_role_order_and_neighbours_joined():
    ranges = [
        RoleRange(0, 10, "reference"),
        RoleRange(3, 5, "page_footer"),  # printed on the page, inside the references
        RoleRange(10, 12, "reference"),  # joins the first
        RoleRange(14, 30, "table"),  # clipped to the text
        RoleRange(16, 18, BODY),  # body never overrides another role
    ]
    assert normalise(ranges, 20) == (
        RoleRange(0, 3, "reference"),
        RoleRange(3, 5, "page_footer"),
        RoleRange(5, 12, "reference"),
        RoleRange(14, 20, "table"),
    )
    assert normalise([], 0) == () and normalise([RoleRange(5, 9, "table")], 3) == ()
    assert ROLES[0] == BODY and len(set(ROLES)) == len(ROLES)


def test_lookups_cut_a_range_by_role_with_body_between():
    roles = Roles(normalise([RoleRange(4, 8, "page_header"), RoleRange(12, 20, "reference")], 30))
    assert [roles.at(i) for i in (0, 4, 7, 8, 12, 25)] == [
        BODY, "page_header", "page_header", BODY, "reference", BODY,
    ]  # fmt: skip
    assert roles.pieces(2, 14) == [
        RoleRange(2, 4, BODY),
        RoleRange(4, 8, "page_header"),
        RoleRange(8, 12, BODY),
        RoleRange(12, 14, "reference"),
    ]
    assert roles.pieces(5, 7) == [RoleRange(5, 7, "page_header")]
    assert roles.pieces(25, 30) == [RoleRange(25, 30, BODY)]
    assert roles.share(0, 20, MINOR) == 12 / 20
    assert roles.share(8, 12, MINOR) == 0.0 and roles.share(3, 3, MINOR) == 0.0


PAPER = """Dense Passage Retrieval
1 Introduction
Retrieval matters.
7 References
[1] Danqi Chen. 2017. Reading Wikipedia to answer open-domain questions.
[2] Kenton Lee. 2019. Latent retrieval.
A Appendix
More body text."""


def heading_at(text: str, words: str, level: int) -> Heading:
    at = text.index(words)
    return Heading(at, at + len(words), level)


def test_a_heading_named_references_opens_a_section_up_to_the_next_of_its_level():
    headings = [
        heading_at(PAPER, "1 Introduction", 1),
        heading_at(PAPER, "7 References", 1),
        heading_at(PAPER, "A Appendix", 1),
    ]
    (found,) = reference_sections(PAPER, headings)
    assert found.role == "reference"
    assert PAPER[found.start : found.end].strip().startswith("[1] Danqi Chen")
    assert PAPER[found.start : found.end].strip().endswith("Latent retrieval.")
    roles = Roles(document_roles(PAPER, headings, [RoleRange(0, 23, "heading")]))
    assert roles.at(PAPER.index("Reading Wikipedia")) == "reference"
    assert roles.at(PAPER.index("Retrieval matters")) == BODY
    assert roles.at(PAPER.index("More body")) == BODY


def test_further_reading_and_external_links_sections_are_reference_entries():
    page = (
        "Danube\n\nThe river flows east.\n\nReferences\n\nSmith, J. (2001). Rivers.\n\n"
        "Further reading\n\nBrown, K. (1999). The Danube.\n\nExternal links\n\nOfficial site\n"
    )
    headings = [heading_at(page, w, 2) for w in ("References", "Further reading", "External links")]
    roles = Roles(document_roles(page, headings, []))
    for words in ("Smith, J.", "Brown, K.", "Official site"):
        assert roles.at(page.index(words)) == "reference", words
    assert roles.at(page.index("The river")) == BODY
    # without headings "References" still opens the section that runs over the lists after it
    (plain,) = reference_sections(page, [])
    assert page[plain.start :].strip().startswith("Smith, J.") and plain.end == len(page)
    wiki = "多瑙河\n\n多瑙河向东流。\n\n延伸阅读\n\n王五. 多瑙河志. 1999.\n"
    for headings in ([heading_at(wiki, "延伸阅读", 2)], []):
        found = reference_sections(wiki, headings)
        assert [wiki[r.start : r.end].strip() for r in found] == ["王五. 多瑙河志. 1999."]


def test_a_note_that_sends_the_reader_elsewhere_is_navigation():
    text = (
        "北京\n\n主条目：北京市\n\n北京是中国的首都。\n\n"
        "「東京」はこの項目へ転送されています。\n\n"
        "For other uses, see Mercury (disambiguation).\n\n"
        "Main article: History of Mercury\n\n"
        "We see also that the old address redirects here, in a sentence of the body.\n"
    )
    found = [text[r.start : r.end] for r in hatnotes(text)]
    assert found == [
        "主条目：北京市",
        "「東京」はこの項目へ転送されています。",
        "For other uses, see Mercury (disambiguation).",
        "Main article: History of Mercury",
    ]
    roles = Roles(document_roles(text, [], []))
    assert roles.at(text.index("北京是")) == BODY
    assert roles.at(text.index("主条目")) == "navigation"


def test_in_chinese_and_without_headings_the_last_line_named_so_opens_it():
    notes = "目录\n参考文献\n第一章 引言\n分布式训练很重要。\n参考文献\n[1] 张三. 深度学习. 2020.\n"
    (found,) = reference_sections(notes, [])
    assert notes[found.start : found.end].strip() == "[1] 张三. 深度学习. 2020."
    # a word inside a sentence opens nothing
    assert reference_sections("We list the references in the appendix.\nMore.", []) == []


def test_without_a_references_line_a_run_of_numbered_entries_is_one():
    # a PDF's table reader took "References" into a row of the algorithm beside it
    entries = "".join(f"[{n}] 作者{n}. 标题 {n}. 2021.\n" for n in range(1, 7))
    text = "4: · end if · References\n正文。\n[1] 见上文。\n" + entries + "附录\n"
    (found,) = reference_sections(text, [Heading(len(text) - 3, len(text) - 1, 1)])
    assert text[found.start : found.end] == entries
    assert reference_sections("[1] one\n[2] two\n", []) == []  # too few to tell


def test_a_reference_section_ends_before_a_line_that_opens_an_appendix():
    paper = (
        "Bibliography\nDavis, F. (1989). Perceived usefulness. See its Appendix B of the scales.\n"
        "Appendix A: Antecedents to PU and PEOU\nVoluntariness\n"
    )
    (found,) = reference_sections(paper, [])
    assert paper[found.start : found.end].strip().endswith("Appendix B of the scales.")
    notes = "参考文献\n[1] 张三. 深度学习. 2020.\n附录A 实验设置\n学习率为0.001。\n"
    (found,) = reference_sections(notes, [])
    assert notes[found.start : found.end].strip() == "[1] 张三. 深度学习. 2020."
