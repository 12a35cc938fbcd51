"""Every real document in ../shared/corpus/docs imports, or fails for the reason SOURCES.md gives.

For every imported document the offset invariants hold on the stored rows.
"""

from __future__ import annotations

import re

import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from tests.conftest import DOCS
from tests.invariants import assert_document_invariants

PASSWORDS = {"enc_password_openpassword.pdf": "openpassword", "enc_password_test_4p.pdf": "test"}
MUST_FAIL = {
    "broken_empty_0_bytes.pdf": r"empty",
    "broken_unreadable_pages_tree.pdf": r"damaged|unreadable|no pages",
    "broken_truncated_multicolumn.pdf": r"damaged|unreadable|truncated|no pages",
}
# Pages read by OCR: the scans, and the pages whose only content is an image (Free Culture's
# cover, and p. 255, a full-page figure under a running head). No other page of the corpus.
OCR_PAGES = {
    "cjk_zh_scanned_ocr_auditor_letter.pdf": [1, 2, 3, 4, 5, 6],
    "scan_book_page_image_only.pdf": [1],
    "book_free_culture_lessig_352p.pdf": [1, 255],
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
    assert store.ocr_page_numbers(result.document_id) == OCR_PAGES.get(path.name, [])


def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
