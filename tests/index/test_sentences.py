"""One sentence splitter: punctuation of five languages, line structure, and roles."""

import json

import pytest

from knownote.index.sentences import sentence_spans, sentences, shown_parts
from knownote.read.roles import RoleRange, Roles
from tests.conftest import corpus_file


def split(text, **options):
    return [text[a:b] for a, b in sentence_spans(text, **options)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # English: abbreviations, initials, decimals, citations, enumerations
        (
            "Dr. Li et al. (2003) found it, e.g. in Fig. 3. It was 3.14 in 2003. Done!",
            ["Dr. Li et al. (2003) found it, e.g. in Fig. 3.", "It was 3.14 in 2003.", "Done!"],
        ),
        ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
        ("It rolls [1]. It stops. [2] Then", ["It rolls [1].", "It stops. [2]", "Then"]),
        ("Steps:\n1. Mix it.\n2. Bake it.", ["Steps:", "1. Mix it.", "2. Bake it."]),
        # German: abbreviations and ordinals
        (
            "Am 3. Oktober 1990 kam die Einheit. Das war z.B. in Berlin so. Im 19. Jahrhundert "
            "nicht.",
            [
                "Am 3. Oktober 1990 kam die Einheit.",
                "Das war z.B. in Berlin so.",
                "Im 19. Jahrhundert nicht.",
            ],
        ),
        # Russian: initials, abbreviations, the era
        (
            "А. С. Пушкин жил в Москве. Он писал, т.е. сочинял. Это было во 2 веке н. э. Конец.",
            [
                "А. С. Пушкин жил в Москве.",
                "Он писал, т.е. сочинял.",
                "Это было во 2 веке н. э.",
                "Конец.",
            ],
        ),
        # Chinese: full-width stops with closing quotes and brackets after them
        (
            "他说：“我来了。”（注：见上文。）这是第二句！第三句？",
            ["他说：“我来了。”", "（注：见上文。）", "这是第二句！", "第三句？"],
        ),
        # Japanese: a quotative particle goes on; a quote is one sentence
        (
            "彼は「行きます。」と言った。「警察を見た。驚いた」としている。次の文です。",
            ["彼は「行きます。」と言った。", "「警察を見た。驚いた」としている。", "次の文です。"],
        ),
        ("３．５倍になった。次。", ["３．５倍になった。", "次。"]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_sentences_end_at_their_punctuation_in_five_languages(text, expected):
    assert split(text) == expected


def test_a_wrap_ends_no_sentence_but_a_blank_line_a_list_item_or_an_answer_line_does():
    text = "A paragraph that\nwraps. Its end\n\nNext one\n- an item\n- another"
    assert split(text) == [
        "A paragraph that\nwraps.",
        "Its end",
        "Next one",
        "- an item",
        "- another",
    ]
    assert split("Line one\nLine two", lines=True) == ["Line one", "Line two"]


def test_a_range_is_split_in_the_offsets_of_the_whole_text():
    text = "Skip this. Take this one. And this. Not this."
    start, end = text.index("Take"), text.index(" Not")
    assert split(text, start=start, end=end) == ["Take this one.", "And this."]


def test_no_sentence_runs_across_a_change_of_role_and_each_says_its_role():
    text = "Results are good. Table 2: recall 0.71 0.83\nmodel A 0.5 Smith, J. 2020. A paper."
    table = text.index("Table")
    reference = text.index("Smith")
    roles = Roles(
        [RoleRange(table, reference, "table"), RoleRange(reference, len(text), "reference")]
    )
    found = sentences(text, roles=roles)
    assert [(text[s.start : s.end], s.role) for s in found] == [
        ("Results are good.", "body"),
        ("Table 2: recall 0.71 0.83\nmodel A 0.5", "table"),
        ("Smith, J. 2020.", "reference"),
        ("A paper.", "reference"),
    ]


def test_a_page_header_inside_a_sentence_is_run_over_and_shown_apart():
    text = "The model reads the\n\nPreprint. Under review.\n\n12\n\nwhole paper. Next one."
    header = RoleRange(text.index("Preprint"), text.index("12") + 2, "page_header")
    first, second = sentences(text, roles=Roles([header]))
    assert text[first.start : first.end] == text[: text.index(" Next")]
    assert first.role == "body" and first.skipped == ((header.start, header.end),)
    assert shown_parts(text, first) == ["The model reads the\n\n", "\n\nwhole paper."]
    assert text[second.start : second.end] == "Next one."


def test_chinese_roles_with_a_passage_offset():
    document = "前言。正文第一句。参考文献：张三，2020。"
    start = document.index("正文")
    reference = document.index("张三")
    roles = Roles([RoleRange(reference, len(document), "reference")])
    passage = document[start:]
    found = sentences(passage, roles=roles, offset=start)
    assert [(passage[s.start : s.end], s.role) for s in found] == [
        ("正文第一句。", "body"),
        ("参考文献：", "body"),
        ("张三，2020。", "reference"),
    ]


@pytest.mark.parametrize("language", ["en", "de", "ru", "zh", "ja"])
def test_the_gold_ends_of_the_corpus_are_found(language):
    from benchmarks.sentences import GOLD, contexts

    gold = [g for g in json.loads(GOLD.read_text(encoding="utf-8")) if g["language"] == language]
    corpus_file(gold[0]["file"])
    texts = contexts(gold[0]["file"])
    right = found = expected = 0
    for g in gold:
        text = texts[g["context"]]
        ends = {b for _, b in sentence_spans(text)} - {len(text.rstrip())}
        right += len(ends & set(g["ends"]))
        found += len(ends)
        expected += len(g["ends"])
    assert right / found >= 0.97 and right / expected >= 0.98
