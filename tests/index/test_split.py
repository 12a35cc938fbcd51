"""The splitter: canonical text -> passages as exact ``[start, end)`` offsets."""

from __future__ import annotations

import dataclasses
import signal
import statistics
import unicodedata
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knownote.index.split import Span, split
from tests.invariants import assert_overlap_rule, assert_spans_valid

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
WEB_TEXT = CORPUS / "docs" / "web_text"
PDFS = CORPUS / "docs" / "pdf"
BOOK = "book_free_culture_lessig_352p.pdf"
REAL_PDFS = [BOOK, "cjk_zh_scanned_ocr_auditor_letter.pdf", "cjk_ja_miyazawa_preface_vertical.pdf"]

PROSE = (
    "The river rose in the night. By morning the low fields were under water, and the farmers "
    "moved their animals to the ridge. Nobody had seen a flood like it since the old mill burned; "
    "even the oldest people in the valley said so. When the water fell again, it left a line of "
    "mud on every wall, a mark that stayed for years. Children measured themselves against it. "
)


def texts(text: str, size: int = 500, overlap: int = 50) -> list[str]:
    spans = split(text, size, overlap)
    assert_spans_valid(text, spans, size)
    assert_overlap_rule(text, spans, size, overlap)
    return [text[s.start : s.end] for s in spans]


def overlaps(spans: list[Span]) -> list[int]:
    return [a.end - b.start for a, b in pairwise(spans)]


# --- the API -------------------------------------------------------------------------------------


def test_span_text_is_the_slice_of_the_text():
    text = PROSE * 3
    for span in split(text, 120, 20):
        assert text[span.start : span.end] in text
        assert isinstance(span.start, int) and isinstance(span.end, int)


def test_span_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Span(1, 2).start = 3  # type: ignore[misc]


def test_default_size_and_overlap_are_500_and_50():
    text = PROSE * 10
    assert split(text) == split(text, 500, 50)
    assert max(len(t) for t in texts(text)) <= 500


def test_rejects_size_below_twenty():
    with pytest.raises(ValueError, match="size"):
        split("some text", size=19, overlap=0)


def test_accepts_size_of_twenty():
    assert texts("word " * 40, 20, 5)


def test_rejects_overlap_equal_to_size():
    with pytest.raises(ValueError, match="overlap"):
        split("some text", size=100, overlap=100)


def test_rejects_negative_overlap():
    with pytest.raises(ValueError, match="overlap"):
        split("some text", size=100, overlap=-1)


def test_validates_arguments_even_for_empty_text():
    with pytest.raises(ValueError):
        split("", size=5)


# --- trimming and small texts --------------------------------------------------------------------


def test_empty_text_gives_no_passages():
    assert split("") == []


def test_whitespace_only_gives_no_passages():
    assert split(" \n\n\t\u3000\xa0\r\n  ") == []


def test_short_text_is_one_passage():
    assert split("Hello, world.") == [Span(0, 13)]


def test_short_text_is_trimmed_by_moving_offsets():
    text = "\n\n  Hello, world.  \n"
    assert split(text) == [Span(4, 17)]
    assert text[4:17] == "Hello, world."


def test_unicode_whitespace_is_trimmed():
    text = "\u3000\xa0本文です。\u3000\u2029"
    [span] = split(text)
    assert text[span.start : span.end] == "本文です。"


def test_text_of_exactly_size_is_one_passage():
    text = "x" * 100
    assert split(text, 100, 10) == [Span(0, 100)]


def test_text_one_over_size_is_two_passages():
    assert len(split("x" * 101, 100, 10)) == 2


def test_single_character_text():
    assert split(" a ") == [Span(1, 2)]


# --- where a passage ends ------------------------------------------------------------------------


def test_prefers_paragraph_break_over_sentence_end():
    first = "One two three. Four five six seven. Eight nine ten eleven twelve."
    text = first + "\n\n" + "Then more. And more. Still more. " * 10
    assert texts(text, 100, 20)[0] == first


def test_blank_line_holding_spaces_is_a_paragraph_break():
    first = "One two three. Four five six seven. Eight nine ten eleven twelve."
    text = first + "\n  \t\n" + "Then more.\nAnd more.\nStill more. " * 10
    assert texts(text, 100, 20)[0] == first


def test_paragraph_break_in_first_half_is_not_taken():
    text = "Short opening.\n\n" + "Then a sentence. " * 20
    first = texts(text, 100, 20)[0]
    assert "\n\n" in first
    assert first.endswith("sentence.")
    assert len(first) >= 50


def test_prefers_line_break_over_sentence_end():
    first = "One two three. Four five six seven. Eight nine ten eleven"
    text = first + "\n" + "twelve. Then more. And more. Still more. " * 10
    assert texts(text, 100, 20)[0] == first


def test_prefers_sentence_end_over_comma():
    first = "Alpha beta gamma delta epsilon zeta eta theta iota kappa."
    text = (first + " Lambda mu, nu xi, omicron pi, rho sigma, tau upsilon, ") * 5
    assert texts(text, 100, 20)[0] == first


def test_prefers_comma_over_space():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa, lambda mu nu xi omicron " * 5
    first = texts(text, 100, 20)[0]
    assert first.endswith("kappa,")


def test_semicolon_and_colon_are_clause_ends():
    for mark in ";:":
        text = f"alpha beta gamma delta epsilon zeta eta theta iota kappa{mark} lambda mu nu " * 5
        assert texts(text, 100, 20)[0].endswith("kappa" + mark)


def test_splits_at_whitespace_when_there_is_no_punctuation():
    text = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod " * 10
    spans = split(text, 100, 20)
    assert_spans_valid(text, spans, 100)
    for span in spans[:-1]:
        assert text[span.end].isspace()
        assert span.start == 0 or text[span.start - 1].isspace()


def test_hard_cut_when_no_boundary():
    text = "x" * 250
    assert split(text, 100, 20) == [Span(0, 100), Span(80, 180), Span(160, 250)]


def test_hard_cut_keeps_combining_mark_with_its_letter():
    text = "e\u0301" * 200  # é as e + combining acute accent
    spans = split(text, 101, 20)
    assert_spans_valid(text, spans, 101)
    for span in spans:
        assert unicodedata.combining(text[span.start]) == 0
        assert span.end == len(text) or unicodedata.combining(text[span.end]) == 0


def test_decimal_point_is_not_a_sentence_end():
    text = "pi is roughly 3.14159 and e is about 2.71828 while the answer is 42 " * 10
    for passage in texts(text, 100, 20):
        assert not passage.endswith(("3.", "2."))


def test_thousands_separator_is_not_a_clause_end():
    text = "there were 1,000 birds and 2,500 fish and many more creatures in the lake " * 10
    for passage in texts(text, 100, 20):
        assert not passage.endswith(("1,", "2,"))


def test_ascii_closing_quote_stays_with_sentence():
    text = 'She said: "The bridge is out, so we wait here until dawn." ' * 10
    for passage in texts(text, 100, 20)[:-1]:
        assert passage.endswith('dawn."')


def test_ellipsis_followed_by_space_ends_a_sentence():
    text = "And then the lights went out and nobody moved for a while… " * 10
    for passage in texts(text, 100, 20)[:-1]:
        assert passage.endswith("while…")


def test_crlf_line_breaks_are_line_breaks():
    text = "a line of text that is not very long\r\n" * 10
    spans = split(text, 100, 20)
    assert_spans_valid(text, spans, 100)
    for span in spans[:-1]:
        assert text[span.end : span.end + 2] == "\r\n"


# --- CJK -----------------------------------------------------------------------------------------


def test_chinese_splits_after_full_stop():
    sentence = "今天天气很好，我们一起去公园散步，看到了很多美丽的花。"
    for passage in texts(sentence * 12, 100, 20)[:-1]:
        assert passage.endswith("。")


def test_chinese_next_passage_starts_after_a_full_stop():
    sentence = "今天天气很好。我们去散步。看到了花。"
    text = sentence * 15
    for span in split(text, 100, 30)[1:]:
        assert text[span.start - 1] == "。"


def test_chinese_splits_after_comma_when_there_is_no_full_stop():
    for passage in texts("我们一起去公园散步，" * 30, 100, 20)[:-1]:
        assert passage.endswith("，")


def test_japanese_without_spaces_splits_at_kuten():
    text = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。" * 10
    for passage in texts(text, 100, 20)[:-1]:
        assert passage.endswith("。")


def test_japanese_splits_at_touten_when_there_is_no_kuten():
    for passage in texts("雨が降っていたので、" * 30, 100, 20)[:-1]:
        assert passage.endswith("、")


def test_full_width_marks_before_a_space_still_split():
    for passage in texts("これは文です！ それも文です？ " * 20, 100, 20)[:-1]:
        assert passage.endswith(("！", "？"))


def test_japanese_closing_bracket_stays_with_sentence():
    text = ("「" + "あ" * 20 + "。」") * 10
    for passage in texts(text, 100, 20)[:-1]:
        assert passage.endswith("。」")


def test_cjk_without_any_punctuation_is_hard_cut():
    text = "漢" * 250
    assert split(text, 100, 20) == [Span(0, 100), Span(80, 180), Span(160, 250)]


def test_mixed_cjk_and_latin():
    text = ("KnowNote は local-first のノートです。It cites passages exactly. " * 20).strip()
    for passage in texts(text, 120, 30)[:-1]:
        assert passage.endswith(("。", "."))


# --- where the next passage starts ---------------------------------------------------------------


def test_overlap_is_about_fifty_characters():
    spans = split(PROSE * 20)
    assert_overlap_rule(PROSE * 20, spans, 500, 50)
    values = overlaps(spans)
    assert all(0 < v <= 50 for v in values)
    assert 25 <= statistics.mean(values) <= 50


def test_next_passage_starts_at_a_sentence_start_when_one_is_near():
    text = "Cats are nice. Dogs are fun. Birds can sing. " * 20
    for span in split(text, 100, 40)[1:]:
        assert text[span.start - 2 : span.start] == ". "


def test_next_passage_starts_at_a_word_start():
    text = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod " * 10
    for span in split(text, 100, 30)[1:]:
        assert text[span.start - 1] == " "


def test_next_passage_starts_at_a_line_start_in_pdf_like_text():
    text = "a line of pdf text that wraps here and\ncontinues on the next line of text\n" * 10
    for span in split(text, 200, 50)[1:]:
        assert text[span.start - 1] == "\n"


def test_zero_overlap_passages_abut():
    text = PROSE * 5
    spans = split(text, 200, 0)
    assert_spans_valid(text, spans, 200)
    for a, b in pairwise(spans):
        assert b.start >= a.end
        assert not text[a.end : b.start].strip()


def test_long_whitespace_gap_is_not_bridged():
    text = "alpha beta gamma delta" + " " * 300 + "epsilon zeta eta theta " * 10
    spans = split(text, 100, 20)
    assert_spans_valid(text, spans, 100)
    assert_overlap_rule(text, spans, 100, 20)
    assert spans[0] == Span(0, 22)
    assert spans[1].start == 322


def test_large_overlap_still_makes_progress():
    text = PROSE * 3
    spans = split(text, 50, 49)
    assert_spans_valid(text, spans, 50)
    assert_overlap_rule(text, spans, 50, 49)


def test_tail_is_never_dropped():
    for tail in ("end", "。", "x", "last words here.", "\u0301"):
        text = PROSE * 4 + tail + "  \n"
        spans = split(text, 150, 30)
        assert spans[-1].end == len(text.rstrip())


def test_passages_never_exceed_size():
    text = PROSE * 10 + "x" * 900 + "漢" * 900
    for size in (20, 21, 77, 500, 1000):
        assert max(s.end - s.start for s in split(text, size, size // 4)) <= size


# --- properties ----------------------------------------------------------------------------------

ALPHABET = (
    "abcxyzAB 漢字日本語中文あいう"
    ".!?…,;:。！？．｡，、；：﹐"
    "\"'”’)」』）"
    " \t\n\n\n\r\u3000\xa0"
    "\u0301\u200d1"
)
TOKENS = [
    "the", "river", "Flood", "data", "3.14", "1,000", "e.g.", "漢字", "日本語", "文章です", "中文",
    ". ", "! ", "? ", "… ", ", ", "; ", ": ", "。", "！", "？", "，", "、", "；", "：",
    '." ', "。」", "」", "）", " ", " ", " ", "  ", "\t", "\n", "\n", "\n\n", " \n \n ", "\r\n",
    "\u3000", "\xa0",
]  # fmt: skip
token_texts = st.lists(
    st.one_of(
        st.sampled_from(TOKENS),
        st.text(alphabet="abcdef漢字", min_size=20, max_size=300),  # long runs force hard cuts
        st.integers(1, 400).map(lambda k: " " * k),  # long whitespace gaps
    ),
    max_size=400,
).map("".join)


@st.composite
def size_and_overlap(draw, max_overlap_fraction: float = 1 / 3) -> tuple[int, int]:
    size = draw(st.integers(20, 800))
    return size, draw(st.integers(0, int(size * max_overlap_fraction)))


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


alphabet_texts = st.one_of(
    st.text(alphabet=ALPHABET, max_size=200),
    st.text(alphabet=ALPHABET, min_size=300, max_size=4000),  # several passages at most sizes
)


@PROPERTY
@given(text=alphabet_texts, args=size_and_overlap())
def test_invariants_hold_on_random_text(text, args):
    size, overlap = args
    spans = split(text, size, overlap)
    assert_spans_valid(text, spans, size)
    assert_overlap_rule(text, spans, size, overlap)


@PROPERTY
@given(text=token_texts, args=size_and_overlap())
def test_invariants_hold_on_random_token_text(text, args):
    size, overlap = args
    spans = split(text, size, overlap)
    assert_spans_valid(text, spans, size)
    assert_overlap_rule(text, spans, size, overlap)


@settings(max_examples=150, deadline=None)
@given(text=token_texts, args=size_and_overlap(max_overlap_fraction=0.999))
def test_invariants_hold_with_any_valid_overlap(text, args):
    size, overlap = args
    spans = split(text, size, overlap)
    assert_spans_valid(text, spans, size)
    assert_overlap_rule(text, spans, size, overlap)


@settings(max_examples=100, deadline=None)
@given(text=token_texts)
def test_split_is_deterministic(text):
    assert split(text) == split(text)


# --- real text -----------------------------------------------------------------------------------


@cache
def pdf_text(name: str) -> str:
    pymupdf = pytest.importorskip("pymupdf")
    path = PDFS / name
    if not path.exists():
        pytest.skip(f"needs the shared corpus ({path} is absent)")
    with pymupdf.open(path) as doc:
        return "".join(page.get_text() for page in doc)


WEB_FILES = (
    sorted(p for p in WEB_TEXT.iterdir() if p.suffix in (".txt", ".md"))
    if WEB_TEXT.is_dir()
    else []
)


@pytest.mark.skipif(not WEB_FILES, reason=f"needs the shared corpus ({WEB_TEXT} is absent)")
@pytest.mark.parametrize("path", WEB_FILES, ids=[p.name for p in WEB_FILES])
def test_invariants_hold_on_real_web_text(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for size, overlap in ((500, 50), (200, 60), (1000, 0)):
        spans = split(text, size, overlap)
        assert_spans_valid(text, spans, size)
        assert_overlap_rule(text, spans, size, overlap)


@pytest.mark.parametrize("name", REAL_PDFS)
def test_invariants_hold_on_real_pdf_text(name):
    text = pdf_text(name)
    for size, overlap in ((500, 50), (300, 100)):
        spans = split(text, size, overlap)
        assert_spans_valid(text, spans, size)
        assert_overlap_rule(text, spans, size, overlap)


def test_book_passages_are_about_500_chars_overlapping_about_50():
    spans = split(pdf_text(BOOK))
    assert 350 <= statistics.mean(s.end - s.start for s in spans) <= 500
    assert 20 <= statistics.mean(overlaps(spans)) <= 80


def test_long_whitespace_run_after_a_passage_still_moves_forward():
    # Found by hypothesis: with a large overlap, a whitespace run longer than the room left for
    # new text made the next passage start where the previous one did, forever.
    def give_up(*_):
        raise TimeoutError("split made no progress")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(10)
    try:
        for gap in (136, 145, 154, 172):
            text = ("ab cd " * 30)[:150].rstrip() + " " * gap + "ef gh " * 80
            spans = split(text, 206, 159)
            assert_spans_valid(text, spans, 206)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
