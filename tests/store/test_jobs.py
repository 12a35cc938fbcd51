"""The import queue's rows and waiting files, on a real database file."""

from __future__ import annotations

import pytest

from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.store.db import Store, sha256_hex
from knownote.store.jobs import (
    CANCELLED,
    FAILED,
    IMPORTED,
    INTERRUPTED,
    PASSWORD,
    QUEUED,
    RUNNING,
    JobQueue,
)
from tests.invariants import assert_queue_consistent


@pytest.fixture
def queue(store: Store) -> JobQueue:
    return JobQueue(store)


def test_a_queued_file_keeps_its_bytes_under_their_hash(queue, notebook):
    job = queue.enqueue(notebook.id, "a.txt", b"alpha", 500)
    assert (job.status, job.filename, job.size, job.passage_size) == (QUEUED, "a.txt", 5, 500)
    assert (queue.files_dir / sha256_hex(b"alpha")).read_bytes() == b"alpha"
    assert queue.read_bytes(job) == b"alpha"
    assert [j.id for j in queue.jobs(notebook.id)] == [job.id]
    assert_queue_consistent(queue.store)


def test_the_oldest_queued_job_is_claimed_first(queue, notebook):
    first = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    second = queue.enqueue(notebook.id, "b.txt", b"b", 500)
    assert queue.claim_next().id == first.id
    assert queue.claim_next().id == second.id
    assert queue.claim_next() is None
    assert {j.status for j in queue.jobs()} == {RUNNING}


def test_progress_is_recorded_and_answers_whether_to_cancel(queue, notebook):
    job = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    queue.claim_next()
    assert queue.report(job.id, "a.txt", "Reading page 3 of 12 by OCR", 3, 12) is False
    shown = queue.job(job.id)
    assert (shown.stage, shown.done, shown.total) == ("Reading page 3 of 12 by OCR", 3, 12)
    queue.cancel(job.id)
    assert queue.job(job.id).status == RUNNING  # it stops at its next stage boundary
    assert queue.report(job.id, "a.txt", "embed", 4, 12) is True


def test_finishing_lets_the_file_go_unless_another_job_waits_with_it(queue, notebook):
    first = queue.enqueue(notebook.id, "a.txt", b"same", 500)
    second = queue.enqueue(notebook.id, "copy.txt", b"same", 500)
    queue.claim_next()
    queue.finish(first.id, FAILED, error="unreadable")
    assert queue.read_bytes(second) == b"same"
    queue.claim_next()
    queue.finish(second.id, CANCELLED)
    with pytest.raises(NotFound):
        queue.read_bytes(second)
    assert_queue_consistent(queue.store)


def test_cancelling_a_queued_job_removes_it_and_its_file(queue, notebook):
    job = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    queue.cancel(job.id)
    assert queue.jobs() == []
    assert_queue_consistent(queue.store)


def test_a_running_job_cannot_be_removed(queue, notebook):
    job = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    queue.claim_next()
    queue.remove(job.id)
    assert queue.job(job.id).status == RUNNING


def test_restart_marks_unfinished_jobs_interrupted_and_keeps_their_files(store, notebook):
    queue = JobQueue(store)
    running = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    queued = queue.enqueue(notebook.id, "b.txt", b"b", 500)
    locked = queue.enqueue(notebook.id, "c.pdf", b"c", 500)
    queue.claim_next()
    queue.claim_next()
    queue.claim_next()
    queue.wait_for_password(locked.id, wrong=False)
    queue.requeue(queued.id)  # a running job is not requeued
    (queue.files_dir / "stray").write_bytes(b"left by a killed upload")
    path = store.path
    store.close()
    reopened = Store.open(path)
    try:
        queue = JobQueue(reopened)
        assert queue.recover() == 2
        status = {j.id: j.status for j in queue.jobs()}
        assert status == {running.id: INTERRUPTED, queued.id: INTERRUPTED, locked.id: PASSWORD}
        assert queue.read_bytes(queue.job(running.id)) == b"a"
        assert_queue_consistent(reopened)
        queue.requeue(running.id)
        assert queue.job(running.id).status == QUEUED
    finally:
        reopened.close()


def test_a_deleted_notebook_takes_its_jobs_along(queue, store, notebook):
    running = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    queue.enqueue(notebook.id, "b.txt", b"b", 500)
    queue.claim_next()
    delete_notebook(store, notebook.id)
    queue.forget_notebook(notebook.id)
    assert [(j.id, j.cancel_requested) for j in queue.jobs()] == [(running.id, True)]


def test_dismissing_clears_only_finished_jobs(queue, notebook):
    done = queue.enqueue(notebook.id, "a.txt", b"a", 500)
    waiting = queue.enqueue(notebook.id, "b.txt", b"b", 500)
    queue.claim_next()
    queue.finish(done.id, IMPORTED)
    queue.clear_finished(notebook.id)
    assert [j.id for j in queue.jobs()] == [waiting.id]
