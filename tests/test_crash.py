"""A real `knownote import` killed with SIGKILL leaves a database that opens whole.

Each kill lands at another stage of importing a real PDF (start-up, extract, embed, the store
transaction); after each the whole database is checked (tests/invariants.py): every document
complete, no orphan rows or kept files, the document imported before untouched. The same file then
imports to the end. benchmarks/crash_import.py runs twenty and more random kills on a long book.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from knownote.settings import Settings
from knownote.store import Store
from tests.conftest import corpus_file
from tests.invariants import assert_store_consistent
from tests.killing import ROOT, Kill, counts, delete_imported, run_trial, start_import

pytestmark = pytest.mark.slow

PDF = "docs/pdf/paper_naacl06_shinyama_2col.pdf"
KEEP = "docs/web_text/md_wikipedia_gravity_hill.md"
KILLS = [
    Kill(1.5),  # interpreter and imports, before the database is opened
    Kill(0.0, "extract"),
    Kill(1.0, "embed"),  # loading the model or embedding
    Kill(0.0, "store"),  # writing the kept file and the one transaction
    Kill(0.2, "store"),
]


def test_killed_imports_leave_a_whole_database_and_the_file_imports_again(tmp_path):
    pdf, keep = corpus_file(PDF), corpus_file(KEEP)
    settings = Settings()
    db = tmp_path / "knownote.duckdb"
    subprocess.run(
        [sys.executable, "-m", "knownote.cli", "--db", str(db), "import", "Book", str(keep)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    kept = counts(db)
    trials = []
    for kill in KILLS:
        trial = run_trial(
            db, "Book", pdf, kill,
            size=settings.passage_size, overlap=settings.passage_overlap, timeout=300,
        )  # fmt: skip
        trials.append(trial)
        delete_imported(db, "Book", pdf.name)
        assert counts(db) == kept
    landed = [t.landed for t in trials]
    assert "start" in landed and "store" in landed, landed
    assert any(t.landed == "store" and not t.committed for t in trials), landed

    run = start_import(db, "Book", [pdf])
    assert run.process.wait(timeout=300) == 0, run.process.stdout.read()
    store = Store.open(db)
    try:
        assert assert_store_consistent(store, settings.passage_size, settings.passage_overlap) == 2
        book = store.notebook_by_name("Book")
        assert [d.filename for d in store.documents(book.id)] == [keep.name, pdf.name]
    finally:
        store.close()
