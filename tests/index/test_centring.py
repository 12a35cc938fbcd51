"""Scores fair across languages: each language's mean vector, and a question's language."""

import numpy as np
import pytest

from knownote.index.centring import MIN_HELD, load_language_means
from knownote.index.language import passage_languages, question_language
from knownote.store.db import vectors_table
from tests.conftest import store_vectors


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize(
    ("question", "held", "language"),
    [
        ("PaSa 是如何训练的？", ("en", "zh"), "zh"),
        # py3langid reads this as French among all languages; among the notebook's, English.
        ("How does dense passage retrieval encode questions?", ("en", "zh"), "en"),
        # A language the notebook does not hold: its question is not centred.
        ("Wie viele Punkte gab die Verteidigung der Panthers ab?", ("en", "zh"), None),
        ("Сколько очков пропустила защита?", ("en", "ru"), "ru"),
        ("DPR?", ("en", "zh"), None),
    ],
)
def test_a_question_is_in_a_language_of_the_notebook_or_in_none(question, held, language):
    assert question_language(question, held) == language


def test_each_passage_of_a_document_in_two_languages_gets_its_own():
    english = "The committee approved the budget for the new library after a long debate. "
    chinese = "委员会经过长时间的辩论，批准了新图书馆的预算，并决定明年开始施工。"
    text = english * 3 + "\n\n" + chinese * 3
    cut = len(english) * 3
    spans = [(0, cut), (cut + 2, len(text))]
    assert passage_languages(text, spans, ("en", "zh")) == ["en", "zh"]
    assert passage_languages(text, spans, ("en",)) == ["en", "en"]
    assert passage_languages(text, spans, None) == [None, None]


def test_language_means_are_those_of_each_language_s_vectors(store, embedder, notebook):
    rng = np.random.default_rng(0)
    english = unit(rng.standard_normal((40, embedder.dim)) + 3 * unit(rng.standard_normal(384)))
    german = unit(rng.standard_normal((30, embedder.dim)) - 3 * unit(rng.standard_normal(384)))
    table = vectors_table(embedder.dim)
    store_vectors(store, notebook.id, english, "en")
    alone = load_language_means(store.db, notebook.id, table, embedder.dim)
    assert alone.held == ("en",) and not alone.mixed
    store_vectors(store, notebook.id, german, "de")
    means = load_language_means(store.db, notebook.id, table, embedder.dim)
    assert means.mixed and set(means.held) == {"en", "de"}
    overall = np.vstack([english, german]).mean(0)
    for name, vectors in (("en", english), ("de", german)):
        # Drawn towards the notebook's mean by PRIOR passages, no more.
        exact = vectors.mean(0)
        got = means.means[means.names.index(name)]
        assert np.linalg.norm(got - exact) < np.linalg.norm(overall - exact) * 0.3
        assert np.linalg.norm(got - exact) > 0


def test_a_few_passages_of_a_language_do_not_make_a_notebook_mixed(store, embedder, notebook):
    rng = np.random.default_rng(1)
    store_vectors(store, notebook.id, unit(rng.standard_normal((50, embedder.dim))), "en")
    stray = unit(rng.standard_normal((MIN_HELD - 1, embedder.dim)))
    store_vectors(store, notebook.id, stray, "cy")
    table = vectors_table(embedder.dim)
    assert not load_language_means(store.db, notebook.id, table, embedder.dim).mixed
