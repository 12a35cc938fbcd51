"""The passage codes in memory: the first pass of a vector search picks the right candidates."""

import numpy as np

from knownote.index.codes import CodeIndex, binary_codes, load_code_index
from tests.conftest import store_vectors


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def index_of(vectors: np.ndarray, documents: np.ndarray | None = None) -> CodeIndex:
    n = len(vectors)
    documents = np.zeros(n, np.int64) if documents is None else documents
    codes = binary_codes(vectors).view(np.uint64)
    return CodeIndex(np.arange(100, 100 + n, dtype=np.int64), documents, codes)


def clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, dim))
    return unit(centres[rng.integers(0, 30, n)] + rng.standard_normal((n, dim)) * 0.3)


def test_shortlist_holds_the_exact_nearest_passages():
    vectors = clustered(5000)
    index = index_of(vectors)
    rng = np.random.default_rng(1)
    for query in unit(vectors[:20] + rng.standard_normal((20, 384)) * 0.05):
        exact = set((100 + np.argsort(-(vectors @ query))[:10]).tolist())
        assert exact <= set(index.shortlist(query, None, near=1500, best=300).tolist())


def test_second_pass_ranks_better_than_the_hamming_distance_alone():
    # Of the same Hamming shortlist, the sign bits weighed by the query keep more of the true
    # top 10 in a short list than the Hamming distance alone does.
    vectors = clustered(5000, seed=2)
    index = index_of(vectors)
    rng = np.random.default_rng(3)
    by_signs = by_hamming = 0
    for query in unit(vectors[:30] + rng.standard_normal((30, 384)) * 0.2):
        exact = set((100 + np.argsort(-(vectors @ query))[:10]).tolist())
        by_signs += len(exact & set(index.shortlist(query, None, near=1000, best=20).tolist()))
        by_hamming += len(exact & set(index.shortlist(query, None, near=20, best=20).tolist()))
    assert by_signs > by_hamming


def test_shortlist_keeps_to_the_documents_in_scope():
    vectors = clustered(1000)
    documents = np.repeat(np.arange(10, dtype=np.int64), 100)
    index = index_of(vectors, documents)
    got = index.shortlist(vectors[0], [3, 7], near=50, best=20)
    assert len(got) == 20
    assert set(documents[got - 100].tolist()) <= {3, 7}
    assert index.shortlist(vectors[0], [], near=50, best=20).tolist() == []


def test_shortlist_of_fewer_passages_than_asked_is_all_of_them():
    vectors = clustered(30)
    assert sorted(index_of(vectors).shortlist(vectors[0], None, 50, 40).tolist()) == list(
        range(100, 130)
    )
    assert index_of(vectors[:0]).shortlist(vectors[0], None, 50, 40).tolist() == []


def test_other_dimensions_are_shortlisted_through_their_projection():
    vectors = clustered(3000, dim=768)
    index = index_of(vectors)
    for i in range(10):
        assert 100 + i in index.shortlist(vectors[i], None, near=300, best=30).tolist()


def test_index_is_read_from_the_notebooks_stored_codes(store, notebook):
    vectors = clustered(50)
    ids = store_vectors(store, notebook.id, vectors)
    other = store.create_notebook("Other", notebook.embedding_model, 384)
    index = load_code_index(store.db, notebook.id)
    assert index.passage_ids.tolist() == ids
    assert np.array_equal(index.codes, binary_codes(vectors).view(np.uint64))
    assert len(load_code_index(store.db, other.id).passage_ids) == 0
