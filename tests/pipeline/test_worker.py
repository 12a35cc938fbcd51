"""The import worker with the real embedding model, real files and a real database file."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import knownote.pipeline.worker
from knownote.notebooks import delete_notebook
from knownote.pipeline.worker import ImportWorker, app_stopping
from knownote.store.db import Store
from knownote.store.jobs import (
    CANCELLED,
    DUPLICATE,
    FAILED,
    IMPORTED,
    INTERRUPTED,
    PASSWORD,
    RUNNING,
    JobQueue,
)
from tests.conftest import corpus_file
from tests.invariants import assert_queue_consistent, assert_store_consistent, row_counts

NOTES = b"Dense retrieval encodes passages as vectors.\n\nKeyword search counts shared terms."


@pytest.fixture
def worker(store: Store, settings, embedder):
    return ImportWorker(JobQueue(store), settings, lambda name: embedder)


def consistent(store: Store, settings) -> None:
    assert_store_consistent(store, settings.passage_size, settings.passage_overlap)
    assert_queue_consistent(store)


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_queued_file_is_imported_with_its_counts(worker, store, notebook, settings):
    job = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    assert worker.run_once() is True
    done = worker.queue.job(job.id)
    assert (done.status, done.passages, done.chars) == (IMPORTED, 1, len(NOTES))
    assert store.document(done.document_id).filename == "notes.txt"
    assert (done.stage, done.done, done.total) == ("store", 1, 1)  # the last progress it saw
    assert worker.run_once() is False
    consistent(store, settings)


def test_the_jobs_passage_size_is_used(worker, store, notebook):
    text = ("A sentence about passages and offsets. " * 40).encode()
    job = worker.queue.enqueue(notebook.id, "long.txt", text, 200)
    worker.run_once()
    passages = store.passages(worker.queue.job(job.id).document_id)
    assert max(p.end - p.start for p in passages) <= 200


def test_the_same_file_twice_is_a_duplicate(worker, notebook):
    worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    second = worker.queue.enqueue(notebook.id, "again.txt", NOTES, 500)
    worker.run_once()
    worker.run_once()
    assert worker.queue.job(second.id).status == DUPLICATE


def test_a_broken_file_fails_with_its_reason(worker, store, notebook, settings):
    job = worker.queue.enqueue(notebook.id, "empty.pdf", b"", 500)
    worker.run_once()
    failed = worker.queue.job(job.id)
    assert failed.status == FAILED and "empty.pdf is empty" in failed.error
    consistent(store, settings)


def test_an_encrypted_pdf_waits_for_its_password(worker, store, notebook, settings):
    data = corpus_file("docs/pdf/enc_password_test_4p.pdf").read_bytes()
    job = worker.queue.enqueue(notebook.id, "locked.pdf", data, 500)
    worker.run_once()
    assert (worker.queue.job(job.id).status, worker.queue.job(job.id).password_wrong) == (
        PASSWORD,
        False,
    )
    worker.give_password(job.id, "nope")
    worker.run_once()
    assert (worker.queue.job(job.id).status, worker.queue.job(job.id).password_wrong) == (
        PASSWORD,
        True,
    )
    worker.give_password(job.id, "test")
    worker.run_once()
    done = worker.queue.job(job.id)
    assert (done.status, done.pages) == (IMPORTED, 4)
    assert "test" not in str(row_counts(store)) and "test" not in str(worker.queue.jobs())
    consistent(store, settings)


def test_cancelling_a_running_import_stores_nothing(worker, store, notebook, settings):
    text = "\n\n".join(
        f"Paragraph {i} about retrieval, offsets and passages." * 8 for i in range(40)
    )
    worker.start()
    job = worker.queue.enqueue(notebook.id, "long.txt", text.encode(), 500)
    worker.wake()
    try:
        wait_for(lambda: worker.queue.job(job.id).stage == "embed")
        worker.queue.cancel(job.id)
        wait_for(lambda: worker.queue.job(job.id).status != RUNNING)
    finally:
        worker.stop()
    assert worker.queue.job(job.id).status == CANCELLED
    assert store.documents(notebook.id) == []
    assert row_counts(store)["passages"] == 0
    consistent(store, settings)


def test_stopping_the_process_mid_import_leaves_the_job_unfinished(worker, store, notebook):
    text = "\n\n".join(f"Paragraph {i} about stopping and starting again." * 8 for i in range(40))
    worker.start()
    job = worker.queue.enqueue(notebook.id, "long.txt", text.encode(), 500)
    worker.wake()
    wait_for(lambda: worker.queue.job(job.id).stage == "embed")
    worker.stop()
    assert worker.queue.job(job.id).status == RUNNING  # the next start says interrupted
    assert store.documents(notebook.id) == []


def test_the_thread_imports_what_is_queued_while_it_runs(worker, store, notebook, settings):
    worker.start()
    try:
        job = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
        worker.wake()
        wait_for(lambda: worker.queue.job(job.id).finished)
    finally:
        worker.stop()
    assert worker.queue.job(job.id).status == IMPORTED
    consistent(store, settings)


def test_a_job_whose_notebook_was_deleted_goes(worker, store, notebook):
    worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    delete_notebook(store, notebook.id)
    worker.run_once()
    assert worker.queue.jobs() == []


def test_after_a_restart_an_interrupted_job_imports_again(store, settings, embedder, notebook):
    queue = JobQueue(store)
    job = queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    queue.claim_next()  # the process stops here, mid-import
    path = store.path
    store.close()
    reopened = Store.open(path)
    try:
        worker = ImportWorker(JobQueue(reopened), settings, lambda name: embedder).start()
        try:
            assert worker.queue.job(job.id).status == INTERRUPTED
            worker.queue.requeue(job.id)
            worker.wake()
            wait_for(lambda: worker.queue.job(job.id).finished)
        finally:
            worker.stop()
        assert worker.queue.job(job.id).status == IMPORTED
        consistent(reopened, settings)
    finally:
        reopened.close()


def test_overviews_asked_for_are_written_once_the_imports_are_done(worker, store, notebook):
    from knownote.answer.ollama_chat import OllamaChat
    from knownote.answer.overview import load_overview
    from tests.answer.test_overview import REPLY
    from tests.ollama_standin import OllamaStandIn

    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md").read_bytes()
    with OllamaStandIn(reply=REPLY) as server:
        first = worker.queue.enqueue(notebook.id, "gravity.md", gravity, 500)
        second = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
        for job in (first, second):
            worker.overview_after(job.id, OllamaChat(server.url, 10), "llama3.2")
        assert worker.run_once() is True
        document_id = worker.queue.job(first.id).document_id
        assert worker.overviews_due() == {document_id}
        assert worker.run_once() is True  # the next import goes first
        assert len(worker.overviews_due()) == 2 and server.chats() == []
        assert worker.run_once() is False
        assert worker.write_next_overview() and worker.write_next_overview()
        assert not worker.write_next_overview()
        assert len(server.chats()) == 2
    overview = load_overview(store, document_id)
    assert overview.model == "llama3.2" and overview.questions[0] == "What is a gravity hill?"
    assert worker.overviews_due() == set() and worker.overview_errors == {}


def test_an_overview_the_model_cannot_write_is_said_and_the_import_stays(
    worker, store, notebook, settings
):
    from knownote.answer.ollama_chat import OllamaChat
    from tests.ollama_standin import free_port

    job = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    worker.overview_after(job.id, OllamaChat(f"http://127.0.0.1:{free_port()}", 2), "m")
    worker.run_once()
    document_id = worker.queue.job(job.id).document_id
    assert worker.write_next_overview()
    assert worker.queue.job(job.id).status == IMPORTED
    assert store.overview(document_id) is None
    assert "Ollama" in worker.overview_errors[document_id]
    consistent(store, settings)


def typed_pdf() -> bytes:
    """A one-page PDF with a text layer: a typed memo's two lines."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=420, height=200)
    page.insert_text((20, 60), "Desiring to keep you posted", fontsize=22)
    page.insert_text((20, 110), "on the membership of 2021.", fontsize=22)
    return doc.tobytes()


def test_read_again_by_ocr_makes_a_new_version_read_by_ocr(store, notebook, settings, embedder):
    settings = settings.with_(ocr_engine="rapidocr")
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    first = worker.queue.enqueue(notebook.id, "memo.pdf", typed_pdf(), 500)
    worker.run_once()
    source = worker.queue.job(first.id).document_id
    assert store.ocr_page(source, 1) is None  # its text layer was read
    job = worker.read_again_by_ocr(source)
    assert (job.status, job.document_id) == ("queued", source)
    worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == IMPORTED, done.error
    assert done.document_id != source
    assert store.file_versions(notebook.id, store.document(source).sha256) == [
        source,
        done.document_id,
    ]
    version = store.document(done.document_id)
    assert version.warnings[0].startswith("Read again by OCR: version 2 of this file")
    assert store.ocr_page(done.document_id, 1) is not None  # every page read by OCR
    text = store.document_text(done.document_id)
    assert "membership" in text and "2021" in text
    assert all(p.text == text[p.start : p.end] for p in store.passages(done.document_id))
    assert store.document(source).title == version.title  # the old version stays as it was
    consistent(store, settings)


def test_a_text_source_cannot_be_read_by_ocr(worker, store, notebook):
    first = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    worker.run_once()
    job = worker.read_again_by_ocr(worker.queue.job(first.id).document_id)
    worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED
    assert "only PDFs and images can be read by OCR" in done.error


def test_cards_are_made_in_the_queue_with_progress_in_sources(worker, store, notebook):
    from knownote.store.jobs import CARDS
    from knownote.study.cards import cards

    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md").read_bytes()
    worker.queue.enqueue(notebook.id, "gravity.md", gravity, 500)
    worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    job = worker.queue_cards(notebook.id)
    assert worker.queue_cards(notebook.id).id == job.id  # one unfinished cards job at a time
    while worker.run_once():
        pass
    done = worker.queue.job(job.id)
    made = cards(store, notebook.id)
    assert (done.kind, done.status, done.stage) == (CARDS, IMPORTED, CARDS)
    assert (done.done, done.total) == (2, 2) and done.passages == len(made) > 0
    again = worker.queue_cards(notebook.id)
    assert again.id != job.id and worker.run_once()
    assert worker.queue.job(again.id).passages == 0 and cards(store, notebook.id) == made


def test_cards_a_model_writes_in_the_queue_say_how_many_were_kept(worker, store, notebook):
    from knownote.answer.ollama_chat import OllamaChat
    from tests.ollama_standin import OllamaStandIn

    worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    reply = "Q: What does dense retrieval encode?\nA: passages as vectors"
    with OllamaStandIn(reply=reply) as server:
        job = worker.queue_cards(notebook.id, OllamaChat(server.url, 10), "llama3.2")
        while worker.run_once():
            pass
    done = worker.queue.job(job.id)
    assert done.filename == "Making study cards with llama3.2" and done.status == IMPORTED
    assert done.warnings == ("llama3.2 wrote 1 card; 1 kept after the support check",)


# A job thread that meets a thread pool closed by the app's stopping: the pool refuses work as
# soon as threading's exit hooks run, a moment before the main thread counts as stopped.
STOPPING = """
import concurrent.futures, threading, time
from knownote.pipeline.worker import app_stopping

pool = concurrent.futures.ThreadPoolExecutor(1)

def job():
    while True:
        try:
            pool.submit(time.sleep, 0.001).result()
        except RuntimeError as e:
            print("stopping" if app_stopping(e) else "a bug", flush=True)
            return

threading.Thread(target=job).start()
time.sleep(0.2)
"""


def test_a_pool_closed_by_the_app_stopping_leaves_the_job_to_resume():
    root = Path(__file__).resolve().parents[2]
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", STOPPING], cwd=root, capture_output=True, text=True, timeout=60
        )
        assert done.stdout.split() == ["stopping"], done.stderr[-2000:]


def test_an_error_while_the_app_runs_is_a_failure(monkeypatch):
    monkeypatch.setattr(knownote.pipeline.worker, "STOPPING_WAIT", 0.05)
    assert not app_stopping(RuntimeError("a bug"))
    assert not app_stopping(ValueError("another"))


def test_a_running_import_says_its_rate_and_the_queue_its_time_left(worker, notebook):
    line = "Paragraph {} on embedding rates and the time left. "
    text = "\n\n".join(line.format(i) * 8 for i in range(300))
    worker.start()
    try:
        first = worker.queue.enqueue(notebook.id, "long.txt", text.encode(), 500)
        worker.queue.enqueue(notebook.id, "later.txt", text.encode() + b" Again.", 500)
        worker.wake()
        wait_for(lambda: (pace := worker.pace(first.id)) is not None and pace.rate() is not None)
        pace = worker.pace(first.id)
        own_left = pace.seconds_left()
        queue_left = worker.queue_seconds_left(worker.queue.jobs(notebook.id))
    finally:
        worker.stop()
    assert 0 < pace.done < pace.total and pace.rate() > 0
    assert own_left > 0
    assert queue_left > own_left  # the waiting file of the same size counts too


def test_the_next_file_is_read_while_one_embeds_and_imports_as_read_in_its_turn(
    worker, store, notebook, settings
):
    paper = corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf").read_bytes()
    first = worker.queue.enqueue(notebook.id, "notes.txt", NOTES, 500)
    second = worker.queue.enqueue(notebook.id, "教材.pdf", paper, 500)
    broken = worker.queue.enqueue(notebook.id, "empty.pdf", b"", 500)
    assert worker.run_once() is True
    assert list(worker._ahead) == [second.id]  # begun when the notes' embedding began
    assert worker.run_once() is True
    assert list(worker._ahead) == [broken.id]
    assert worker.run_once() is True
    assert worker._ahead == {}
    done = [worker.queue.job(j.id) for j in (first, second, broken)]
    assert [j.status for j in done] == [IMPORTED, IMPORTED, FAILED]
    assert "empty.pdf is empty" in done[2].error
    document = done[1].document_id
    assert "中华人民共和国国务院侨务办公室" in store.document_text(document)
    assert store.read_file(store.document(document).sha256) == paper
    consistent(store, settings)
