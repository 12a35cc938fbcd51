"""The import worker: one thread per process works through the import queue, a job at a time.

DuckDB has one writer, so one worker is enough: extraction and embedding run outside the store's
lock, and only the final transaction holds it. Questions in any notebook go on meanwhile.
Once no import waits, it writes the overviews asked for with the imports (see `overview_after`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from knownote.errors import KnowNoteError, ModelError, NotFound
from knownote.index.embed import Embedder
from knownote.pipeline.pace import ImportPaces, Pace
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.store.jobs import (
    AUDIO_OVERVIEW,
    CANCELLED,
    CARDS,
    DUPLICATE,
    FAILED,
    IMPORT,
    IMPORTED,
    MINDMAP,
    QUEUED,
    READ_BY_OCR,
    REEMBED,
    REINDEX,
    REPORT,
    RUNNING,
    WEB,
    Job,
    JobQueue,
)

if TYPE_CHECKING:
    from knownote.answer.audio_overview import AudioOverview
    from knownote.answer.prompts import Chat
    from knownote.answer.report import Report
    from knownote.pipeline.audio_overview import AudioRequest
    from knownote.pipeline.ingest import ReadAhead

log = logging.getLogger(__name__)
T = TypeVar("T")
# The jobs that import a file (their bytes known when queued, for the queue's time left).
FILE_JOBS = (IMPORT, WEB, READ_BY_OCR)
# How long a job that failed with a RuntimeError waits to learn whether the app is stopping.
STOPPING_WAIT = 10.0
StepProgress = Callable[[str, int, int], None]  # (what is being done, steps done, steps in all)


@dataclass(frozen=True)
class ReportRequest:
    """A queued report: what kind, of what, by which model (see `ImportWorker.queue_report`)."""

    kind: str
    instructions: str = ""
    document_ids: tuple[int, ...] = ()
    llm: Chat | None = None
    model: str | None = None
    keep_unsupported: bool = True  # False: a written sentence with no close match is left out


def make_report(
    store: Store,
    notebook_id: int,
    request: ReportRequest,
    progress: Callable[[str, int, int], None],
) -> tuple[Report, int, list[str]]:
    """Make a report as asked and keep it: (the report, its id, what to tell of it). A
    KnowNoteError, in words, when there is nothing to report. A timeline the model fails to
    label is kept without labels, and says so."""
    from knownote.answer.report import KIND_NAMES, QUOTED_KINDS
    from knownote.study import reports

    name = KIND_NAMES[request.kind]
    notes: list[str] = []
    labelled = request.kind == "timeline" and request.llm is not None and request.model
    steps = 3 if request.kind in QUOTED_KINDS and labelled else 2
    if request.kind in QUOTED_KINDS:
        progress(f"Reading the sources for the {name.lower()}", 0, steps)
        make = reports.timeline if request.kind == "timeline" else reports.glossary
        report = make(store, notebook_id, request.document_ids)
        if not report.cites:
            raise KnowNoteError(
                "No dated sentence was found in the sources' body text: there is no timeline "
                "to make."
                if request.kind == "timeline"
                else "No term of the sources has a sentence of body text that explains it: "
                "there is no glossary to make."
            )
        if labelled:
            from knownote.study.report_writer import label_timeline

            progress("Labelling the timeline's entries", 1, steps)
            try:
                report = label_timeline(report, request.llm, request.model, progress)
            except ModelError as e:
                notes.append(str(e))
    else:
        from knownote.study.report_writer import write_report

        report = write_report(
            store, request.llm, request.model, notebook_id, request.kind,
            instructions=request.instructions, document_ids=request.document_ids,
            progress=progress, keep_unsupported=request.keep_unsupported,
        )  # fmt: skip
    progress(f"Keeping the {name.lower()}", steps - 1, steps)
    report_id = reports.keep(store, report)
    notes.insert(0, f"{report.written} written, {report.kept} kept, {report.marked} marked")
    return report, report_id, notes


def app_stopping(error: Exception) -> bool:
    """Whether `error` came from the app stopping. Thread pools refuse new work (a RuntimeError)
    as soon as threading's exit hooks run, a moment before the main thread counts as stopped:
    after such an error, that moment is waited out."""
    main = threading.main_thread()
    if isinstance(error, RuntimeError) and main is not threading.current_thread():
        main.join(timeout=STOPPING_WAIT)
    return not main.is_alive()


IDLE_WAIT = 2.0  # seconds between looks at the queue when nobody wakes the worker


class ImportCancelled(Exception):
    """Raised from the progress callback to stop an import at a stage boundary.

    Not a KnowNoteError, so `import_file` does not turn it into a failed result: it unwinds
    before the store stage, and nothing of the document is stored.
    """


class ImportStopped(Exception):
    """Raised from the progress callback when the process stops: the job is left as it is, and
    the next start lists it as interrupted."""


class ImportWorker:
    """Takes queued jobs and runs `import_file` on them with a progress callback into the row."""

    def __init__(
        self, queue: JobQueue, settings: Settings, embedder: Callable[[str], Embedder]
    ) -> None:
        self.queue = queue
        self.settings = settings
        self.embedder = embedder
        self._passwords: dict[int, str] = {}  # held in memory only, never stored
        # Overviews asked for with an import: job id -> (servers, model), then, once the document
        # is in, (document id, servers, model) in the order imports finished. Memory only: after a
        # restart the Overview view offers to write what is missing.
        self._overview_models: dict[int, tuple[Chat, str]] = {}
        self._overviews_due: deque[tuple[int, Chat, str]] = deque()
        self._overview_writing: int | None = None
        self.overview_errors: dict[int, str] = {}  # document id -> why its overview is missing
        # The model a queued mind map job is written by: job id -> (servers, model). Memory only,
        # like the overviews': after a restart the job fails, saying to make the map again.
        self._mind_map_models: dict[int, tuple[Chat, str]] = {}
        # The model a cards job writes with (memory only: after a restart it makes cloze cards).
        self._card_models: dict[int, tuple[Chat, str]] = {}
        # What a queued report job makes: job id -> its request (memory only, like the mind
        # map's); and, once it is kept, the report's id.
        self._report_requests: dict[int, ReportRequest] = {}
        self.reports_made: dict[int, int] = {}
        # The same for audio overviews: job id -> its request; once kept, the overview's id.
        self._audio_requests: dict[int, AudioRequest] = {}
        self.audio_overviews_made: dict[int, int] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._paces = ImportPaces()  # memory only: how fast this process imports
        self._ahead: dict[int, ReadAhead] = {}  # job id -> its file's reading, begun early

    def start(self) -> ImportWorker:
        """Mark what a previous process left unfinished as interrupted, queue the re-index of
        notebooks holding documents indexed the old way, then start the thread."""
        self.queue.recover()
        self.queue_reindexing()
        self._thread = threading.Thread(target=self._loop, name="knownote-imports", daemon=True)
        self._thread.start()
        # A daemon thread killed inside DuckDB at interpreter exit aborts the process: stop first.
        atexit.register(self.stop, 10.0)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the running job's next stage boundary (it stays unfinished)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def queue_reindexing(self) -> None:
        """A re-index job for every notebook with documents indexed the old way, and a re-embed
        job for every notebook whose re-embedding a stopped process left unfinished."""
        from knownote.pipeline.reindex import notebooks_to_reindex
        from knownote.store.reembed import reembeds

        for notebook_id in notebooks_to_reindex(self.queue.store):
            self.queue.enqueue_reindex(notebook_id)
        for reembed in reembeds(self.queue.store):
            self.queue.enqueue_reembed(reembed.notebook_id, reembed.model)
        self.wake()

    def queue_reembed(self, notebook_id: int, model: str) -> Job:
        """Re-embed the notebook with `model` in the background (see knownote.pipeline.reembed);
        its search uses its old model until every passage has a new vector."""
        from knownote.store.reembed import start_reembed

        start_reembed(self.queue.store, notebook_id, model, self.embedder(model).dim)
        job = self.queue.enqueue_reembed(notebook_id, model)
        self.wake()
        return job

    def read_again_by_ocr(self, document_id: int) -> Job:
        """Queue a source to be read again by OCR, as a new version beside it."""
        job = self.queue.enqueue_read_by_ocr(document_id, self.settings.passage_size)
        self.wake()
        return job

    def wake(self) -> None:
        """Look at the queue now (call after adding a job)."""
        self._wake.set()

    def give_password(self, job_id: int, password: str) -> None:
        """Queue an encrypted PDF again with the password to try."""
        self._passwords[job_id] = password
        self.queue.requeue(job_id)
        self.wake()

    def queue_cards(
        self, notebook_id: int, llm: Chat | None = None, model: str | None = None
    ) -> Job:
        """Make the notebook's missing study cards in the background (see knownote.study.make):
        cloze cards, and `model`'s question-and-answer cards when given."""
        job = self.queue.enqueue_cards(notebook_id, model if llm is not None else None)
        if llm is not None and model:
            self._card_models[job.id] = (llm, model)
        self.wake()
        return job

    def queue_mind_map(self, notebook_id: int, llm: Chat, model: str) -> Job:
        """Write the notebook's mind map with `model` in the background (knownote.study.mindmap);
        the job reports its steps and ends failed, in words, when the model gives no usable map."""
        job = self.queue.enqueue_mind_map(notebook_id, model)
        self._mind_map_models[job.id] = (llm, model)
        self.wake()
        return job

    def queue_report(
        self,
        notebook_id: int,
        kind: str,
        instructions: str = "",
        document_ids: Sequence[int] = (),
        llm: Chat | None = None,
        model: str | None = None,
        keep_unsupported: bool = True,
    ) -> Job:
        """Make a report of the notebook (or of its chosen sources) in the background and keep
        it (knownote.study.reports): a timeline or glossary without a model (a timeline with
        `model`'s one-line labels when given), the written kinds by `model` (their sentences
        with no close match marked, or left out when not `keep_unsupported`). The job reports its
        steps and ends failed, in words, when there is nothing to report; `reports_made[job.id]`
        is the kept report's id."""
        from knownote.answer.report import KIND_NAMES, WRITTEN_KINDS

        if kind not in KIND_NAMES:
            raise KnowNoteError(
                f"There is no report kind “{kind}”; choose one of {', '.join(KIND_NAMES)}."
            )
        if kind in WRITTEN_KINDS and (llm is None or not model):
            raise KnowNoteError(
                f"A {KIND_NAMES[kind].lower()} is written by an answer model: choose one."
            )
        label = KIND_NAMES[kind] + (f" by {model}" if model and llm is not None else "")
        job = self.queue.enqueue_report(notebook_id, label)
        self._report_requests[job.id] = ReportRequest(
            kind, instructions, tuple(document_ids), llm, model, keep_unsupported
        )
        self.wake()
        return job

    def queue_audio_overview(self, notebook_id: int, request: AudioRequest) -> Job:
        """Make an audio overview of the notebook (or of its chosen sources) in the background
        and keep it (knownote.pipeline.audio_overview): the script's steps, then "Speaking line
        12 of 40"; cancellable between lines. Without a model a written format is made as the
        read-aloud brief, and the job says so. It ends with its length and the written lines
        dropped, or failed, in words; `audio_overviews_made[job.id]` is the kept overview's id."""
        from knownote.answer.audio_overview import FORMAT_NAMES
        from knownote.pipeline.audio_overview import check_request

        check_request(request)
        by = f" by {request.model}" if request.model and request.llm is not None else ""
        label = f"Audio overview: {FORMAT_NAMES[request.format]}{by}"
        job = self.queue.enqueue_report(notebook_id, label, AUDIO_OVERVIEW)
        self._audio_requests[job.id] = request
        self.wake()
        return job

    def overview_after(self, job_id: int, llm: Chat, model: str) -> None:
        """Write the overview of the job's document with `model` once it is imported and no
        other import waits."""
        self._overview_models[job_id] = (llm, model)

    def overviews_due(self) -> set[int]:
        """Documents whose overview is waiting to be written or being written."""
        due = {document_id for document_id, _, _ in list(self._overviews_due)}
        return due | ({self._overview_writing} - {None})

    def pace(self, job_id: int) -> Pace | None:
        """The running import's passages embedded and its rate (None before it embeds)."""
        return self._paces.pace(job_id)

    def queue_seconds_left(self, jobs: list[Job]) -> float | None:
        """Seconds until the running import and the files waiting among `jobs` are imported;
        None while this process has no rate to estimate by."""
        running = [j.id for j in jobs if j.status == RUNNING and j.kind in FILE_JOBS]
        waiting = sum(j.size for j in jobs if j.status == QUEUED and j.kind == IMPORT)
        if not running:
            return None
        return self._paces.queue_seconds_left(running[0], waiting, time.monotonic())

    def _loop(self) -> None:
        while not self._stop.is_set():
            if (
                not self.run_once()
                and not self.write_next_overview()
                and not self.read_missing_languages()
                and not self.read_missing_roles()
            ):
                self._wake.wait(IDLE_WAIT)
                self._wake.clear()

    def read_missing_languages(self) -> bool:
        """Read the languages of one document imported before they were kept; False when none
        is left (one at a time, so that a new job waits for one document at most)."""
        from knownote.pipeline.reindex import read_missing_languages

        return read_missing_languages(self.queue.store, limit=1) > 0

    def read_missing_roles(self) -> bool:
        """Read the roles of one document that lacks them; False when none is left."""
        if not self.queue.store.documents_without_roles(1):
            return False  # without loading PyMuPDF and its layout model on an idle start
        from knownote.pipeline.roles import read_missing_roles  # reads PDFs: PyMuPDF

        return read_missing_roles(self.queue.store, limit=1, settings=self.settings) > 0

    def write_next_overview(self) -> bool:
        """Write the oldest due overview (unless one was written since); False when none is due."""
        from knownote.answer.overview import write_overview  # here: it loads the answer libraries

        try:
            document_id, llm, model = self._overviews_due.popleft()
        except IndexError:
            return False
        self._overview_writing = document_id
        try:
            if self.queue.store.overview(document_id) is None:
                write_overview(self.queue.store, llm, model, document_id)
        except KnowNoteError as e:  # a model that fails, a document deleted meanwhile
            self.overview_errors[document_id] = str(e)
        finally:
            self._overview_writing = None
        return True

    def run_once(self) -> bool:
        """Run the oldest queued job to its end; False when the queue was empty."""
        job = self.queue.claim_next()
        if job is None:
            return False
        self._paces.begin(job.id, job.size, time.monotonic())
        try:
            self._run(job)
        except Exception as e:
            if app_stopping(e):
                # The app is stopping: its thread pools refuse work before atexit stops this
                # worker. The job stays unfinished, as a stop leaves it, to resume at the start.
                log.warning("import job %s stopped as the app stops (%s)", job.id, e)
                return True
            # A bug must not stop the worker for every later job; the job says so and the log
            # keeps the traceback.
            log.exception("import job %s failed", job.id)
            self.queue.finish(
                job.id,
                FAILED,
                error=f"The import stopped on an unexpected error ({type(e).__name__}: {e}). "
                "The server log has the details.",
            )
        finally:
            self._paces.end(job.id, False, time.monotonic())  # unless _run ended it imported
        return True

    def _run(self, job: Job) -> None:
        if job.kind == REINDEX:
            self._reindex(job)
            return
        if job.kind == REEMBED:
            self._reembed(job)
            return
        if job.kind == CARDS:
            self._cards(job)
            return
        if job.kind == MINDMAP:
            self._mind_map(job)
            return
        if job.kind == REPORT:
            self._report(job)
            return
        if job.kind == AUDIO_OVERVIEW:
            self._audio_overview(job)
            return
        # here: they load the extraction libraries
        from knownote.pipeline.ingest import import_address, import_file, read_again_by_ocr

        password = self._passwords.pop(job.id, None)
        ahead = self._ahead.pop(job.id, None) if password is None else None
        try:
            notebook = self.queue.store.notebook(job.notebook_id)
            if ahead is not None:
                data = ahead.data
            else:
                data = b"" if job.kind in (WEB, READ_BY_OCR) else self.queue.read_bytes(job)
        except NotFound as e:
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return

        def progress(label: str, stage: str, done: int, total: int) -> None:
            if self._stop.is_set() and (stage != "store" or done == 0):
                raise ImportStopped
            self._paces.report(job.id, stage, done, total, time.monotonic())
            cancel = self.queue.report(job.id, label, stage, done, total)
            # The last boundary is the start of the store stage: after it the document commits.
            if cancel and (stage != "store" or done == 0):
                raise ImportCancelled
            if stage == "embed" and done == 0:
                self._read_ahead()

        settings = self.settings.with_(passage_size=job.passage_size)
        if job.kind == WEB:
            work = lambda: import_address(  # noqa: E731
                self.queue.store,
                notebook,
                job.filename,
                settings=settings,
                embedder=self.embedder(notebook.embedding_model),
                progress=progress,
            )
        elif job.kind == READ_BY_OCR:
            source = job.document_id or 0
            work = lambda: read_again_by_ocr(  # noqa: E731
                self.queue.store,
                source,
                settings=settings,
                embedder=self.embedder(notebook.embedding_model),
                password=password,
                progress=progress,
            )
        else:
            work = lambda: import_file(  # noqa: E731
                self.queue.store,
                notebook,
                job.filename,
                data,
                settings=settings,
                embedder=self.embedder(notebook.embedding_model),
                password=password,
                progress=progress,
                ahead=ahead,
            )
        result = self._unless_stopped(job, work)
        if result is None:
            return
        if result.needs_password:
            self.queue.wait_for_password(job.id, wrong=password is not None)
            return
        status = {"imported": IMPORTED, "duplicate": DUPLICATE}.get(result.status, FAILED)
        self._paces.end(job.id, status == IMPORTED, time.monotonic())
        writer = self._overview_models.pop(job.id, None)
        if writer is not None and status == IMPORTED:
            self._overviews_due.append((result.document_id, *writer))
        self.queue.finish(
            job.id,
            status,
            document_id=result.document_id,
            pages=result.pages,
            passages=result.passages,
            chars=result.chars,
            warnings=result.warnings,
            error=result.error,
        )
        self._forget_if_notebook_gone(job)

    def _read_ahead(self) -> None:
        """Begin reading the next queued file while this one is embedded (`ReadAhead`)."""
        from knownote.pipeline.ingest import ReadAhead

        waiting = [j for j in self.queue.jobs() if j.status == QUEUED]
        following = min(waiting, key=lambda j: j.id, default=None)
        if (
            following is None
            or following.kind != IMPORT
            or following.id in self._ahead
            or following.id in self._passwords
        ):
            return
        with contextlib.suppress(NotFound):  # removed meanwhile: nothing to read
            data = self.queue.read_bytes(following)
            settings = self.settings.with_(passage_size=following.passage_size)
            self._ahead = {following.id: ReadAhead(data, following.filename, settings)}

    def _reindex(self, job: Job) -> None:
        """Redo the notebook's old documents one by one (each commits on its own), reporting
        passages done; a cancel stops between documents and the rest wait for the next start."""
        from knownote.pipeline.reindex import reindex_notebook

        try:
            notebook = self.queue.store.notebook(job.notebook_id)
        except NotFound as e:
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return

        progress = self._passages_progress(job, "reindex")
        redone = self._unless_stopped(
            job,
            lambda: reindex_notebook(
                self.queue.store, self.embedder(notebook.embedding_model), notebook.id, progress
            ),
        )
        if redone is None:
            return
        self.queue.finish(job.id, IMPORTED, passages=self.queue.job(job.id).total)
        self._forget_if_notebook_gone(job)

    def _reembed(self, job: Job) -> None:
        """Give the notebook's passages to the model its re-embed names, document by document;
        a cancel drops what was staged (the notebook keeps its model), a stop keeps it for the
        next start."""
        from knownote.pipeline.reembed import reembed_notebook
        from knownote.store.reembed import cancel_reembed, reembed_of

        reembed = reembed_of(self.queue.store, job.notebook_id)
        if reembed is None:  # cancelled, or its notebook deleted, while the job waited
            self.queue.finish(job.id, CANCELLED)
            return

        progress = self._passages_progress(job, "reembed")
        try:
            done = self._unless_stopped(
                job,
                lambda: reembed_notebook(
                    self.queue.store, self.embedder(reembed.model), job.notebook_id, progress
                ),
            )
        except NotFound as e:  # the notebook was deleted meanwhile
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return
        if done is None:
            if self.queue.job(job.id).status == CANCELLED:
                cancel_reembed(self.queue.store, job.notebook_id)
            return
        self.queue.finish(job.id, IMPORTED, passages=self.queue.job(job.id).total)
        self._forget_if_notebook_gone(job)

    def _cards(self, job: Job) -> None:
        """Make the cards the notebook's sources lack, source by source (each commits on its
        own); the job ends with the cards kept, and what a model wrote and kept as a warning."""
        from knownote.study.make import make_cards

        llm, model = self._card_models.pop(job.id, (None, None))
        try:
            notebook = self.queue.store.notebook(job.notebook_id)
            made = self._unless_stopped(
                job,
                lambda: make_cards(
                    self.queue.store,
                    self.embedder(notebook.embedding_model),
                    notebook.id,
                    llm=llm,
                    model=model,
                    progress=self._passages_progress(job, CARDS),
                ),
            )
        except KnowNoteError as e:  # the notebook deleted, the model failing: what was made stays
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return
        if made is None:
            return
        written = [
            f"{m.made_by} wrote {m.written} card{'s' * (m.written != 1)}; {m.kept} kept after "
            "the support check"
            for m in made
            if m.written
        ]
        self.queue.finish(job.id, IMPORTED, passages=sum(m.kept for m in made), warnings=written)
        self._forget_if_notebook_gone(job)

    def _mind_map(self, job: Job) -> None:
        from knownote.study.mindmap import make_mind_map  # here: it loads the answer libraries

        writer = self._mind_map_models.pop(job.id, None)
        if writer is None:
            self.queue.finish(
                job.id,
                FAILED,
                error="The app restarted before this mind map was made; make it again.",
            )
            return
        llm, model = writer

        def progress(what: str, done: int, total: int) -> None:
            if self._stop.is_set():
                raise ImportStopped
            if self.queue.report(job.id, what, MINDMAP, done, total):
                raise ImportCancelled

        try:
            made = self._unless_stopped(
                job, lambda: make_mind_map(self.queue.store, llm, model, job.notebook_id, progress)
            )
        except KnowNoteError as e:  # a model that fails or cites nothing, a notebook deleted
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return
        if made is not None:
            self.queue.finish(job.id, IMPORTED, passages=len(made.nodes))

    def _report(self, job: Job) -> None:
        request = self._report_requests.pop(job.id, None)
        self._make_and_keep(
            job, "report", self.reports_made,
            None if request is None
            else lambda progress: make_report(self.queue.store, job.notebook_id, request, progress),
        )  # fmt: skip

    def _audio_overview(self, job: Job) -> None:
        from knownote.pipeline.audio_overview import make_audio_overview

        request = self._audio_requests.pop(job.id, None)

        def make(progress: StepProgress) -> tuple[AudioOverview, int, list[str]]:
            store = self.queue.store
            embedder = self.embedder(store.notebook(job.notebook_id).embedding_model)
            return make_audio_overview(store, job.notebook_id, request, progress, embedder=embedder)

        self._make_and_keep(
            job, "audio overview", self.audio_overviews_made, None if request is None else make
        )

    def _make_and_keep(
        self,
        job: Job,
        what: str,
        made_ids: dict[int, int],
        make: Callable[[StepProgress], tuple[Report | AudioOverview, int, list[str]]] | None,
    ) -> None:
        """Run a report's or an audio overview's making with progress in the job's row (its
        stage: the job's kind); it ends with the lines kept and the notes, or failed in words."""
        if make is None:
            self.queue.finish(
                job.id,
                FAILED,
                error=f"The app restarted before this {what} was made; make it again.",
            )
            return

        def progress(step: str, done: int, total: int) -> None:
            if self._stop.is_set():
                raise ImportStopped
            if self.queue.report(job.id, step, job.kind, done, total):
                raise ImportCancelled

        try:
            made = self._unless_stopped(job, lambda: make(progress))
        except KnowNoteError as e:  # nothing to say, a model that fails, a notebook deleted
            self.queue.finish(job.id, FAILED, error=str(e))
            self._forget_if_notebook_gone(job)
            return
        if made is not None:
            record, record_id, notes = made
            made_ids[job.id] = record_id
            self.queue.finish(job.id, IMPORTED, passages=len(record.lines), warnings=notes)

    def _passages_progress(self, job: Job, stage: str) -> Callable[[str, int, int], None]:
        """Reports a notebook job's passages (or sources) done; raises to stop between
        documents."""

        def progress(title: str, done: int, total: int) -> None:
            if self._stop.is_set():
                raise ImportStopped
            if self.queue.report(job.id, title, stage, done, total):
                raise ImportCancelled

        return progress

    def _unless_stopped(self, job: Job, work: Callable[[], T]) -> T | None:
        """What `work` returns; None when the job was cancelled (it finishes as such) or the
        worker is stopping (the job stays unfinished, listed as interrupted at the next start)."""
        try:
            return work()
        except ImportCancelled:
            self.queue.finish(job.id, CANCELLED)
            self._forget_if_notebook_gone(job)
        except ImportStopped:
            pass
        return None

    def _forget_if_notebook_gone(self, job: Job) -> None:
        try:
            self.queue.store.notebook(job.notebook_id)
        except NotFound:
            self.queue.remove(job.id)
