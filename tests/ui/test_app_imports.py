"""The import queue in the Sources view, through AppTest (the app's worker runs in this process)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import duckdb

from knownote.settings import Settings
from knownote.store.db import Store
from knownote.store.jobs import INTERRUPTED, JobQueue
from tests.pipeline.test_worker import typed_pdf
from tests.ui.test_app import (
    NOTES,
    TIMEOUT,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
    upload,
)

__all__ = ["home"]  # the fixture, shared with test_app


def sources(at):
    at.radio(key="view").set_value("Sources").run()
    assert not at.exception
    return at


def running_job(home: Path, stage: str, done: int, total: int) -> int:
    """A job row as the worker leaves it mid-import (written beside the app, not by it)."""
    db = duckdb.connect(str(Settings().with_(home=home).db_path))
    try:
        (notebook_id,) = db.execute("SELECT min(id) FROM notebooks").fetchone()
        (job_id,) = db.execute(
            "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, status, "
            "label, stage, done, total) VALUES (?, 'book.pdf', 'x', 1, 500, 'running', "
            "'book.pdf', ?, ?, ?) RETURNING id",
            [notebook_id, stage, done, total],
        ).fetchone()
    finally:
        db.close()
    return job_id


def test_a_running_import_shows_the_stage_it_reports_and_can_be_cancelled(home: Path):
    at = create_notebook(start(home))
    job_id = running_job(home, "Reading page 3 of 12 by OCR", 3, 12)
    at.run()
    assert "**Importing**" in texts(at)
    (bar,) = at.get("progress")
    assert "book\\.pdf: Reading page 3 of 12 by OCR" in bar.proto.text  # no "(3 of 12)" again
    at.button(key=f"cancel_job_{job_id}").click().run()
    assert not at.exception
    assert JobQueue(store_for(home)).job(job_id).cancel_requested
    assert "Cancelling…" in texts(at)


def test_embedding_progress_counts_passages(home: Path):
    at = create_notebook(start(home))
    running_job(home, "embed", 256, 1000)
    at.run()
    (bar,) = at.get("progress")
    assert r"Embedding passages \(256 of 1,000\)" in bar.proto.text  # escaped Markdown
    assert 0.5 < bar.proto.value / 100 < 0.75  # the third of four stages, a quarter through


def test_a_model_made_on_first_use_is_named_in_the_progress(home: Path):
    at = create_notebook(start(home))
    running_job(home, "model", 0, 1)
    at.run()
    (bar,) = at.get("progress")
    assert "Preparing the embedding model" in bar.proto.text
    assert 0.5 <= bar.proto.value / 100 < 0.75  # where the embedding starts


def test_embedding_says_passages_a_second_and_the_time_left_of_the_file_and_queue(home: Path):
    at = create_notebook(start(home))
    line = "Paragraph {} on how fast an import goes and how long it has left. "
    text = "\n\n".join(line.format(i) * 8 for i in range(300)).encode()
    key = f"upload_{at.session_state['upload_round']}"
    files = [("long.txt", text, "text/plain"), ("later.txt", text + b" Again.", "text/plain")]
    at.file_uploader(key=key).set_value(files).run()
    deadline = time.monotonic() + TIMEOUT
    while not any("passages/s" in bar.proto.text for bar in at.get("progress")):
        assert time.monotonic() < deadline, "no rate was shown while the file embedded"
        time.sleep(0.2)
        at.run()
    assert not at.exception
    (bar,) = at.get("progress")
    said = r"long\\.txt: Embedding passages .*; [\d.\\]+ passages/s, (about|under) .* left$"
    assert re.search(said, bar.proto.text), bar.proto.text
    queue = r"The queue: 2 files to go, (about|under) .* left at [\d.]+ passages/s"
    assert re.search(queue, texts(at)), texts(at)
    settle(at)


def test_uploads_are_listed_with_their_outcome_in_a_second_session_too(home: Path):
    first = create_notebook(start(home))
    upload(first, ("notes.txt", NOTES.encode(), "text/plain"), ("empty.pdf", b"", ""))
    second = start(home)
    for at in (first, sources(second)):
        shown = texts(at)
        assert "**Last import**" in shown
        assert f"✓ notes\\.txt: 1 passage, {len(NOTES)} characters" in shown
        assert at.error[0].value.startswith("empty\\.pdf\\: empty\\.pdf is empty")
    second.button(key="dismiss_results").click().run()
    assert "Last import" not in texts(second)
    assert JobQueue(store_for(home)).jobs() == []


def test_after_a_restart_an_interrupted_import_is_imported_again_with_one_click(
    home: Path, embedder
):
    store = Store.open(Settings().with_(home=home).db_path)
    notebook = store.create_notebook("Reading", embedder.name, embedder.dim)
    queue = JobQueue(store)
    job = queue.enqueue(notebook.id, "notes.txt", NOTES.encode(), 500)
    queue.claim_next()  # the last process stopped while this job ran
    store.close()
    at = sources(start(home))
    assert JobQueue(store_for(home)).job(job.id).status == INTERRUPTED
    assert "notes\\.txt: interrupted when the app stopped" in texts(at)
    at.button(key=f"again_job_{job.id}").click().run()
    settle(at)
    assert f"✓ notes\\.txt: 1 passage, {len(NOTES)} characters" in texts(at)
    assert "1 source · 1 used in answers" in at.main.subheader[0].value


def test_an_interrupted_import_can_be_removed(home: Path, embedder):
    store = Store.open(Settings().with_(home=home).db_path)
    notebook = store.create_notebook("Reading", embedder.name, embedder.dim)
    job = JobQueue(store).enqueue(notebook.id, "notes.txt", NOTES.encode(), 500)
    store.close()
    at = sources(start(home))
    at.button(key=f"remove_job_{job.id}").click().run()
    assert not at.exception
    assert "interrupted" not in texts(at)
    queue = JobQueue(store_for(home))
    assert queue.jobs() == [] and not any(queue.files_dir.iterdir())


def test_a_running_reindex_shows_passages_done_and_that_search_works(home: Path):
    at = create_notebook(start(home))
    job_id = running_job(home, "reindex", 256, 1000)
    db = duckdb.connect(str(Settings().with_(home=home).db_path))
    try:
        db.execute(
            "UPDATE import_jobs SET kind = 'reindex', sha256 = '', filename = ? WHERE id = ?",
            ["Re-indexing sources for titles and sections", job_id],
        )
    finally:
        db.close()
    at = sources(at)
    (bar,) = at.get("progress")
    assert "256 of 1,000 passages; now book\\.pdf; search works meanwhile" in bar.proto.text
    assert bar.proto.value == 25


def test_transcription_progress_counts_minutes(home: Path):
    at = create_notebook(start(home))
    running_job(home, "transcribe", 11, 48)
    at.run()
    (bar,) = at.get("progress")
    assert "Transcribing minute 12 of 48" in bar.proto.text


def test_pasted_addresses_are_queued_and_other_words_named(home: Path):
    at = sources(create_notebook(start(home)))
    # Private addresses: the app's worker refuses them without connecting anywhere.
    at.text_area(key="addresses").set_value(
        "http://10.0.0.1/a\nnotes.pdf http://10.0.0.2/b\nhttp://10.0.0.1/a"
    )
    at.button(key="import_addresses").click().run()
    assert not at.exception
    assert any("notes" in w.value and "10.0.0" not in w.value for w in at.warning)
    queue = JobQueue(store_for(home))
    assert sorted((job.kind, job.filename) for job in queue.jobs()) == [
        ("web", "http://10.0.0.1/a"),
        ("web", "http://10.0.0.2/b"),
    ]


def test_read_again_by_ocr_adds_a_new_version_beside_the_source(home: Path):
    at = create_notebook(start(home))
    upload(at, ("memo.pdf", typed_pdf(), "application/pdf"))
    sources(at)
    (first,) = store_for(home).documents(store_for(home).notebook_by_name("Reading").id)
    at.button(key=f"read_by_ocr_{first.id}").click().run()
    assert not at.exception
    settle(at)
    assert "2 sources · 2 used in answers" in at.main.subheader[0].value
    shown = texts(at)
    assert "⚠ Read again by OCR\\: version 2 of this file, beside the earlier one\\." in shown
    assert "✓ memo\\.pdf (read again by OCR): 1 page, 1 passage" in shown


def test_an_audio_overview_in_the_queue_says_the_line_spoken_then_its_length(home: Path):
    at = create_notebook(start(home))
    db = duckdb.connect(str(Settings().with_(home=home).db_path))
    try:
        (notebook_id,) = db.execute("SELECT min(id) FROM notebooks").fetchone()
        db.execute(
            "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, status, "
            "label, stage, done, total, kind, passages, warnings) VALUES "
            "(?, 'Audio overview: Deep Dive', '', 0, 0, 'running', 'Speaking line 12 of 40', "
            "'audio-overview', 11, 40, 'audio-overview', 0, []), "
            "(?, 'Audio overview: Brief', '', 0, 0, 'imported', NULL, 'audio-overview', 9, 9, "
            "'audio-overview', 9, ['1:02 of audio, 9 lines; 2 written lines dropped', 'a note'])",
            [notebook_id, notebook_id],
        )
    finally:
        db.close()
    at.run()
    (bar,) = at.get("progress")
    assert r"Audio overview\: Deep Dive: Speaking line 12 of 40" in bar.proto.text  # escaped
    assert bar.proto.value == 27
    said = texts(at)
    assert r"✓ Audio overview\: Brief: 1\:02 of audio, 9 lines; 2 written lines dropped" in said
    assert "a note" in said
