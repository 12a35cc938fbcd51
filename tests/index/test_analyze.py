"""Keyword terms: stemming and stop words for Latin-script languages, CJK bigrams as before."""

from __future__ import annotations

import pytest

from knownote.index.analyze import (
    WORDS,
    analyze,
    analyzer_for,
    dropped_words,
    passage_terms,
    query_terms,
)
from knownote.index.context import IN_CONTEXT, PLAIN, embedding_text, heading
from knownote.index.tokenize import mostly_cjk, term_counts

ENGLISH = (
    "The models were trained on the passages of long documents, and the training took "
    "three days. Each of the passages was embedded with its title and its section, so that "
    "a passage that says only what the results in the table show is still about its paper."
)
FRENCH = (
    "Les modèles ont été entraînés sur les passages des documents longs, et l'entraînement a "
    "duré trois jours. Chacun des passages a été plongé avec son titre et sa section, pour "
    "qu'un passage qui ne dit que ce que montrent les résultats du tableau parle de son article."
)
CHINESE = "长城是中国古代的军事防御工程，修筑历史可上溯到西周时期。" * 3


@pytest.mark.parametrize(
    ("text", "analyzer"),
    [(ENGLISH, "stem:en"), (FRENCH, "stem:fr"), (CHINESE, "stem:"), ("Too short.", "stem:")],
)
def test_the_language_is_recognised_by_its_stop_words(text, analyzer):
    assert analyzer_for(text) == analyzer


def test_a_cjk_text_quoting_a_few_english_words_is_not_stemmed():
    assert analyzer_for(CHINESE + " BERT and the GPU are used in the experiments") == "stem:"


def test_english_words_are_stemmed_and_short_stop_words_left_out():
    words = dict(analyze("The models were training in 2015", "stem:en"))
    assert words == {"models": "model", "were": "were", "training": "train", "2015": None}


def test_cjk_stays_character_bigrams_in_every_analyzer():
    for analyzer in (WORDS, "stem:", "stem:en"):
        assert [w for w, _ in analyze("长城的历史", analyzer)] == ["长城", "城的", "的历", "历史"]


def test_the_way_before_keeps_every_word_unstemmed():
    terms, n = passage_terms("The dogs barked.", "Title", WORDS)
    assert (terms, n) == (term_counts("The dogs barked."), 3)


def test_stored_terms_mark_their_field_and_the_stems_their_language():
    terms, n = passage_terms("The dogs barked at dogs.", "Pets › Dogs", "stem:en")
    assert terms == {"|dogs": 2, "en~dog": 2, "|barked": 1, "en~bark": 1, "^pets": 1, "^dogs": 1}
    assert n == 3  # "the" and "at" left out; the heading does not count in the length


def test_a_query_matches_exact_words_stems_and_headings_as_one_term():
    rows = query_terms("dogs", ["stem:en"], stem_weight=0.5, heading_weight=0.25)
    assert sorted(rows) == sorted(
        [
            ("|dogs", 1, "dogs", 1.0, True),
            ("^dogs", 1, "dogs", 0.25, False),
            ("en~dog", 1, "dogs", 0.5, True),
            ("|dog", 1, "dogs", 0.5, True),
        ]
    )


def test_a_query_over_old_and_new_documents_asks_for_both_kinds_of_term():
    rows = query_terms("Dogs", [WORDS, "stem:en"], 0.5, 0.5)
    assert ("dogs", 1, "dogs", 1.0, True) in rows and ("|dogs", 1, "dogs", 1.0, True) in rows


def test_a_stop_word_of_any_language_in_scope_leaves_the_query():
    assert "the" in dropped_words("en")
    assert not [r for r in query_terms("the", ["stem:en", "stem:"], 0.5, 0.5)]


def test_longer_stop_words_stay_searchable():
    assert "during" not in dropped_words("en") and "between" not in dropped_words("en")


def test_the_embedding_model_sees_title_and_section_before_the_passage():
    assert heading("Paper", "3 Method › 3.2 Training") == "Paper › 3 Method › 3.2 Training"
    text = embedding_text("Paper", "3 Method", "We trained it.")
    assert text == "Paper › 3 Method\n\nWe trained it."
    # a file name is a keyword of the heading, but not worth the model's tokens
    assert embedding_text("paper.pdf", "3 Method", "We trained it.") == "3 Method\n\nWe trained it."
    assert heading("paper.pdf", "3 Method") == "paper › 3 Method"
    assert embedding_text("", "", "We trained it.") == "We trained it."
    assert embedding_text("paper.pdf", "3 Method", "We trained it.", PLAIN) == "We trained it."
    assert IN_CONTEXT == "title+section"


def test_a_file_name_as_title_is_read_without_its_extension():
    assert heading("paper_dpr_2004.04906_2col.pdf", "") == "paper dpr 2004.04906 2col"
    assert heading("Free Culture", "") == "Free Culture"
    assert heading("Python 3.12", "") == "Python 3.12"
    long = heading("t", " › ".join(f"Section {i}" for i in range(40)))
    assert len(long) <= 201 and long.endswith("Section 39")


@pytest.mark.parametrize(
    ("text", "cjk"),
    [("日本で梅雨がないのは", True), ("What is BERT?", False), ("GPU 是什么", True), ("", False)],
)
def test_mostly_cjk(text, cjk):
    assert mostly_cjk(text) is cjk
