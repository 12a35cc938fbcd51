"""Search across notebooks: each notebook with its own embedding model, the rankings merged."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from knownote.index.embedders import get_embedder
from knownote.measure.retrieval import import_text
from knownote.search.library import LibraryError, choose, merge, reading_model, search_library
from knownote.search.retrieve import Hit
from knownote.settings import MULTILINGUAL
from knownote.store.db import Notebook, Store
from knownote.store.library import set_in_library
from tests.conftest import corpus_file

FSDP = "FSDP如何降低峰值内存消耗？"


@dataclass(frozen=True)
class Two:
    english: Notebook  # the packaged English model
    chinese: Notebook  # the multilingual model
    gravity: int
    training: int


def two_notebooks(store: Store) -> Two:
    """An English page in a notebook of the English model, a Chinese one in a notebook of the
    multilingual model."""
    english, multilingual = get_embedder("all-MiniLM-L6-v2-int8"), get_embedder(MULTILINGUAL)
    en = store.create_notebook("Hills", english.name, english.dim)
    zh = store.create_notebook("训练", multilingual.name, multilingual.dim)
    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md").read_text("utf-8")
    training = corpus_file("docs/web_text/md_zh_distributed_training_notes.md").read_text("utf-8")
    g = import_text(store, en.id, english, "Gravity hill", gravity)
    t = import_text(store, zh.id, multilingual, "分布式训练", training)
    return Two(store.notebook(en.id), store.notebook(zh.id), g, t)


@pytest.fixture
def two(store: Store) -> Two:
    return two_notebooks(store)


def test_each_notebook_is_searched_with_its_own_model_and_hits_name_their_notebook(store, two):
    found = search_library(store, [two.english, two.chinese], ["Why does a car roll uphill?"], k=5)
    assert found.hits[0].document_id == two.gravity
    assert found.notebook_of[two.gravity].name == "Hills"
    if two.training in found.notebook_of:
        assert found.notebook_of[two.training].name == "训练"


def test_a_chinese_question_finds_the_chinese_notebook_first(store, two):
    found = search_library(store, [two.english, two.chinese], [FSDP], k=5)
    top = found.hits[0]
    assert top.document_id == two.training
    assert "FSDP" in top.text
    assert store.document_text(two.training)[top.start : top.end] == top.text


def test_a_notebook_left_out_of_the_library_is_not_asked(store, two):
    assert [n.name for n in choose(store)] == ["Hills", "训练"]
    set_in_library(store, two.english.id, False)
    assert [n.name for n in choose(store)] == ["训练"]
    found = search_library(store, choose(store), ["Why does a car roll uphill?"], k=5)
    assert two.gravity not in {h.document_id for h in found.hits}


def test_no_notebook_in_the_library_says_how_to_put_one_back(store, two):
    set_in_library(store, two.english.id, False)
    set_in_library(store, two.chinese.id, False)
    with pytest.raises(LibraryError, match="knownote library NOTEBOOK on"):
        choose(store)


def test_answers_are_read_with_the_multilingual_model_when_a_notebook_uses_it(two):
    assert reading_model([two.english, two.chinese]) == MULTILINGUAL
    assert reading_model([two.english]) == "all-MiniLM-L6-v2-int8"


def hit(pid: int, score: float) -> Hit:
    return Hit(pid, pid, "t", 0, 0, 1, None, None, score, "x")


def test_merge_by_score_keeps_a_notebook_that_stands_out_ahead():
    strong = [hit(1, 9.0), hit(2, 8.0)]
    weak = [hit(11, 3.0), hit(12, 2.0)]
    assert [h.passage_id for h in merge([weak, strong], 3, "score")] == [1, 2, 11]
    # Reciprocal rank fusion interleaves them whatever their scores (the earlier notebook first).
    assert [h.passage_id for h in merge([weak, strong], 3, "rrf")] == [11, 1, 12]


def test_unknown_fusion_says_which_there_are(store, two):
    with pytest.raises(LibraryError, match="score, rrf"):
        search_library(store, [two.english], ["hill"], fusion="mean")


def test_vector_hits_of_two_models_are_fused_by_rank_not_by_cosine(store, two):
    # The multilingual model's cosines sit near 0.8 for anything, the English one's far lower:
    # merged by raw cosine, the Chinese notebook's passages would all come first.
    asked = [two.chinese, two.english]
    found = search_library(store, asked, ["Why does a car roll uphill?"], k=2, mode="vector")
    assert two.gravity in {h.document_id for h in found.hits}
    raw = search_library(store, asked, ["Why does a car roll uphill?"], k=2, mode="vector",
                         fusion="score")  # fmt: skip
    assert {h.document_id for h in raw.hits} == {two.training}
