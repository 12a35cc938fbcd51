"""Re-embedding a notebook with the multilingual model: the old model searches until the switch,
a stopped re-embed goes on from where it was, and two models' vectors are never mixed."""

from __future__ import annotations

import numpy as np
import pytest

from knownote.index.context import IN_CONTEXT, embedding_text
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.pipeline.reembed import reembed_notebook
from knownote.search.retrieve import search
from knownote.store.reembed import reembed_of, staged_table
from tests.conftest import corpus_file
from tests.invariants import assert_store_consistent

GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
NOTES = (
    b"The Eiffel Tower was finished in 1889 for the World's Fair in Paris.\n\n"
    b"Photosynthesis turns light, water and carbon dioxide into sugar and oxygen."
)


class Stop(Exception):
    pass


@pytest.fixture(scope="module")
def e5():
    return get_embedder("multilingual-e5-small-int8")


@pytest.fixture
def english_notebook(store, notebook, settings):
    """A notebook made with the packaged English model, holding two sources."""
    path = corpus_file(GRAVITY)
    import_file(store, notebook, path.name, path.read_bytes(), settings=settings)
    import_file(store, notebook, "notes.txt", NOTES, settings=settings)
    return store.notebook(notebook.id)


def top(store, notebook_id, embedder, question):
    hits = search(store, embedder, notebook_id, question, k=1, mode="vector")
    return store.document(hits[0].document_id).filename


def staged_rows(store, dim=384):
    return store.db.execute(f"SELECT count(*) FROM {staged_table(dim)}").fetchone()[0]


def test_a_notebook_moves_to_the_new_model_with_every_vector_its(store, english_notebook, e5):
    assert reembed_notebook(store, e5, english_notebook.id) == 2
    notebook = store.notebook(english_notebook.id)
    assert (notebook.embedding_model, notebook.embedding_dim) == (e5.name, 384)
    for document in store.documents(notebook.id):
        text = store.document_text(document.id)
        passages = store.passages(document.id)
        expected = e5.embed_passages(
            [embedding_text(document.title, p.section, text[p.start : p.end]) for p in passages]
        )
        stored = np.array(
            [
                store.db.execute(
                    "SELECT embedding FROM vectors_384 WHERE passage_id = ?", [p.id]
                ).fetchone()[0]
                for p in passages
            ]
        )
        assert np.allclose(stored, expected, atol=1e-6)
        assert document.embedded_as == IN_CONTEXT
    assert reembed_of(store, notebook.id) is None and staged_rows(store) == 0
    assert top(store, notebook.id, e5, "Wann wurde der Eiffelturm fertiggestellt?") == "notes.txt"
    assert assert_store_consistent(store, 500, 50) == 2


def test_a_stopped_reembed_leaves_the_old_model_searching_and_goes_on_later(
    store, english_notebook, e5, embedder, settings
):
    before = search(store, embedder, english_notebook.id, "gravity hill", k=5)
    seen = []

    def stop_after_the_first_source(title, done, total):
        seen.append(title)
        if len(set(seen) - {""}) > 1:
            raise Stop

    with pytest.raises(Stop):
        reembed_notebook(store, e5, english_notebook.id, stop_after_the_first_source)
    assert store.notebook(english_notebook.id).embedding_model == embedder.name
    assert staged_rows(store) > 0 and reembed_of(store, english_notebook.id).model == e5.name
    assert search(store, embedder, english_notebook.id, "gravity hill", k=5) == before
    assert_store_consistent(store, 500, 50)
    # Imported meanwhile, with the notebook's model: re-embedded before the switch.
    import_file(
        store, english_notebook, "more.txt", b"Optical illusions fool the eye.", settings=settings
    )
    assert reembed_notebook(store, e5, english_notebook.id) == 2  # the rest, not all three
    assert store.notebook(english_notebook.id).embedding_model == e5.name
    assert assert_store_consistent(store, 500, 50) == 3


def test_another_model_starts_over_and_deleting_the_notebook_leaves_nothing_staged(
    store, english_notebook, e5
):
    from knownote.notebooks import delete_notebook

    with pytest.raises(Stop):
        reembed_notebook(
            store,
            e5,
            english_notebook.id,
            lambda t, d, n: (_ for _ in ()).throw(Stop) if d else None,
        )
    delete_notebook(store, english_notebook.id)
    assert staged_rows(store) == 0
    assert store.db.execute("SELECT count(*) FROM reembeds").fetchone() == (0,)
    assert_store_consistent(store, 500, 50)


def test_the_worker_reembeds_in_the_background_and_a_cancel_keeps_the_old_model(
    store, english_notebook, e5, embedder, settings, monkeypatch
):
    from knownote.pipeline.worker import ImportWorker
    from knownote.store.jobs import CANCELLED, IMPORTED, JobQueue

    models = {e5.name: e5, embedder.name: embedder}
    worker = ImportWorker(JobQueue(store), settings, models.__getitem__)
    job = worker.queue_reembed(english_notebook.id, e5.name)
    report = worker.queue.report

    def cancel_while_running(job_id, *progress):
        worker.queue.cancel(job_id)  # the person presses Cancel
        return report(job_id, *progress)

    monkeypatch.setattr(worker.queue, "report", cancel_while_running)
    worker.run_once()
    monkeypatch.setattr(worker.queue, "report", report)
    assert worker.queue.job(job.id).status == CANCELLED
    assert store.notebook(english_notebook.id).embedding_model == embedder.name
    assert reembed_of(store, english_notebook.id) is None and staged_rows(store) == 0
    job = worker.queue_reembed(english_notebook.id, e5.name)
    worker.run_once()
    assert worker.queue.job(job.id).status == IMPORTED
    assert worker.queue.job(job.id).passages == sum(
        d.passages for d in store.documents(english_notebook.id)
    )
    assert store.notebook(english_notebook.id).embedding_model == e5.name


def test_the_reindex_command_reembeds_a_named_notebook(
    capsys, db_path, store, english_notebook, e5
):
    from knownote.cli import main

    store.close()
    assert main(["--db", str(db_path), "reindex", english_notebook.name, "--model", e5.name]) == 0
    assert f"re-embedded with {e5.name} (2 documents)" in capsys.readouterr().out
    assert main(["--db", str(db_path), "reindex", "--model", e5.name]) == 1
    assert "Name the notebook to re-embed" in capsys.readouterr().err
