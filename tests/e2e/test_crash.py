"""A real `knownote import` killed with SIGKILL leaves a database that opens whole.

Each kill lands at another stage of importing a real PDF (start-up, extract, the model load or
embedding, the store transaction); after each the whole database is checked
(tests/invariants.py): every document complete, no orphan rows or kept files, the document
imported before untouched. The same file then imports to the end. benchmarks/crash_import.py
runs twenty and more random kills on a long book.
"""

from __future__ import annotations

import pytest

from knownote.pipeline.ingest import import_file
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.invariants import assert_store_consistent
from tests.killing import Kill, counts, delete_imported, run_trial

pytestmark = pytest.mark.slow

PDF = "docs/pdf/paper_naacl06_shinyama_2col.pdf"
KEEP = "docs/web_text/md_wikipedia_gravity_hill.md"
KILLS = [
    Kill(0.1),  # interpreter and imports, before the database is opened (0.5 s reaches extract)
    Kill(0.0, "extract"),
    Kill(0.5, "embed"),  # loading the model, or embedding
    Kill(0.0, "store"),  # writing the kept file and the one transaction
]


def test_killed_imports_leave_a_whole_database_and_the_file_imports_again(
    db_path, settings, embedder
):
    pdf, keep = corpus_file(PDF), corpus_file(KEEP)
    store = Store.open(db_path)
    notebook = store.create_notebook("Book", embedder.name, embedder.dim)
    kept = import_file(store, notebook, keep.name, keep.read_bytes(), settings=settings)
    assert kept.status == "imported"
    store.close()
    before = counts(db_path)
    trials = []
    for kill in KILLS:
        trial = run_trial(
            db_path, "Book", pdf, kill,
            size=settings.passage_size, overlap=settings.passage_overlap, timeout=300,
        )  # fmt: skip
        trials.append(trial)
        delete_imported(db_path, "Book", pdf.name)
        assert counts(db_path) == before
    print("kills landed in:", ", ".join(t.where for t in trials))
    assert trials[0].landed == "start", trials[0]
    assert trials[-1].landed == "store", trials[-1]

    store = Store.open(db_path)
    try:
        result = import_file(store, notebook, pdf.name, pdf.read_bytes(), settings=settings)
        assert result.status == "imported", result.error
        assert assert_store_consistent(store, settings.passage_size, settings.passage_overlap) == 2
    finally:
        store.close()
