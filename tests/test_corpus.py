"""Every real document in ../shared/corpus/docs imports, or fails for the reason SOURCES.md gives.

For every imported document the offset invariants hold on the stored rows.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from knownote.ingest import import_file
from knownote.settings import Settings
from knownote.store import Store
from knownote.tokenize import term_counts
from tests.conftest import DOCS
from tests.invariants import assert_spans_valid

PASSWORDS = {"enc_password_openpassword.pdf": "openpassword", "enc_password_test_4p.pdf": "test"}
MUST_FAIL = {
    "broken_empty_0_bytes.pdf": r"empty",
    "broken_unreadable_pages_tree.pdf": r"damaged|unreadable|no pages",
    "broken_truncated_multicolumn.pdf": r"damaged|unreadable|truncated|no pages",
    "scan_book_page_image_only.pdf": r"scanned",
}
FILES = sorted(p for p in DOCS.rglob("*") if p.is_file()) if DOCS.is_dir() else []


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory, embedder):
    settings = Settings().with_(home=tmp_path_factory.mktemp("corpus"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Corpus", embedder.name, embedder.dim)
    yield store, notebook, settings
    store.close()


def run_import(corpus_store, path, password=None):
    store, notebook, settings = corpus_store
    return import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, password=password
    )


@pytest.mark.skipif(not FILES, reason=f"needs the shared corpus ({DOCS} is absent)")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_file_imports_or_fails_as_expected(corpus_store, path):
    store, notebook, settings = corpus_store
    if path.name in MUST_FAIL:
        result = run_import(corpus_store, path)
        assert result.status == "failed"
        assert re.search(MUST_FAIL[path.name], result.error, re.I), result.error
        assert "Traceback" not in result.error
        assert store.document_by_hash(notebook.id, _sha(path)) is None
        return
    if path.name in PASSWORDS:
        refused = run_import(corpus_store, path)
        assert refused.status == "failed" and refused.needs_password, refused.error
        wrong = run_import(corpus_store, path, password="not-the-password")
        assert wrong.status == "failed" and "password" in wrong.error.lower()
    result = run_import(corpus_store, path, password=PASSWORDS.get(path.name))
    assert result.status == "imported", result.error
    assert_document_invariants(store, result.document_id, settings.passage_size)


def assert_document_invariants(store: Store, document_id: int, size: int) -> None:
    text = store.document_text(document_id)
    passages = store.passages(document_id)
    pages = store.pages(document_id)
    assert passages, "an imported document has passages"
    assert [p.idx for p in passages] == list(range(len(passages)))
    for p in passages:
        assert p.text == text[p.start : p.end]
    assert_spans_valid(text, [(p.start, p.end) for p in passages], size)
    if pages:
        assert [pg.number for pg in pages] == list(range(1, len(pages) + 1))
        assert all(a.end <= b.start for a, b in itertools.pairwise(pages))
        by_number = {pg.number: pg for pg in pages}
        for p in passages:
            assert by_number[p.page_start].start <= p.start < by_number[p.page_start].end
            assert by_number[p.page_end].start < p.end <= by_number[p.page_end].end
    vectors = store.vectors(document_id)
    assert vectors.shape[0] == len(passages)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    stored_terms = dict(
        ((pid, term), tf)
        for pid, term, tf in store.db.execute(
            "SELECT t.passage_id, t.term, t.tf FROM passage_terms t JOIN passages p "
            "ON p.id = t.passage_id WHERE p.document_id = ?",
            [document_id],
        ).fetchall()
    )
    expected = {(p.id, term): tf for p in passages for term, tf in term_counts(p.text).items()}
    assert stored_terms == expected


def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
