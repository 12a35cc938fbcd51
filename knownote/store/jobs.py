"""The import queue: one row per uploaded file in `import_jobs`, its bytes kept until it ends.

This module owns the `import_jobs` table and the folder of waiting files beside the database
(`<db>.queue/`, files named by their sha256, as the store keeps imported originals). The worker
in `knownote.pipeline.worker` takes jobs from here; the app's Sources view lists them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from knownote.errors import NotFound
from knownote.store.db import Store, sha256_hex

QUEUED = "queued"
RUNNING = "running"
PASSWORD = "password"  # an encrypted PDF waits for its password
INTERRUPTED = "interrupted"  # the app stopped while the job was queued or running
IMPORTED = "imported"
DUPLICATE = "duplicate"
FAILED = "failed"
CANCELLED = "cancelled"
UNFINISHED = (QUEUED, RUNNING, PASSWORD, INTERRUPTED)
FINISHED = (IMPORTED, DUPLICATE, FAILED, CANCELLED)
# Kinds of job: a file to import, or a notebook's documents to re-index
# (knownote.pipeline.reindex); a re-index job has no file, and counts its progress in passages.
IMPORT = "import"
REINDEX = "reindex"
REINDEX_LABEL = "Re-indexing sources for titles and sections"
# A notebook's passages given to another model (knownote.pipeline.reembed; the model waits in
# `reembeds`); like a re-index, no file, progress in passages.
REEMBED = "reembed"
NOTEBOOK_JOBS = (REINDEX, REEMBED)
# A source read again by OCR as a new version: its kept file is read, no bytes wait; until the
# job ends its document_id is the source's, then the new version's.
READ_BY_OCR = "ocr"
# A notebook's study cards made for the sources that have none (knownote.study.make); no file,
# progress in sources; when it ends, `passages` holds the cards kept.
CARDS = "cards"
CARDS_LABEL = "Making study cards"
# A web address to fetch and import: the address is the job's file name; no bytes wait.
WEB = "web"
# A notebook's mind map written by a model (knownote.study.mindmap): no file; progress in steps.
MINDMAP = "mindmap"
# A report of a notebook (knownote.study.reports): no file; progress in steps; when it ends,
# `passages` holds the lines kept. A notebook may have several queued at once.
REPORT = "report"
# An audio overview of a notebook (knownote.pipeline.audio_overview): like a report, no file;
# progress in the script's steps, then in lines spoken; when it ends, `passages` holds its lines.
AUDIO_OVERVIEW = "audio-overview"


@dataclass(frozen=True)
class Job:
    id: int
    notebook_id: int
    filename: str
    sha256: str
    size: int
    passage_size: int
    status: str
    label: str | None
    stage: str | None
    done: int
    total: int
    cancel_requested: bool
    password_wrong: bool
    document_id: int | None
    pages: int
    passages: int
    chars: int
    warnings: tuple[str, ...]
    error: str | None
    kind: str = IMPORT

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


_JOB_SQL = """
    SELECT id, notebook_id, filename, sha256, size, passage_size, status, label, stage, done,
           total, cancel_requested, password_wrong, document_id, pages, passages, chars,
           warnings, error, kind
    FROM import_jobs
"""


def _job(row: tuple) -> Job:
    return Job(*row[:17], tuple(row[17] or ()), row[18], row[19] or IMPORT)


class JobQueue:
    """The queue's rows and waiting files, through the store's connection and lock."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._memory: dict[str, bytes] = {}  # an in-memory database keeps its files here too

    # --- waiting files ----------------------------------------------------------------------

    @property
    def files_dir(self) -> Path | None:
        path = self.store.path
        return path.with_name(path.name + ".queue") if path else None

    def _save_bytes(self, data: bytes) -> str:
        digest = sha256_hex(data)
        folder = self.files_dir
        if folder is None:
            self._memory[digest] = data
            return digest
        target = folder / digest
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{digest}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, target)
        return digest

    def read_bytes(self, job: Job) -> bytes:
        folder = self.files_dir
        if folder is None:
            if job.sha256 in self._memory:
                return self._memory[job.sha256]
        elif (folder / job.sha256).exists():
            return (folder / job.sha256).read_bytes()
        raise NotFound(f"The file {job.filename} is no longer kept; upload it again.")

    def _discard_bytes_if_unused(self, sha256: str) -> None:
        """Delete a waiting file once no unfinished job needs it (under the lock: see enqueue)."""
        if not sha256:  # a job without a file (a re-index)
            return
        with self.store.lock:
            needed = self.store.db.execute(
                "SELECT 1 FROM import_jobs WHERE sha256 = ? AND status IN (?, ?, ?, ?)",
                [sha256, *UNFINISHED],
            ).fetchone()
            if needed:
                return
            self._memory.pop(sha256, None)
            folder = self.files_dir
            if folder is not None:
                (folder / sha256).unlink(missing_ok=True)

    # --- rows -------------------------------------------------------------------------------

    def enqueue(self, notebook_id: int, filename: str, data: bytes, passage_size: int) -> Job:
        """Keep the bytes and add a queued job for them."""
        # Under the lock from saving the file to the insert, so no discard can come in between.
        with self.store.lock:
            digest = self._save_bytes(data)
            (job_id,) = self.store.db.execute(
                "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                [notebook_id, filename, digest, len(data), passage_size],
            ).fetchone()
        return self.job(job_id)

    def enqueue_address(self, notebook_id: int, address: str, passage_size: int) -> Job:
        """Add a queued job that fetches `address` and imports what it serves."""
        with self.store.lock:
            (job_id,) = self.store.db.execute(
                "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, "
                "kind) VALUES (?, ?, '', 0, ?, ?) RETURNING id",
                [notebook_id, address, passage_size, WEB],
            ).fetchone()
        return self.job(job_id)

    def enqueue_read_by_ocr(self, document_id: int, passage_size: int) -> Job:
        """Add a queued job that reads a source's kept file again by OCR, as a new version."""
        document = self.store.document(document_id)
        with self.store.lock:
            (job_id,) = self.store.db.execute(
                "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, "
                "kind, document_id) VALUES (?, ?, ?, 0, ?, ?, ?) RETURNING id",
                [
                    document.notebook_id,
                    document.filename,
                    document.sha256,
                    passage_size,
                    READ_BY_OCR,
                    document_id,
                ],
            ).fetchone()
        return self.job(job_id)

    def enqueue_reindex(self, notebook_id: int) -> Job:
        """Queue a re-index of the notebook's old documents, unless one is already unfinished
        (then that one is returned; an interrupted one is queued again)."""
        return self._enqueue_notebook_job(notebook_id, REINDEX, REINDEX_LABEL)

    def enqueue_reembed(self, notebook_id: int, model: str) -> Job:
        """Queue the re-embedding of the notebook with `model` (recorded by
        `knownote.store.reembed.start_reembed`), unless one is already unfinished."""
        return self._enqueue_notebook_job(notebook_id, REEMBED, f"Re-embedding with {model}")

    def enqueue_cards(self, notebook_id: int, model: str | None = None) -> Job:
        """Queue the making of the notebook's missing cards (with `model`'s too, when given),
        unless a cards job is already unfinished."""
        label = f"{CARDS_LABEL} with {model}" if model else CARDS_LABEL
        return self._enqueue_notebook_job(notebook_id, CARDS, label)

    def enqueue_mind_map(self, notebook_id: int, model: str) -> Job:
        """Queue the writing of the notebook's mind map by `model`, unless one is unfinished."""
        return self._enqueue_notebook_job(notebook_id, MINDMAP, f"Mind map by {model}")

    def enqueue_report(self, notebook_id: int, label: str, kind: str = REPORT) -> Job:
        """Queue the making of a report (or an audio overview: `kind` AUDIO_OVERVIEW) of the
        notebook (what it is waits with the worker)."""
        with self.store.lock:
            (job_id,) = self.store.db.execute(
                "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, "
                "kind) VALUES (?, ?, '', 0, 0, ?) RETURNING id",
                [notebook_id, label, kind],
            ).fetchone()
        return self.job(job_id)

    def _enqueue_notebook_job(self, notebook_id: int, kind: str, label: str) -> Job:
        with self.store.lock:
            row = self.store.db.execute(
                "SELECT id FROM import_jobs WHERE notebook_id = ? AND kind = ? "
                "AND status IN (?, ?, ?, ?) ORDER BY id LIMIT 1",
                [notebook_id, kind, *UNFINISHED],
            ).fetchone()
            if row is None:
                (job_id,) = self.store.db.execute(
                    "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size, "
                    "kind) VALUES (?, ?, '', 0, 0, ?) RETURNING id",
                    [notebook_id, label, kind],
                ).fetchone()
            else:
                job_id = row[0]
        self.requeue(job_id)
        return self.job(job_id)

    def job(self, job_id: int) -> Job:
        with self.store.lock:
            row = self.store.db.execute(_JOB_SQL + " WHERE id = ?", [job_id]).fetchone()
        if row is None:
            raise NotFound(f"There is no import job {job_id}; it was removed.")
        return _job(row)

    def jobs(self, notebook_id: int | None = None) -> list[Job]:
        """Every job (of one notebook), oldest first."""
        where, params = (
            ("", []) if notebook_id is None else (" WHERE notebook_id = ?", [notebook_id])
        )
        with self.store.lock:
            rows = self.store.db.execute(_JOB_SQL + where + " ORDER BY id", params).fetchall()
        return [_job(row) for row in rows]

    def claim_next(self) -> Job | None:
        """Mark the oldest queued job running and return it (None when nothing waits)."""
        with self.store.transaction() as db:
            row = db.execute(
                "SELECT id FROM import_jobs WHERE status = ? ORDER BY id LIMIT 1", [QUEUED]
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE import_jobs SET status = ?, label = NULL, stage = NULL, done = 0, "
                "total = 0, error = NULL WHERE id = ?",
                [RUNNING, row[0]],
            )
        return self.job(row[0])

    def report(self, job_id: int, label: str, stage: str, done: int, total: int) -> bool:
        """Record a running job's progress; return whether its cancellation was asked for."""
        with self.store.lock:
            row = self.store.db.execute(
                "UPDATE import_jobs SET label = ?, stage = ?, done = ?, total = ? "
                "WHERE id = ? RETURNING cancel_requested",
                [label, stage, done, total, job_id],
            ).fetchone()
        return bool(row and row[0])

    def finish(
        self,
        job_id: int,
        status: str,
        *,
        document_id: int | None = None,
        pages: int = 0,
        passages: int = 0,
        chars: int = 0,
        warnings: Sequence[str] = (),
        error: str | None = None,
    ) -> None:
        """End a job with its outcome and let its waiting file go."""
        if status not in FINISHED:
            raise ValueError(f"not a finishing status: {status}")
        with self.store.lock:
            row = self.store.db.execute(
                "UPDATE import_jobs SET status = ?, document_id = ?, pages = ?, passages = ?, "
                "chars = ?, warnings = ?, error = ?, cancel_requested = false, "
                "finished_at = current_timestamp WHERE id = ? RETURNING sha256",
                [status, document_id, pages, passages, chars, list(warnings), error, job_id],
            ).fetchone()
            if row:
                self._discard_bytes_if_unused(row[0])

    def wait_for_password(self, job_id: int, *, wrong: bool) -> None:
        """Park an encrypted PDF until someone gives its password (its bytes stay)."""
        with self.store.lock:
            self.store.db.execute(
                "UPDATE import_jobs SET status = ?, password_wrong = ?, cancel_requested = false "
                "WHERE id = ?",
                [PASSWORD, wrong, job_id],
            )

    def requeue(self, job_id: int) -> None:
        """Queue an interrupted job, or an encrypted one that now has a password, again."""
        with self.store.lock:
            self.store.db.execute(
                "UPDATE import_jobs SET status = ?, stage = NULL, done = 0, total = 0 "
                "WHERE id = ? AND status IN (?, ?)",
                [QUEUED, job_id, PASSWORD, INTERRUPTED],
            )

    def cancel(self, job_id: int) -> None:
        """A running job stops at its next stage boundary; any other unfinished job goes."""
        with self.store.lock:
            row = self.store.db.execute(
                "UPDATE import_jobs SET cancel_requested = true WHERE id = ? AND status = ? "
                "RETURNING id",
                [job_id, RUNNING],
            ).fetchone()
            if row is None:
                self.remove(job_id)

    def remove(self, job_id: int) -> None:
        """Delete a job that is not running (and its waiting file, when no other job needs it)."""
        with self.store.lock:
            row = self.store.db.execute(
                "DELETE FROM import_jobs WHERE id = ? AND status <> ? RETURNING sha256",
                [job_id, RUNNING],
            ).fetchone()
            if row:
                self._discard_bytes_if_unused(row[0])

    def clear_finished(self, notebook_id: int) -> None:
        with self.store.lock:
            self.store.db.execute(
                "DELETE FROM import_jobs WHERE notebook_id = ? AND status IN (?, ?, ?, ?)",
                [notebook_id, *FINISHED],
            )

    def forget_notebook(self, notebook_id: int) -> None:
        """A deleted notebook's jobs go; a running one is cancelled (the worker then removes it)."""
        with self.store.lock:
            running = self.store.db.execute(
                "SELECT id FROM import_jobs WHERE notebook_id = ? AND status = ?",
                [notebook_id, RUNNING],
            ).fetchall()
            others = self.store.db.execute(
                "SELECT id FROM import_jobs WHERE notebook_id = ? AND status <> ?",
                [notebook_id, RUNNING],
            ).fetchall()
            for (job_id,) in running:
                self.cancel(job_id)
            for (job_id,) in others:
                self.remove(job_id)

    def recover(self) -> int:
        """At start-up: jobs a stopped process left queued or running become interrupted, and
        waiting files no unfinished job needs are deleted. Returns the jobs interrupted."""
        with self.store.lock:
            rows = self.store.db.execute(
                "UPDATE import_jobs SET status = ?, cancel_requested = false "
                "WHERE status IN (?, ?) RETURNING id",
                [INTERRUPTED, QUEUED, RUNNING],
            ).fetchall()
            wanted = {
                row[0]
                for row in self.store.db.execute(
                    "SELECT DISTINCT sha256 FROM import_jobs WHERE status IN (?, ?, ?, ?)",
                    list(UNFINISHED),
                ).fetchall()
            }
            folder = self.files_dir
            if folder is not None and folder.is_dir():
                for entry in folder.iterdir():
                    if entry.name not in wanted:
                        entry.unlink(missing_ok=True)
        return len(rows)
