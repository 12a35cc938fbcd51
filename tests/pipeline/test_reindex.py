"""Re-indexing documents imported before titles, sections and stemming: in the foreground, as a
job of the import worker, and searched correctly before, during and after."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from knownote.cli import main
from knownote.index.context import BEFORE, IN_CONTEXT, PLAIN, embedding_texts, index_passages
from knownote.pipeline.ingest import import_file
from knownote.pipeline.reindex import (
    is_stale,
    notebooks_to_reindex,
    read_missing_languages,
    reindex_notebook,
    stale_documents,
)
from knownote.pipeline.worker import ImportWorker
from knownote.search.retrieve import search
from knownote.store.db import Store
from knownote.store.jobs import CANCELLED, IMPORTED, REINDEX, JobQueue
from tests.conftest import corpus_file
from tests.invariants import assert_queue_consistent, assert_store_consistent

GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
NOTES = b"Dense retrieval encodes passages as vectors.\n\nKeyword search counts shared terms."


@pytest.fixture
def old_document(store, notebook, settings, embedder):
    """A document indexed the way before: the passage alone, plain words."""
    path = corpus_file(GRAVITY)
    result = import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder,
        recipe=BEFORE,
    )  # fmt: skip
    return store.document(result.document_id)


def test_an_old_document_is_stale_and_a_new_one_is_not(store, notebook, settings, embedder):
    new = import_file(store, notebook, "n.txt", NOTES, settings=settings, embedder=embedder)
    assert not is_stale(store.document(new.document_id))
    assert notebooks_to_reindex(store) == []
    old = import_file(
        store, notebook, "o.txt", NOTES + b"!", settings=settings, embedder=embedder,
        recipe=BEFORE,
    )  # fmt: skip
    document = store.document(old.document_id)
    assert (document.embedded_as, document.terms_as) == (PLAIN, "words")
    assert [d.id for d in stale_documents(store, notebook.id)] == [old.document_id]
    assert notebooks_to_reindex(store) == [notebook.id]


def test_reindexing_redoes_vectors_and_terms_and_keeps_the_passages(
    store, notebook, settings, embedder, old_document
):
    before = store.passages(old_document.id)
    seen = []
    assert reindex_notebook(store, embedder, notebook.id, lambda *a: seen.append(a)) == 1
    document = store.document(old_document.id)
    assert (document.embedded_as, document.terms_as) == (IN_CONTEXT, "stem:en")
    assert store.passages(old_document.id) == before  # offsets, text and sections unchanged
    text = store.document_text(old_document.id)
    again = index_passages(
        text, document.title, [(p.start, p.end) for p in before], [p.section for p in before],
        [(p.page_start, p.page_end) for p in before], "stem:en",
    )  # fmt: skip
    expected = embedder.embed_passages(embedding_texts(text, document.title, again, IN_CONTEXT))
    assert np.allclose(store.vectors(old_document.id), expected, atol=1e-5)
    assert seen[-1][1:] == (len(before), len(before))
    assert_store_consistent(store, settings.passage_size, settings.passage_overlap)
    assert stale_documents(store, notebook.id) == []
    hits = search(store, embedder, notebook.id, "optical illusion of a slope", k=3)
    assert hits and hits[0].document_id == old_document.id and hits[0].section


def test_a_document_deleted_meanwhile_is_skipped(store, notebook, embedder, old_document):
    def delete_on_start(title, done, total):
        if done == 0 and title:
            store.delete_document(old_document.id)

    assert reindex_notebook(store, embedder, notebook.id, delete_on_start) == 0
    assert store.documents(notebook.id) == []


def test_the_worker_queues_and_runs_a_reindex_job(store, settings, embedder, old_document):
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    worker.queue_reindexing()
    worker.queue_reindexing()  # once per notebook, however often asked
    [job] = worker.queue.jobs()
    assert job.kind == REINDEX
    assert worker.run_once() is True
    done = worker.queue.job(job.id)
    assert (done.status, done.stage) == (IMPORTED, "reindex")
    assert done.passages == done.total == old_document.passages
    assert not is_stale(store.document(old_document.id))
    assert_queue_consistent(store)
    worker.queue_reindexing()
    assert [j.id for j in worker.queue.jobs()] == [job.id]  # nothing left to redo


def test_cancelling_a_reindex_job_keeps_the_old_index(store, settings, embedder, old_document):
    queue = JobQueue(store)
    job = queue.enqueue_reindex(old_document.notebook_id)
    queue.claim_next()
    queue.cancel(job.id)  # asked while running: seen at the first progress report
    worker = ImportWorker(queue, settings, lambda name: embedder)
    worker._run(queue.job(job.id))
    assert queue.job(job.id).status == CANCELLED
    assert is_stale(store.document(old_document.id))
    assert search(store, embedder, old_document.notebook_id, "gravity hill", k=1)


def test_the_reindex_command_redoes_every_notebook(capsys, db_path, settings, embedder):
    store = Store.open(db_path)
    notebook = store.create_notebook("papers", embedder.name, embedder.dim)
    import_file(
        store, notebook, "o.txt", NOTES, settings=settings, embedder=embedder, recipe=BEFORE
    )
    store.close()
    assert main(["--db", str(db_path), "reindex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"notebook": "papers", "documents": 1}]
    assert main(["--db", str(db_path), "reindex"]) == 0
    assert "indexed with its titles and sections already" in capsys.readouterr().out


def test_reindexing_finds_the_headings_of_a_document_imported_before_they_were_kept(
    store, notebook, embedder, old_document
):
    kept = store.headings(old_document.id)
    sections = [p.section for p in store.passages(old_document.id)]
    assert kept and any(sections)
    store.replace_headings(old_document.id, [], [""] * len(sections))  # as before m016
    reindex_notebook(store, embedder, notebook.id)
    assert store.headings(old_document.id) == kept
    assert [p.section for p in store.passages(old_document.id)] == sections
    passages = store.passages(old_document.id)
    text = store.document_text(old_document.id)
    again = index_passages(
        text, old_document.title, [(p.start, p.end) for p in passages], sections,
        [(p.page_start, p.page_end) for p in passages], "stem:en",
    )  # fmt: skip
    expected = embedder.embed_passages(embedding_texts(text, old_document.title, again, IN_CONTEXT))
    assert np.allclose(store.vectors(old_document.id), expected, atol=1e-5)


def test_languages_are_read_at_import_and_for_documents_imported_before(
    store, notebook, settings, embedder
):
    path = corpus_file(GRAVITY)
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings)
    assert store.document(result.document_id).languages == ("en",)
    store.db.execute("UPDATE documents SET languages = NULL")  # as imported before m022
    assert store.document(result.document_id).languages is None
    assert read_missing_languages(store) == 1
    assert store.document(result.document_id).languages == ("en",)
    assert read_missing_languages(store) == 0


def test_the_worker_reads_missing_languages_when_it_is_idle(store, settings, embedder):
    notebook = store.create_notebook("old", embedder.name, embedder.dim)
    import_file(store, notebook, "notes.txt", NOTES, settings=settings)
    store.db.execute("UPDATE documents SET languages = NULL")
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder).start()
    try:
        deadline = time.monotonic() + 30
        while store.documents_without_languages(1) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
    assert [d.languages for d in store.documents(notebook.id)] == [("en",)]
