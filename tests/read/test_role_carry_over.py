"""A reader's ranges carried over to its cleaned text (roles.carry_over, roles.reader_roles)."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from knownote.read.canonical import clean_text
from knownote.read.roles import RoleRange, carry_over, reader_roles
from knownote.read.sections import Heading

WORDS = st.sampled_from(["水熊虫", "能在", "极端环境", "word", "Cafe\u0301", "na\u0308ive", "x|y"])
GAPS = st.sampled_from([" ", "\n", "  \n", "\n\n\n\n", "\xa0", "\r\n", "\t", "\x00", " \u200b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(WORDS, GAPS), min_size=1, max_size=30), st.data())
def test_each_range_of_words_is_found_exactly_in_the_cleaned_text(parts, data):
    raw, spans = "  ", []
    for word, gap in parts:
        spans.append((len(raw), len(raw) + len(word)))
        raw += word + gap
    ranges = []
    for _ in range(5):
        first = data.draw(st.integers(0, len(spans) - 1))
        last = data.draw(st.integers(first, len(spans) - 1))
        ranges.append(RoleRange(spans[first][0], spans[last][1], "table"))
    text = clean_text(raw)
    carried = carry_over(raw, text, ranges, offset=7)
    assert len(carried) == len(ranges)  # every one is found
    for r, c in zip(ranges, carried, strict=True):
        want = unicodedata.normalize("NFC", raw[r.start : r.end])
        got = text[c.start - 7 : c.end - 7]
        assert got.split() == clean_text(want).split() and got == got.strip()


def test_a_range_whose_words_the_text_does_not_have_is_left_out():
    raw = "one two three"
    text = "one two 3"  # not what cleaning makes of it: nothing after the change is guessed
    ranges = [RoleRange(0, 3, "list"), RoleRange(4, 7, "list"), RoleRange(8, 13, "list")]
    assert carry_over(raw, text, ranges) == [RoleRange(0, 3, "list"), RoleRange(4, 7, "list")]


def test_a_contents_sections_entries_are_navigation_and_a_reference_lists_items_references():
    text = "目录\n第一章 1\n第二章 9\n正文\n很长的正文。\n参考文献\n张三。\n李四。"
    heading = {w: Heading(text.index(w), text.index(w) + len(w), 1) for w in ("目录", "正文")}
    references = Heading(text.index("参考文献"), text.index("参考文献") + 4, 1)
    found = [
        RoleRange(text.index("第一章"), text.index("正文") - 1, "table"),
        RoleRange(text.index("张三"), len(text), "list"),
    ]
    roles = reader_roles(text, [heading["目录"], heading["正文"], references], found)
    labelled = {text[r.start : r.end].strip(): r.role for r in roles}
    assert labelled["第一章 1\n第二章 9"] == "navigation"
    assert labelled["张三。\n李四。"] == "reference"
    assert labelled["正文"] == "heading"


def test_a_table_of_contents_without_a_heading_is_found_by_its_page_numbers():
    text = (
        "笔记\n\n目录\n\n第一章 绪论 1\n第二章 方法……9\n附录\n第三章 结果 xii\n\n正文从这里开始，"
        + "很长。" * 60
    )
    roles = reader_roles(text, [], [])
    assert [text[r.start : r.end].strip() for r in roles] == [
        "第一章 绪论 1\n第二章 方法……9\n附录\n第三章 结果 xii"
    ]
    assert roles[0].role == "navigation"
    assert reader_roles("目录\n\n第一章 1\n\n只有一条。", [], []) == ()  # too few entries
