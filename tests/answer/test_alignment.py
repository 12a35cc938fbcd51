"""Token alignment across languages (the real multilingual model)."""

import numpy as np

from knownote.answer.alignment import recall, token_encoder, weighted_recall
from knownote.index.embedders import get_embedder
from knownote.settings import MULTILINGUAL


def test_its_pooled_vectors_are_the_embedders():
    e5 = get_embedder(MULTILINGUAL)
    texts = ["The Broncos won Super Bowl 50.", "Kurz.", "Die Panthers gaben 308 Punkte ab."]
    vectors, tokens = token_encoder(e5).encode(texts, e5.passage_prefix)
    assert np.allclose(vectors, e5.embed_passages(texts), atol=1e-5)
    (question,), _ = token_encoder(e5).encode([texts[0]], e5.query_prefix)
    assert np.allclose(question, e5.embed_query(texts[0]), atol=1e-5)
    # Without "passage: " and the special tokens: "Kurz." is a token or two.
    assert 1 <= len(tokens[1]) <= 3
    assert all(np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-4) for t in tokens)


def test_a_question_aligns_with_the_sentence_that_holds_its_words_in_another_language():
    e5 = get_embedder(MULTILINGUAL)
    encoder = token_encoder(e5)
    sentences = [
        "He is also the oldest quarterback ever to play in a Super Bowl at age 39.",
        "The Warsaw Stock Exchange reopened in April 1991.",
        "Tesla was born in Smiljan in 1856.",
    ]
    _, tokens = encoder.encode(sentences, e5.passage_prefix)
    _, (asked,) = encoder.encode(["Wann wurde die Warschauer Börse wieder eröffnet?"], "query: ")
    assert int(np.argmax(recall(asked, tokens))) == 1


def test_other_embedders_have_no_token_states(embedder):
    assert token_encoder(embedder) is None
    assert token_encoder(None) is None


def _tokens(*cosines: tuple[float, int]) -> np.ndarray:
    """Unit token states, each with cosine c to the question's token `axis` and 0 to the other."""
    return np.array(
        [[c if axis == 0 else 0, c if axis == 1 else 0, np.sqrt(1 - c * c)] for c, axis in cosines]
    )


def test_a_token_that_every_sentence_matches_alike_weighs_little():
    # The question's first token (the topic, restated) is matched by all three sentences, the
    # second (its answer) by the second sentence alone: plain recall takes the first sentence,
    # which holds the topic's very word.
    question = np.eye(3)[:2]
    sentences = [
        _tokens((1.0, 0), (0.3, 1)),
        _tokens((0.5, 0), (0.75, 1)),
        _tokens((0.95, 0), (0.3, 1)),
    ]
    assert int(np.argmax(recall(question, sentences))) == 0
    assert int(np.argmax(weighted_recall(question, sentences))) == 1


def test_weighted_recall_is_recall_for_one_sentence_and_zero_for_an_empty_one():
    question = np.eye(3)[:2]
    one = [_tokens((1.0, 0), (0.3, 1))]
    assert np.allclose(weighted_recall(question, one), recall(question, one))
    assert weighted_recall(question, [*one, np.zeros((0, 3))])[1] == 0
