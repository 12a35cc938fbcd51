import time

import pytest

from knownote.answer.cite import SourcePassage
from knownote.answer.support import WEAK_SCORE, sentence_pieces, support_spans

DOCUMENT = (
    "Gravity hills are places where a slight downhill slope looks like an uphill slope. "
    "A car left out of gear seems to roll uphill there. The effect is an optical illusion "
    "caused by an obstructed horizon. Surveyors measured the Electric Brae in Scotland in 1998, "
    "and found a slope of 1 in 86 running down towards the sea.\n\n"
    "重力坡是一种视错觉。在这种地方，轻微的下坡看起来像上坡。"
    "北京的一条公路在2005年被发现有这种现象，吸引了很多游客。"
)


def passages(*ranges, cited=()):
    """SourcePassage n for each (start, end) of DOCUMENT, numbered from 1."""
    return [
        SourcePassage(n, n, 7, "Gravity", n, a, b, None, None, DOCUMENT[a:b], n in cited)
        for n, (a, b) in enumerate(ranges, start=1)
    ]


HALF = DOCUMENT.index("重力")
BOTH = passages((0, HALF), (HALF - 20, len(DOCUMENT)), cited=(1, 2))


def texts(text):
    return [text[a:b] for a, b in sentence_pieces(text, lines=True)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two!", ["One.", "Two!"]),
        ("Dr. Smith came. He left.", ["Dr. Smith came.", "He left."]),
        (
            "It grew, e.g. in 1998 and 2001. Then not.",
            ["It grew, e.g. in 1998 and 2001.", "Then not."],
        ),
        ("J. R. R. Tolkien wrote it.", ["J. R. R. Tolkien wrote it."]),
        ("Pi is 3.14 exactly. Yes.", ["Pi is 3.14 exactly.", "Yes."]),
        ("It rolls [1]. It stops. [2] Then", ["It rolls [1].", "It stops. [2]", "Then"]),
        ("北京是首都。[1]上海很大！对吗？", ["北京是首都。[1]", "上海很大！", "对吗？"]),
        ("- first item\n- second item [2]", ["- first item", "- second item [2]"]),
        ("", []),
        ("   \n ", []),
    ],
)
def test_sentences_split_at_full_stops_but_not_after_abbreviations(text, expected):
    assert texts(text) == expected


def test_a_long_text_without_punctuation_is_cut_into_clauses_or_pieces():
    text = "字" * 1000
    spans = sentence_pieces(text, lines=True)
    assert len(spans) > 1 and all(b - a <= 400 for a, b in spans)
    assert "".join(text[a:b] for a, b in spans) == text


def test_each_span_is_the_document_text_at_its_offsets_inside_its_passage():
    answer = "A car seems to roll uphill on a gravity hill [1]. 重力坡是一种视错觉。[2]"
    supports = support_spans(answer, BOTH)
    assert [s.sentence for s in supports] == [0, 1]
    for s in supports:
        passage = BOTH[s.n - 1]
        assert DOCUMENT[s.start : s.end] == s.text
        assert passage.start <= s.start < s.end <= passage.end
    assert supports[0].text == "A car left out of gear seems to roll uphill there."
    assert supports[1].text == "重力坡是一种视错觉。"
    assert not any(s.weak or s.suggested for s in supports)


def test_a_marked_sentence_is_matched_only_inside_the_passages_it_cites():
    [support] = support_spans("重力坡是一种视错觉 [1].", BOTH)
    assert support.n == 1 and support.weak  # passage 1 holds no Chinese: nothing close


def test_an_unmarked_sentence_gets_a_suggestion_from_any_passage():
    [support] = support_spans("The slope runs down towards the sea.", BOTH)
    assert support.suggested and not support.weak and support.n == 1
    assert "towards the sea" in support.text


def test_a_made_up_claim_is_flagged_not_judged():
    [support] = support_spans("Penguins migrate across the Sahara every winter [1].", BOTH)
    assert support.weak and support.score < WEAK_SCORE


def test_a_number_of_the_sentence_must_match():
    text = "It rolls in 1998. It rolls in 2005. It rolls in 1997."
    p = [SourcePassage(1, 1, 1, "t", 0, 0, len(text), None, None, text, True)]
    [support] = support_spans("It rolls in 2005 [1].", p)
    assert support.text == "It rolls in 2005."


def test_long_sentences_of_a_passage_are_offered_clause_by_clause():
    text = (
        "The committee met in the old hall on a cold morning, and after a long debate about "
        "budgets, roads, schools and the harbour, it finally agreed that the lighthouse on the "
        "northern cape would be repainted red and white before the summer season began, while "
        "the question of the ferry timetable was left for another meeting later in the year."
    )
    p = [SourcePassage(1, 1, 1, "t", 0, 0, len(text), None, None, text, True)]
    [support] = support_spans("The lighthouse will be repainted red and white [1].", p)
    assert support.end - support.start < len(text) and "repainted red and white" in support.text


@pytest.mark.parametrize(
    "answer",
    ["", "   ", "[1]", "字" * 3000, "\n".join(f"- item {i} [1]" for i in range(300))],
)
def test_odd_answers_never_fail_and_stay_fast(answer):
    began = time.perf_counter()
    supports = support_spans(answer, BOTH)
    assert time.perf_counter() - began < 1.0  # the benchmark holds the real bound
    assert all(DOCUMENT[s.start : s.end] == s.text for s in supports)


def test_no_passages_means_no_supports():
    assert support_spans("Anything at all [1].", []) == ()


def test_a_sentence_matches_vertical_text_that_has_one_character_a_line():
    text = "\n".join("重力坡是一种视错觉在这种地方轻微的下坡看起来像上坡") + "\n\n其他。"
    p = [SourcePassage(1, 1, 1, "t", 0, 0, len(text), None, None, text, True)]
    [support] = support_spans("重力坡是一种视错觉。[1]", p)
    assert not support.weak and support.text.startswith("重\n力")


def one_passage(text):
    return [SourcePassage(1, 1, 1, "t", 0, 0, len(text), None, None, text, True)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("彼は「行く！」と言った。次だ。", ["彼は「行く！」と言った。", "次だ。"]),
        ("「それは違う。」という声が出た。", ["「それは違う。」という声が出た。"]),
        ("「行く！」彼は言った。", ["「行く！」", "彼は言った。"]),
    ],
)
def test_a_quote_that_a_quotative_particle_follows_ends_no_sentence(text, expected):
    assert texts(text) == expected
    assert [text[a:b] for a, b in sentence_pieces(text)] == expected


def test_hiragana_bigrams_are_weak_evidence_beside_kanji_and_katakana():
    text = "それはだれもがそうなったのではないかといわれている。神田真秋は愛知県知事に当選した。"
    [support] = support_spans(
        "愛知県知事には神田がなったのではないかといわれている。[1]", one_passage(text)
    )
    assert support.text == "神田真秋は愛知県知事に当選した。"


def test_a_span_leans_on_the_sentence_before_it_for_context():
    text = "大阪府の辻元清美候補者が立った。選挙結果は落選。党は新しい綱領を定めた。"
    [support] = support_spans("大阪府の辻元清美候補者の選挙結果は落選。[1]", one_passage(text))
    assert support.text == "選挙結果は落選。"


ENGLISH_ONLY = passages((0, HALF), cited=(1,))


@pytest.mark.parametrize(
    ("answer", "leans_on"),
    [
        ("这种效果是由被遮挡的地平线造成的视错觉。[1]", "The effect is an optical illusion"),
        ("Die Landvermesser fanden 1998 in Schottland ein Gefälle von 1 zu 86. [1]", "Surveyors"),
        ("Автомобиль без передачи как будто катится в гору. [1]", "A car left out of gear"),
        ("El efecto es una ilusión óptica causada por un horizonte oculto. [1]", "The effect"),
    ],
)
def test_an_answer_in_another_language_leans_on_the_sentence_it_restates(answer, leans_on):
    from knownote.index.embedders import get_embedder

    (support,) = support_spans(answer, ENGLISH_ONLY, get_embedder("multilingual-e5-small-int8"))
    assert support.text.startswith(leans_on) and not support.weak
    assert DOCUMENT[support.start : support.end] == support.text


def test_a_made_up_claim_in_another_language_is_flagged_by_meaning_too():
    from knownote.index.embedders import get_embedder

    claim = "月球是由奶酪做成的，宇航员在1969年吃掉了一半。[1]"
    (support,) = support_spans(claim, ENGLISH_ONLY, get_embedder("multilingual-e5-small-int8"))
    assert support.weak


def test_without_a_model_that_reads_across_languages_words_alone_decide(embedder):
    # The suite's English model has no measured closeness: support stays by words, flagged.
    (support,) = support_spans(
        "这种效果是由被遮挡的地平线造成的视错觉。[1]", ENGLISH_ONLY, embedder
    )
    assert support.weak


def test_a_claim_in_the_passages_language_is_flagged_by_its_words_with_any_model():
    from knownote.index.embedders import get_embedder

    # Close in topic (cosine about 0.83) but said nowhere: within a language vectors are
    # close anyway, so words decide there.
    claim = "Magnetic fields pull cars up the slope. [1]"
    (support,) = support_spans(claim, ENGLISH_ONLY, get_embedder("multilingual-e5-small-int8"))
    assert support.weak


def test_in_the_passages_language_words_decide_as_without_a_model():
    from knownote.index.embedders import get_embedder

    answer = "A car seems to roll uphill on a gravity hill [1]. 重力坡是一种视错觉。[2]"
    multilingual = get_embedder("multilingual-e5-small-int8")
    assert support_spans(answer, BOTH, multilingual) == support_spans(answer, BOTH)


@pytest.mark.parametrize(
    ("question_id", "language"),
    [
        ("56f8094aa6d7ea1400e17394", "de"),  # "… veröffentlicht? 1520.": the year decides
        # The four below went to a neighbouring sentence before the token alignment. With it,
        # two that did not now do, by 0.004 and 0.01: "… Суперкубке 50? 39."
        # (56beb86b3aeaaa14008c92bd) and "… binärer Notation." (56e181d9e3433e1400422fa3).
        ("5733834ed058e614000b5c28", "ru"),  # "… фондовой биржи? апреле 2000 года."
        ("56d704430d65d214001982e0", "ru"),  # "… квотербеком …? Пейтон Мэннинг.": the name
        ("570966e0200fba1400367f52", "de"),  # "… Sky+HD? OpenTV."
        ("56e10aa5cd28a01900c674b5", "de"),  # "… für den Nobelpreis? 1937."
        # Below, spans that restate the question won while each token of the sentence counted
        # alike (alignment.weighted_recall).
        ("5733834ed058e614000b5c27", "ru"),  # "… фондовую биржу …? Второй мировой войны."
        ("56d7018a0d65d214001982c5", "ru"),  # "… чемпионата АФК? Нью-Ингленд Пэтриотс."
    ],
)
def test_an_answer_in_another_language_finds_the_sentence_holding_its_answer(question_id, language):
    """Real XQuAD questions answered in German or Russian over their English paragraph, where
    the cosine alone prefers the sentence that restates the question (knownote.answer.alignment
    finds the answer's tokens)."""
    from knownote.answer.support import Scorer, best_support, candidates, meaning_scorer
    from knownote.index.embedders import get_embedder
    from knownote.measure.support import answer_sentence, load_answers, load_support_set
    from tests.conftest import corpus_file

    english = load_support_set(corpus_file("qa_en/xquad.en.json"), max_questions=400)
    (q,) = [q for q in english.questions if q.id == question_id]
    text = english.contexts[q.context]
    paragraph = SourcePassage(1, 1, 7, "XQuAD", 0, 0, len(text), None, None, text, True)
    spans = candidates([paragraph])
    sentence = answer_sentence(*load_answers(corpus_file(f"qa_xx/xquad.{language}.json"))[q.id])
    meaning = meaning_scorer(spans, get_embedder("multilingual-e5-small-int8"))
    span, _, _ = best_support(Scorer(spans), meaning, sentence, None)
    assert any(a < spans[span].end and spans[span].start < b for a, b in q.evidence)


def test_a_span_across_a_page_runs_over_its_header_and_shows_it_as_an_ellipsis():
    from knownote.answer.support import shown_span
    from knownote.read.roles import RoleRange, Roles

    document = (
        "宮沢賢治は岩手県の花巻で生まれ、\n\n農民芸術概論 ― 12 ―\n\n"
        "農学校の教師をしながら童話を書いた。彼の作品は今も広く読まれている。"
    )
    header = RoleRange(document.index("農民芸術"), document.index("12 ―") + 4, "page_header")
    roles = {1: Roles([header])}
    (support,) = support_spans(
        "宮沢賢治は農学校の教師をしながら童話を書いた。[1]", one_passage(document), roles=roles
    )
    assert support.start < header.start and header.end < support.end
    assert document[support.start : support.end] == support.text
    assert shown_span(support.text, support.start, roles[1]) == (
        "宮沢賢治は岩手県の花巻で生まれ、 … 農学校の教師をしながら童話を書いた。"
    )
    (alone,) = support_spans(
        "宮沢賢治は農学校の教師をしながら童話を書いた。[1]", one_passage(document)
    )
    assert alone.start > header.end  # without roles the page break ends the sentence
