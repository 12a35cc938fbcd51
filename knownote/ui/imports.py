"""The import queue in the Sources view: uploads become jobs, and their progress updates itself.

The rows of queued and running jobs live in a fragment that reruns every second on its own; when
a job changes state (starts waiting for a password, finishes, fails) the whole page reruns once so
the list of sources below shows the new document.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from knownote.answer.servers import AnswerServers
from knownote.pipeline.ingest import (
    STAGES,
    clean_filename,
    ocr_progress_text,
    transcribe_progress_text,
)
from knownote.pipeline.pace import duration_text, pace_text, rate_text
from knownote.pipeline.worker import ImportWorker
from knownote.read.fetch import looks_like_address
from knownote.settings import Settings
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Notebook
from knownote.store.jobs import (
    AUDIO_OVERVIEW,
    CANCELLED,
    CARDS,
    DUPLICATE,
    FAILED,
    IMPORT,
    IMPORTED,
    INTERRUPTED,
    MINDMAP,
    NOTEBOOK_JOBS,
    PASSWORD,
    QUEUED,
    READ_BY_OCR,
    REEMBED,
    REINDEX,
    REPORT,
    RUNNING,
    Job,
)
from knownote.ui.common import count
from knownote.ui.uploads import release

REFRESH_SECONDS = 1.0
STAGE_LABELS = {
    "extract": "Extracting text",
    "split": "Splitting into passages",
    "embed": "Embedding passages",
    "store": "Saving",
    "ocr": "Reading pages by OCR",
    "fetch": "Fetching the page",
    "transcribe": "Transcribing",
    "model": "Preparing the embedding model (once on this machine, about a minute)",
}
ACTIVE = (QUEUED, RUNNING)


def queue_uploads(
    worker: ImportWorker,
    notebook: Notebook,
    settings: Settings,
    files: list[UploadedFile],
    writer: tuple[AnswerServers, str] | None = None,
) -> None:
    """Put uploaded files in the import queue (their bytes are kept until each job ends); with
    a `writer` (servers, model), each new source's overview is written after the imports."""
    for file in files:
        job = worker.queue.enqueue(
            notebook.id, clean_filename(file.name), file.getvalue(), settings.passage_size
        )
        if writer is not None:
            worker.overview_after(job.id, *writer)
    worker.wake()
    release(files)  # their bytes wait on disk now; memory holds uploads only until queued


def queue_addresses(
    worker: ImportWorker,
    notebook: Notebook,
    settings: Settings,
    pasted: str,
    writer: tuple[AnswerServers, str] | None = None,
) -> list[str]:
    """Queue each web address of `pasted` (one a line, or separated by spaces); return the
    pieces that are not web addresses, to say so."""
    addresses, rejected = [], []
    for piece in pasted.split():
        (addresses if looks_like_address(piece) else rejected).append(piece)
    for address in dict.fromkeys(addresses):
        job = worker.queue.enqueue_address(notebook.id, address, settings.passage_size)
        if writer is not None:
            worker.overview_after(job.id, *writer)
    worker.wake()
    return rejected


# Jobs that make something of the notebook, each reporting its steps in its label.
MADE_JOBS = (REPORT, AUDIO_OVERVIEW)


def import_panel(worker: ImportWorker, notebook: Notebook) -> None:
    """Every job of this notebook: live progress while queued or running, then the outcome."""
    jobs = worker.queue.jobs(notebook.id)
    st.session_state["import_signature"] = signature(jobs)
    if not jobs:
        return
    busy = any(job.status in ACTIVE for job in jobs)
    with st.container(border=True):
        st.markdown("**Importing**" if busy else "**Last import**")
        if busy:
            live_jobs(worker, notebook.id)
        for job in jobs:
            if job.status not in ACTIVE:
                job_outcome(worker, job)
        if any(job.finished for job in jobs):
            st.button(
                "Dismiss",
                key="dismiss_results",
                help="Clear the finished imports from this list",
                on_click=worker.queue.clear_finished,
                args=(notebook.id,),
            )


def signature(jobs: list[Job]) -> tuple[tuple[int, str], ...]:
    return tuple((job.id, job.status) for job in jobs)


@st.fragment(run_every=REFRESH_SECONDS)
def live_jobs(worker: ImportWorker, notebook_id: int) -> None:
    jobs = worker.queue.jobs(notebook_id)
    if signature(jobs) != st.session_state.get("import_signature"):
        st.rerun()  # a job started waiting or ended: the whole page changes
    for job in jobs:
        if job.status in ACTIVE:
            live_row(worker, job)
    if line := queue_line(worker, jobs):
        st.caption(line)


def queue_line(worker: ImportWorker, jobs: list[Job]) -> str | None:
    """The queue's rate and time left, while files wait behind the running one."""
    waiting = [job for job in jobs if job.status == QUEUED and job.kind == IMPORT]
    left = worker.queue_seconds_left(jobs)
    running = [job for job in jobs if job.status == RUNNING]
    pace = worker.pace(running[0].id) if running else None
    if not waiting or left is None or pace is None or pace.rate() is None:
        return None
    files = count(len(waiting) + 1, "file")
    return f"The queue: {files} to go, {duration_text(left)} left at {rate_text(pace.rate())}"


def job_name(job: Job) -> str:
    """The job's file as Markdown, and whether it is a source read again by OCR."""
    name = escape_markdown(job.filename)
    return name + " (read again by OCR)" if job.kind == READ_BY_OCR else name


def live_row(worker: ImportWorker, job: Job) -> None:
    name = job_name(job)
    info, action = st.columns([6, 1], vertical_alignment="center")
    if job.status == QUEUED and job.kind in (*NOTEBOOK_JOBS, CARDS, MINDMAP, *MADE_JOBS):
        info.markdown(f"{name}: waiting; search works meanwhile")
        return
    if job.status == QUEUED:
        waiting = "read" if job.kind == READ_BY_OCR else "imported"
        info.markdown(f"{name}: waiting to be {waiting}")
        action.button(
            "Remove", key=f"remove_job_{job.id}", on_click=worker.queue.remove, args=(job.id,)
        )
        return
    fraction, text = progress_of(job)
    pace = worker.pace(job.id) if job.stage == "embed" else None
    if pace is not None and (said := pace_text(pace)):
        text += f"; {said}"
    info.progress(fraction, text=f"{name}: {escape_markdown(text)}")
    if job.cancel_requested:
        action.caption("Cancelling…")
    else:
        action.button(
            "Cancel", key=f"cancel_job_{job.id}", on_click=worker.queue.cancel, args=(job.id,)
        )


def progress_of(job: Job) -> tuple[float, str]:
    """How far a running job is (0 to 1) and what it is doing, in words.

    A stage this view does not know (a new one an extractor reports) is shown as it arrives.
    """
    stage = job.stage or ""
    if not stage:
        return 0.0, "starting"
    if stage in (MINDMAP, *MADE_JOBS):  # label: the step ("Speaking line 12 of 40")
        return (min(job.done / job.total, 1.0) if job.total else 0.0), job.label or ""
    if stage == CARDS:
        where = f"; now {job.label}" if job.label else ""
        return (
            min(job.done / job.total, 1.0) if job.total else 0.0,
            f"{job.done:,} of {job.total:,} sources{where}",
        )
    if stage in NOTEBOOK_JOBS:
        # label: the source being redone; search uses the old index (or model) meanwhile.
        where = f"; now {job.label}" if job.label else ""
        return (
            min(job.done / job.total, 1.0) if job.total else 0.0,
            f"{job.done:,} of {job.total:,} passages{where}; search works meanwhile",
        )
    # The model is prepared just before the embedding starts.
    i = STAGES.index("embed" if stage == "model" else stage) if stage in (*STAGES, "model") else 0
    part = job.done / job.total if job.total else 0.0
    text = STAGE_LABELS.get(stage, stage)
    if stage == "ocr" and job.total:
        return min(part / len(STAGES), 1.0), ocr_progress_text(job.done, job.total)
    if stage == "transcribe" and job.total:
        return min(part / len(STAGES), 1.0), transcribe_progress_text(job.done, job.total)
    if stage == "fetch":
        return 0.0, STAGE_LABELS["fetch"]
    if job.total > 1 and f"{job.done:,}" not in text and str(job.done) not in text:
        text += f" ({job.done:,} of {job.total:,})"
    return min((i + part) / len(STAGES), 1.0), text


def job_outcome(worker: ImportWorker, job: Job) -> None:
    name = job_name(job)
    if job.kind == REINDEX:
        reindex_outcome(job)
        return
    if job.kind == REEMBED:
        reembed_outcome(job)
        return
    if job.kind == CARDS:
        notebook_job_outcome(
            job,
            done=f"✓ {count(job.passages, 'study card')} made (see Study)",
            cancelled="✗ Making study cards stopped; the cards made so far are kept",
            what="Making study cards",
        )
        for line in job.warnings:
            st.caption(escape_markdown(line))
        return
    if job.kind == MINDMAP:
        mind_map_outcome(job)
        return
    if job.kind in MADE_JOBS:
        made_outcome(job)
        return
    if job.status == IMPORTED:
        pages = f"{count(job.pages, 'page')}, " if job.pages else ""
        st.markdown(
            f"✓ {name}: {pages}{count(job.passages, 'passage')}, {count(job.chars, 'character')}"
        )
    elif job.status == DUPLICATE:
        st.markdown(f"• {name}: already in this notebook")
    elif job.status == CANCELLED:
        st.markdown(f"✗ {name}: cancelled, nothing was stored")
    elif job.status == FAILED:
        st.error(escape_markdown(f"{job.filename}: {job.error}"))
    elif job.status == PASSWORD:
        unlock_job_form(worker, job)
    elif job.status == INTERRUPTED:
        interrupted_row(worker, job)
    for warning in job.warnings:
        st.caption(escape_markdown(warning))


def reindex_outcome(job: Job) -> None:
    notebook_job_outcome(
        job,
        done=f"✓ Re-indexed {count(job.passages, 'passage')} for titles and sections",
        cancelled="✗ Re-indexing stopped; the rest is redone when the app starts again",
        what="Re-indexing",
    )


def reembed_outcome(job: Job) -> None:
    model = escape_markdown(job.filename.removeprefix("Re-embedding with "))
    notebook_job_outcome(
        job,
        done=f"✓ Re-embedded {count(job.passages, 'passage')} with {model}",
        cancelled=f"✗ Re-embedding with {model} cancelled; the notebook keeps its model",
        what="Re-embedding",
    )


def mind_map_outcome(job: Job) -> None:
    name = escape_markdown(job.filename)
    if job.status == INTERRUPTED:
        st.markdown(f"{name}: interrupted when the app stopped; make it again in Mind map")
        return
    notebook_job_outcome(
        job,
        done=f"✓ {name}: {count(job.passages, 'idea')}, shown in Mind map",
        cancelled=f"✗ {name}: cancelled; the map made before is kept",
        what=job.filename,
    )


def made_outcome(job: Job) -> None:
    """A report's or an audio overview's job: what it made (its first note: the lines kept, or
    the audio's length and the lines dropped), then its other notes."""
    name = escape_markdown(job.filename)
    if job.status == INTERRUPTED:
        st.markdown(f"{name}: interrupted when the app stopped; make it again")
        return
    said = f": {escape_markdown(job.warnings[0])}" if job.warnings else ""
    notebook_job_outcome(
        job,
        done=f"✓ {name}{said}",
        cancelled=f"✗ {name}: cancelled, nothing was kept",
        what=job.filename,
    )
    if job.status == IMPORTED:
        for line in job.warnings[1:]:
            st.caption(escape_markdown(line))


def notebook_job_outcome(job: Job, *, done: str, cancelled: str, what: str) -> None:
    if job.status == IMPORTED:
        st.markdown(done)
    elif job.status == CANCELLED:
        st.markdown(cancelled)
    elif job.status == FAILED:
        st.error(escape_markdown(f"{what} stopped: {job.error}"))
    else:  # interrupted: queued again when the app starts
        st.markdown(f"{what} was interrupted; it goes on when the app starts again")


def interrupted_row(worker: ImportWorker, job: Job) -> None:
    info, again, remove = st.columns([5, 2, 1], vertical_alignment="center")
    info.markdown(f"{escape_markdown(job.filename)}: interrupted when the app stopped")
    again.button(
        "Import again", key=f"again_job_{job.id}", on_click=import_again, args=(worker, job.id)
    )
    remove.button(
        "Remove", key=f"remove_job_{job.id}", on_click=worker.queue.remove, args=(job.id,)
    )


def import_again(worker: ImportWorker, job_id: int) -> None:
    worker.queue.requeue(job_id)
    worker.wake()


def unlock_job_form(worker: ImportWorker, job: Job) -> None:
    """One calm prompt for an encrypted PDF waiting in the queue; Enter in the field submits.

    The password goes to the worker's memory with the job, never into the database.
    """
    st.markdown(
        f"🔒 {escape_markdown(job.filename)} is encrypted. Enter its password to import it."
    )
    if job.password_wrong:
        st.warning("That password is wrong: check it and try again.")
    with st.form(key=f"unlock_job_{job.id}", border=False):
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        password = left.text_input("Password", type="password", key=f"pdf_password_{job.id}")
        submitted = right.form_submit_button("Import", key=f"retry_{job.id}")
    st.button("Remove", key=f"remove_job_{job.id}", on_click=worker.queue.remove, args=(job.id,))
    if submitted:
        worker.give_password(job.id, password)
        st.rerun()
