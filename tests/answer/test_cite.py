import pytest
from hypothesis import given
from hypothesis import strategies as st

from knownote.answer.cite import (
    Answer,
    SourcePassage,
    normalize_marks,
    parse_citations,
    strip_marks,
)


@pytest.mark.parametrize(
    ("text", "cited", "dropped"),
    [
        ("Sky is blue [3].", [3], 0),
        ("Sky is blue [1, 3].", [1, 3], 0),
        ("Sky is blue [1,3].", [1, 3], 0),
        ("Sky is blue [1][2].", [1, 2], 0),
        ("Sky is blue [1] [2].", [1, 2], 0),
        ("Sky is blue [1-3].", [1, 2, 3], 0),
        ("Sky is blue [1 - 3].", [1, 2, 3], 0),
        ("Sky is blue [2–4].", [2, 3, 4], 0),
        ("Sky is blue [2—4].", [2, 3, 4], 0),
        ("Sky is blue [3-1].", [1, 2, 3], 0),
        ("Sky is blue [1,2,3].", [1, 2, 3], 0),
        ("Sky is blue [1, 2, 5-6].", [1, 2, 5, 6], 0),
        ("Sky is blue [1; 2].", [1, 2], 0),
        ("Sky is blue [1 and 2].", [1, 2], 0),
        ("空は青い【1】。", [1], 0),
        ("空は青い［2］。", [2], 0),
        ("空は青い【1，2】。", [1, 2], 0),
        ("空は青い【1、3】。", [1, 3], 0),
        ("空は青い［１］。", [1], 0),
        ("Sky [ 2 ] blue.", [2], 0),
        ("Sky is blue.", [], 0),
        ("", [], 0),
        ("Sky is blue [0].", [], 1),
        ("Sky is blue [99].", [], 1),
        ("Sky is blue [9].", [], 1),
        ("Sky is blue [8].", [8], 0),
        ("Sky is blue [1, 99].", [1], 1),
        ("Sky is blue [0][99].", [], 2),
        ("Sky is blue [7-10].", [7, 8], 1),
        ("Sky is blue [see 2].", [], 0),
        ("Sky is blue [2, p. 4].", [], 0),
        ("Sky is blue [a].", [], 0),
        ("Sky is blue [].", [], 0),
        ("Sky is blue [-1].", [], 0),
        ("Sky is blue (1).", [], 0),
        ("Sky is blue [[2]].", [2], 0),
        ("A [2]. B [1]. C [2].", [2, 1], 0),
        ("A [3][3] B [3]", [3], 0),
        ("A [1-2] B [2-3]", [1, 2, 3], 0),
    ],
)
def test_parse_citations(text, cited, dropped):
    assert parse_citations(text, 8) == (cited, dropped)


def test_a_range_larger_than_k_is_clipped_not_expanded():
    assert parse_citations("[1-1000000]", 3) == ([1, 2, 3], 1)


def test_no_passages_means_every_mark_is_dropped():
    assert parse_citations("A [1]. B [2].", 0) == ([], 2)


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("A [1, 3].", "A [1][3]."),
        ("A [1-3].", "A [1][2][3]."),
        ("A【2】。", "A[2]。"),
        ("A ［2］ B", "A [2] B"),
        ("A [99].", "A."),
        ("A [99] and B [1].", "A and B [1]."),
        ("A [1, 99].", "A [1]."),
        ("A [1][1].", "A [1][1]."),
        ("A [1, 1].", "A [1]."),
        ("A [see 2].", "A [see 2]."),
    ],
)
def test_normalize_marks_rewrites_to_one_number_per_bracket(text, normal):
    assert normalize_marks(text, 8)[0] == normal


def test_strip_marks_removes_marks_and_the_space_before_them():
    assert strip_marks("Blue [1][2]. Green【3】。 Red [see 4].") == "Blue. Green。 Red [see 4]."


@given(st.text(max_size=200), st.integers(min_value=0, max_value=12))
def test_cited_numbers_are_unique_and_in_range(text, k):
    cited, dropped = parse_citations(text, k)
    assert len(cited) == len(set(cited))
    assert all(1 <= n <= k for n in cited)
    assert dropped >= 0


@given(st.text(max_size=200), st.integers(min_value=0, max_value=12))
def test_normalizing_twice_changes_nothing(text, k):
    once, cited, _ = normalize_marks(text, k)
    assert normalize_marks(once, k) == (once, cited, 0)


def _passage(n: int, cited: bool) -> SourcePassage:
    return SourcePassage(n, 10 + n, 1, "Doc", n, 0, 5, 3, 4, "hello", cited)


def test_answer_citations_are_the_cited_passages():
    answer = Answer("q", "a [2]", "m", False, False, (_passage(1, False), _passage(2, True)))
    assert [p.n for p in answer.citations] == [2]


def test_answer_as_dict_has_the_documented_fields():
    data = Answer(
        "q", "a [2]", "m", False, False, (_passage(1, False), _passage(2, True))
    ).as_dict()
    assert {"answer", "model", "extractive", "incomplete", "chat_id", "citations", "passages"} <= (
        data.keys()
    )
    assert set(data["citations"][0]) >= {
        "n",
        "document_id",
        "title",
        "passage_index",
        "start",
        "end",
        "page_start",
        "page_end",
        "text",
    }
    assert [p["cited"] for p in data["passages"]] == [False, True]


@pytest.mark.parametrize(
    ("start", "end", "shown"), [(3, 3, "p. 3"), (3, 4, "pp. 3–4"), (None, None, "")]
)
def test_pages_label(start, end, shown):
    passage = SourcePassage(1, 1, 1, "Doc", 0, 0, 5, start, end, "hello", True)
    assert passage.pages == shown
