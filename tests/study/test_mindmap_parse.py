"""The model's mind map parsed back: many small replies, as models really write them."""

from __future__ import annotations

import pytest

from knownote.study.mindmap import clean_label, label_key, parse_map


def shape(reply: str, k: int = 5) -> list[tuple[int, str, tuple[int, ...]]]:
    return [(n.depth, n.label, n.numbers) for n in parse_map(reply, k).nodes]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("- Gravity [1]", [(0, "Gravity", (1,))]),
        ("* Gravity [1]", [(0, "Gravity", (1,))]),
        ("+ Gravity [1]", [(0, "Gravity", (1,))]),
        ("• Gravity [1]", [(0, "Gravity", (1,))]),
        ("1. Gravity [1]", [(0, "Gravity", (1,))]),
        ("1) Gravity [1]", [(0, "Gravity", (1,))]),
        ("Gravity [1]", [(0, "Gravity", (1,))]),
        ("- **Gravity** [1]", [(0, "Gravity", (1,))]),
        ("- `Gravity` [1]", [(0, "Gravity", (1,))]),
        ("- Gravity: [1]", [(0, "Gravity", (1,))]),
        ("- Gravity [1, 2]", [(0, "Gravity", (1, 2))]),
        ("- Gravity [1][2]", [(0, "Gravity", (1, 2))]),
        ("- Gravity [1-3]", [(0, "Gravity", (1, 2, 3))]),
        ("- Gravity 【2】", [(0, "Gravity", (2,))]),
        ("- Gravity ［2］", [(0, "Gravity", (2,))]),
        ("- Gravity [Passage 2]", [(0, "Gravity", (2,))]),
        ("- Gravity (passages 1, 3)", [(0, "Gravity", (1, 3))]),
        ("- Gravity [P4]", [(0, "Gravity", (4,))]),
        ("- [2] Gravity", [(0, "Gravity", (2,))]),
        ("- Gravity hills [1] look uphill [2]", [(0, "Gravity hills look uphill", (1, 2))]),
        ("- Gravity", [(0, "Gravity", ())]),
        ("- 2020 elections [1]", [(0, "2020 elections", (1,))]),
        ("- 重力の錯覚 [1]", [(0, "重力の錯覚", (1,))]),
    ],
)
def test_one_line(reply, expected):
    assert shape(reply) == expected


def test_numbers_outside_the_passages_are_dropped_and_counted():
    parsed = parse_map("- Gravity [9]\n- Hills [2, 7]", k=5)
    assert [n.numbers for n in parsed.nodes] == [(), (2,)]
    assert parsed.outside == 2


def test_zero_is_no_passage():
    assert shape("- Gravity [0]") == [(0, "Gravity", ())]


def test_indentation_nests_with_two_spaces():
    assert shape("- A [1]\n  - B [2]\n    - C [3]\n- D [4]") == [
        (0, "A", (1,)),
        (1, "B", (2,)),
        (2, "C", (3,)),
        (0, "D", (4,)),
    ]


def test_indentation_nests_with_four_spaces_and_tabs():
    assert shape("- A [1]\n    - B [2]\n\t\t- C [3]") == [
        (0, "A", (1,)),
        (1, "B", (2,)),
        (2, "C", (3,)),
    ]


def test_a_jump_of_indentation_is_one_level():
    assert shape("- A [1]\n          - B [2]") == [(0, "A", (1,)), (1, "B", (2,))]


def test_uneven_indentation_finds_the_level_it_returns_to():
    assert shape("- A [1]\n   - B [2]\n - C [3]") == [
        (0, "A", (1,)),
        (1, "B", (2,)),
        (1, "C", (3,)),
    ]


def test_markdown_headings_hold_the_list_under_them():
    reply = "# Gravity [1]\n- Hills [2]\n## Illusions [3]\n- Slopes [4]\n# Other [5]"
    assert shape(reply) == [
        (0, "Gravity", (1,)),
        (1, "Hills", (2,)),
        (1, "Illusions", (3,)),
        (2, "Slopes", (4,)),
        (0, "Other", (5,)),
    ]


def test_dotted_numbers_nest():
    assert shape("1. A [1]\n1.1 B [2]\n1.1.1 C [3]\n2. D [4]") == [
        (0, "A", (1,)),
        (1, "B", (2,)),
        (2, "C", (3,)),
        (0, "D", (4,)),
    ]


def test_a_thinking_block_is_ignored():
    assert shape("<think>- Not this [1]</think>\n- Gravity [2]") == [(0, "Gravity", (2,))]


def test_a_code_fence_is_ignored():
    assert shape("```markdown\n- Gravity [1]\n```") == [(0, "Gravity", (1,))]


def test_a_header_line_is_no_node():
    assert shape("Mind map:\n- Gravity [1]") == [(0, "Gravity", (1,))]
    assert shape("**Main ideas**\n- Gravity [1]") == [(0, "Gravity", (1,))]


def test_marks_alone_on_a_line_belong_to_the_line_above():
    assert shape("- Gravity\n  [1][2]") == [(0, "Gravity", (1, 2))]


def test_marks_alone_on_the_first_line_are_ignored():
    assert shape("[1]\n- Gravity [2]") == [(0, "Gravity", (2,))]


def test_blank_lines_change_nothing():
    assert shape("- A [1]\n\n  - B [2]\n\n") == [(0, "A", (1,)), (1, "B", (2,))]


def test_an_empty_reply_has_no_nodes():
    assert parse_map("", 5).nodes == ()
    assert parse_map("   \n\n", 5).nodes == ()


def test_a_reply_of_prose_is_nodes_without_citations():
    parsed = parse_map("I cannot draw maps. Sorry!", 5)
    assert [n.numbers for n in parsed.nodes] == [()]


def test_links_after_the_links_header():
    parsed = parse_map("- A [1]\n- B [2]\nLINKS:\n- A -> B: causes [3]", 5)
    assert [(n.label, n.numbers) for n in parsed.nodes] == [("A", (1,)), ("B", (2,))]
    (link,) = parsed.links
    assert (link.source, link.target, link.label, link.numbers) == ("A", "B", "causes", (3,))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("A -> B: causes [1]", ("A", "B", "causes")),
        ("A → B (causes) [1]", ("A", "B", "causes")),
        ("A => B [1]", ("A", "B", "")),
        ("A --causes--> B [1]", ("A", "B", "causes")),
        ("**A** -> **B** - causes [1]", ("A", "B", "causes")),
        ("A ⟶ B：causes [1]", ("A", "B", "causes")),
    ],
)
def test_link_forms(line, expected):
    (link,) = parse_map(f"LINKS:\n- {line}", 5).links
    assert (link.source, link.target, link.label) == expected
    assert link.numbers == (1,)


def test_an_arrow_in_the_map_is_a_link_not_a_node():
    parsed = parse_map("- A [1]\n- A -> B [2]", 5)
    assert [n.label for n in parsed.nodes] == ["A"]
    assert len(parsed.links) == 1


def test_a_line_of_the_links_section_without_an_arrow_is_ignored():
    parsed = parse_map("- A [1]\nLINKS:\n- none here [2]", 5)
    assert [n.label for n in parsed.nodes] == ["A"] and parsed.links == ()


def test_a_link_without_an_end_is_ignored():
    assert parse_map("LINKS:\n- -> B [1]", 5).links == ()


def test_a_long_label_is_cut_at_a_word():
    label = clean_label("word " * 60)
    assert len(label) <= 121 and label.endswith("…") and " wor…" not in label


def test_labels_match_links_across_case_and_punctuation():
    assert label_key("Gravity Hills!") == label_key("gravity hills")
    assert label_key("Ｇravity") == label_key("gravity")


def test_a_paragraph_is_no_idea_even_with_marks():
    paragraph = "We propose a method that " * 12 + "[1]"
    (node,) = parse_map(f"- {paragraph}\n  - under it [2]", 5).nodes[:1]
    assert node.numbers == ()
    assert shape(f"- {'word ' * 20}[1]") == [(0, ("word " * 20).strip(), (1,))]
