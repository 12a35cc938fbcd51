"""The passage codes in memory: the first pass of a vector search picks the right candidates."""

import numpy as np

from knownote.index.codes import CodeIndex, binary_codes, load_code_index
from tests.conftest import corpus_file, store_vectors


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


def in_a_cone(n: int, seed: int = 0) -> np.ndarray:
    """Vectors sharing a direction, as the multilingual model's do."""
    rng = np.random.default_rng(seed)
    return unit(unit(rng.standard_normal(384)) * 2.5 + clustered(n, seed=seed))


def test_codes_around_the_multilingual_models_centre_keep_the_nearest_passages():
    from knownote.index.code_centers import CENTERS
    from knownote.index.embedders import get_embedder
    from knownote.measure.retrieval import load_squad
    from knownote.settings import MULTILINGUAL

    e5 = get_embedder(MULTILINGUAL)
    data = load_squad(corpus_file("qa_xx/xquad.ru.json"))  # 240 contexts
    vectors = e5.embed_passages([c.text[:500] for c in data.contexts])
    queries = [e5.embed_query(q.text) for q in data.questions[::20]]
    ids = np.arange(len(vectors), dtype=np.int64)

    def kept(center):
        codes = binary_codes(vectors, center).view(np.uint64)
        index = CodeIndex(ids, np.zeros(len(ids), np.int64), codes, center)
        return np.mean([
            len(set(np.argsort(-(vectors @ q))[:5].tolist())
                & set(index.shortlist(q, None, near=20, best=20).tolist())) / 5
            for q in queries
        ])  # fmt: skip

    # Measured: 0.89 around the centre, 0.64 around zero.
    assert kept(np.asarray(CENTERS[MULTILINGUAL], np.float32)) > kept(None) + 0.15


def test_a_multilingual_notebooks_codes_are_taken_around_its_models_centre(store):
    from knownote.index.code_centers import CENTERS
    from knownote.settings import MULTILINGUAL

    notebook = store.create_notebook("Languages", MULTILINGUAL, 384)
    vectors = in_a_cone(50)
    store_vectors(store, notebook.id, vectors)
    index = load_code_index(store.db, notebook.id)
    center = np.asarray(CENTERS[MULTILINGUAL], dtype=np.float32)
    assert np.array_equal(index.center, center)
    assert np.array_equal(index.codes, binary_codes(vectors, center).view(np.uint64))
    assert not np.array_equal(index.codes, binary_codes(vectors).view(np.uint64))
