"""The packaged model through ONNX Runtime: same vectors as sentence-transformers, no torch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from knownote.embed import SentenceTransformerEmbedder
from knownote.embed_onnx import OnnxEmbedder
from knownote.embedders import get_embedder
from knownote.errors import ModelError
from knownote.evaluate import load_squad
from knownote.onnx_export import ensure_graph
from knownote.split import split
from tests.conftest import corpus_file

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def torch_embedder():
    return SentenceTransformerEmbedder("all-MiniLM-L6-v2")


def corpus_passages(per_set: int = 40) -> list[str]:
    """Real passages in English, Chinese and Japanese, split as an import splits them."""
    texts = []
    for name in ("qa_en/xquad.en.json", "qa_zh/cmrc2018_dev.json", "qa_ja/jsquad-valid-v1.3.json"):
        contexts = load_squad(corpus_file(name), max_questions=20 * per_set).contexts
        for context in contexts[:per_set]:
            texts.extend(context.text[s.start : s.end] for s in split(context.text))
    return texts


def test_the_packaged_model_runs_through_onnx_by_default(embedder):
    assert isinstance(embedder, OnnxEmbedder) and embedder.dim == 384


def test_vectors_match_sentence_transformers_on_real_passages(embedder, torch_embedder):
    texts = corpus_passages()
    ours = embedder.embed_passages(texts)
    theirs = torch_embedder.embed_passages(texts)
    cosines = (ours * theirs).sum(axis=1)
    assert len(texts) > 100
    assert cosines.min() > 0.9999


def test_long_text_is_cut_at_max_seq_length_like_sentence_transformers(embedder, torch_embedder):
    long_text = " ".join(f"word{i} of a long sentence" for i in range(400))
    texts = [long_text, "  leading and trailing spaces  ", "短い日本語の文です。"]
    cosines = (embedder.embed_passages(texts) * torch_embedder.embed_passages(texts)).sum(axis=1)
    assert cosines.min() > 0.9999
    tokenizer, _ = embedder._load()
    assert len(tokenizer.encode(long_text).ids) == embedder.max_seq_length == 256


def test_a_passage_gets_the_same_vector_alone_or_in_a_padded_batch(embedder):
    texts = ["short", "a somewhat longer passage about cats and dogs " * 5, "中文的句子"]
    together = embedder.embed_passages(texts)
    alone = np.stack([embedder.embed_query(t) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_no_passages_give_an_empty_matrix(embedder):
    assert embedder.embed_passages([]).shape == (0, 384)


def test_default_path_answers_a_query_without_importing_torch(embedder):
    embedder.embed_query("make sure the graph is cached")
    code = (
        "import sys; from knownote.embedders import get_embedder; "
        "v = get_embedder().embed_query('where is the cat?'); "
        "print(v.shape[0], 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=os.environ.copy(), capture_output=True,
        text=True, check=True, timeout=120,
    )  # fmt: skip
    assert out.stdout.split() == ["384", "False", "False"]


def test_a_cached_graph_is_reused_not_exported_again(embedder):
    embedder.embed_query("cached")
    before = embedder.graph.stat().st_mtime_ns
    assert ensure_graph(embedder.model_folder, embedder.graph) == embedder.graph
    assert embedder.graph.stat().st_mtime_ns == before


def test_a_damaged_graph_is_a_clear_error(embedder, tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not an onnx file")
    with pytest.raises(ModelError, match="Delete it"):
        OnnxEmbedder("all-MiniLM-L6-v2", embedder.model_folder, broken).embed_query("x")


@pytest.mark.parametrize(
    ("backend", "kind"), [("torch", SentenceTransformerEmbedder), ("onnx", OnnxEmbedder)]
)
def test_the_backend_setting_chooses_the_path(monkeypatch, backend, kind):
    import knownote.embedders

    monkeypatch.setenv("KNOWNOTE_EMBEDDING_BACKEND", backend)
    monkeypatch.setattr(knownote.embedders, "_cache", {})
    assert isinstance(get_embedder(), kind)


def test_other_models_stay_with_sentence_transformers(monkeypatch, tmp_path):
    import knownote.embedders

    monkeypatch.setattr(knownote.embedders, "_cache", {})
    assert isinstance(get_embedder(str(tmp_path / "my-model")), SentenceTransformerEmbedder)


def test_an_unknown_backend_is_a_clear_error(monkeypatch):
    import knownote.embedders

    monkeypatch.setenv("KNOWNOTE_EMBEDDING_BACKEND", "tpu")
    monkeypatch.setattr(knownote.embedders, "_cache", {})
    with pytest.raises(ModelError, match="KNOWNOTE_EMBEDDING_BACKEND"):
        get_embedder()
