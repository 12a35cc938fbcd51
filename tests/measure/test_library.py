"""Recall across the library against recall in the right notebook, on a slice of xquad.en
(the full run: benchmarks/library.py) and on Chinese questions beside an English notebook."""

from __future__ import annotations

import json

import pytest

from knownote.errors import KnowNoteError
from knownote.index.embedders import get_embedder
from knownote.measure.library import Part, evaluate_library, split_articles
from knownote.measure.retrieval import load_squad
from knownote.settings import MULTILINGUAL, PACKAGED_INT8
from tests.conftest import corpus_file


def test_split_articles_makes_halves_that_share_no_context():
    first, second = split_articles(corpus_file("qa_en/xquad.en.json"), 2)
    assert len(first.questions) + len(second.questions) == 1190
    assert not {c.text for c in first.contexts} & {c.text for c in second.contexts}


def test_split_articles_refuses_more_parts_than_articles(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": []}]}))
    with pytest.raises(KnowNoteError, match="cannot make 2 parts"):
        split_articles(path, 2)


def test_halves_of_xquad_in_two_models_lose_little_recall_as_one_library():
    first, second = split_articles(corpus_file("qa_en/xquad.en.json"), 2, max_questions=60)
    report = evaluate_library(
        [
            Part("english", first, get_embedder(PACKAGED_INT8)),
            Part("multilingual", second, get_embedder(MULTILINGUAL)),
        ],
        fusions=("score",),
    )
    assert report.questions == 120
    own, library = report.own["recall@5"], report.library["score"]["recall@5"]
    assert own > 0.8
    assert library >= own - 0.02


def test_chinese_questions_across_an_english_and_a_chinese_notebook():
    english = load_squad(corpus_file("qa_en/xquad.en.json"), 100)
    chinese = load_squad(corpus_file("qa_zh/cmrc2018_dev.json"), 60)
    report = evaluate_library(
        [
            Part("english", english, get_embedder(PACKAGED_INT8), asked=False),
            Part("chinese", chinese, get_embedder(MULTILINGUAL)),
        ],
        fusions=("score",),
    )
    assert report.questions == 60 and report.parts[0]["questions"] == 0
    own, library = report.own["recall@5"], report.library["score"]["recall@5"]
    assert own > 0.8
    assert library >= own - 0.02
