"""Small pieces shared by the app's views: cached document text and confirmation state."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import streamlit as st

from knownote.errors import KnowNoteError
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Document, Store
from knownote.store.jobs import FAILED, QUEUED, RUNNING, Job

if TYPE_CHECKING:
    from knownote.pipeline.worker import ImportWorker

# Another browser window (a session of the same server) can delete what this one still shows.
ALREADY_DELETED = "That {what} was already deleted, perhaps in another window."
REFRESH_SECONDS = 1.0  # how often a page with a job running checks whether it is over
ALL_SOURCES, CHOSEN_SOURCES = "all", "chosen"


@st.cache_resource(max_entries=32, show_spinner=False)
def document_text(db: str, document_id: int, _store: Store) -> str | None:
    """A document's extracted text (None once deleted); ids are never reused, so it can be kept."""
    try:
        return _store.document_text(document_id)
    except KnowNoteError:
        return None


def set_confirm(what: tuple[str, int] | None) -> None:
    """Remember which delete waits for its confirmation (None: none)."""
    st.session_state["confirm"] = what


def confirming(what: tuple[str, int]) -> bool:
    return st.session_state.get("confirm") == what


def ask_before_deleting(
    slot,
    what: tuple[str, int],
    *,
    key: str,
    label: str,
    warning: str,
    on_delete: Callable[..., None],
    args: tuple,
    narrow: bool = False,
) -> None:
    """A delete button (in `slot`) that asks first: once pressed, `warning` with Delete and
    Cancel. Widget keys: delete_KEY, confirm_delete_KEY, cancel_delete_KEY."""
    if not confirming(what):
        slot.button(label, key=f"delete_{key}", on_click=set_confirm, args=(what,))
        return
    st.warning(warning)
    left, right = st.columns(2) if narrow else st.columns([1, 1, 4])[:2]
    left.button(
        "Delete", key=f"confirm_delete_{key}", type="primary", on_click=on_delete, args=args
    )
    right.button("Cancel", key=f"cancel_delete_{key}", on_click=set_confirm, args=(None,))


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def running_job(worker: ImportWorker, notebook_id: int, kind: str) -> Job | None:
    """The notebook's job of `kind` (cards, a mind map, a report) that waits or runs, if any."""
    return next(
        (
            j
            for j in worker.queue.jobs(notebook_id)
            if j.kind == kind and j.status in (QUEUED, RUNNING)
        ),
        None,
    )


def last_failed(worker: ImportWorker, notebook_id: int, kind: str) -> Job | None:
    """The notebook's last job of `kind` when it failed (and none of that kind runs now)."""
    jobs = [j for j in worker.queue.jobs(notebook_id) if j.kind == kind]
    if not jobs or jobs[-1].status != FAILED or running_job(worker, notebook_id, kind):
        return None
    return jobs[-1]


def form_start(
    store: Store, worker: ImportWorker, notebook_id: int, kind: str, what: str
) -> tuple[Job | None, dict[int, Document]]:
    """The start of a form that queues a `kind` of job (a report, an audio overview): its job
    waiting or running, the last one's failure said, and the sources in use (said when none)."""
    failed = last_failed(worker, notebook_id, kind)
    if failed is not None:
        st.error(escape_markdown(f"The last {what} was not made: {failed.error}"))
    return running_job(worker, notebook_id, kind), sources_in_use(store, notebook_id)


def choice(label: str, options: Sequence[str], key: str, names: Mapping[str, str]) -> str:
    """A horizontal radio of `options` named by `names`, keeping its choice while it is offered
    (a model connected or not changes what is)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    return st.radio(label, list(options), key=key, horizontal=True, format_func=names.__getitem__)


def make_button(
    label: str,
    key: str,
    on_click: Callable[..., None],
    args: tuple,
    worker: ImportWorker,
    job: Job | None,
    what: str,
) -> None:
    """The button that queues the job, off while one runs (the form keeps its choices
    meanwhile), and the running job's progress."""
    st.button(
        label,
        key=key,
        on_click=on_click,
        args=args,
        disabled=job is not None,
        help=f"In the background: the {what} is kept, and shows here when it is made.",
    )
    if job is not None:
        job_progress(worker, job)


def chosen_sources(prefix: str, sources: Mapping[int, Document]) -> None:
    """'All N sources in use' or 'Chosen', and the sources chosen (widget keys PREFIX_scope,
    PREFIX_sources; read them back with `sources_asked`)."""
    scope = st.radio(
        "Sources",
        [ALL_SOURCES, CHOSEN_SOURCES],
        key=f"{prefix}_scope",
        horizontal=True,
        format_func=lambda s: (
            f"All {count(len(sources), 'source')} in use" if s == ALL_SOURCES else "Chosen"
        ),
    )
    if scope == CHOSEN_SOURCES:
        st.multiselect(
            "Chosen sources",
            list(sources),
            key=f"{prefix}_sources",
            format_func=lambda i: sources[i].title,
        )


def sources_asked(prefix: str, what: str) -> tuple[int, ...] | None:
    """The sources chosen with `chosen_sources` (() for all); None, with the error flashed,
    when 'Chosen' was picked with none chosen. `what` names the thing made ('report')."""
    state = st.session_state
    if state.get(f"{prefix}_scope") != CHOSEN_SOURCES:
        return ()
    chosen = tuple(state.get(f"{prefix}_sources", ()))
    if not chosen:
        state["flash"] = ("error", f"Choose at least one source, or make the {what} of all.")
        return None
    return chosen


def job_progress(worker: ImportWorker, job: Job) -> None:
    """A running job's progress bar; the whole page runs again once the job is over."""
    fraction = min(job.done / job.total, 1.0) if job.total else 0.0
    st.progress(fraction, text=escape_markdown(f"{job.filename}: {job.label or 'waiting'}"))
    rerun_when_made(worker, job.notebook_id, job.kind)


@st.fragment(run_every=REFRESH_SECONDS)
def rerun_when_made(worker: ImportWorker, notebook_id: int, kind: str) -> None:
    if running_job(worker, notebook_id, kind) is None:
        st.rerun(scope="app")


def kept_choice(prefix: str, ids: Sequence[int], label: str, name: Callable[[int], str]) -> int:
    """A selectbox of kept things (reports, audio overviews), the newest first: the one asked for
    opens once it is made (PREFIX_asked holds the newest id when it was asked), else the one
    open stays, else the newest. Widget key PREFIX_open; returns the id chosen."""
    state = st.session_state
    asked = state.get(f"{prefix}_asked")
    if asked is not None and ids[0] > asked:
        state[f"{prefix}_open"] = ids[0]
        state.pop(f"{prefix}_asked")
    if state.get(f"{prefix}_open") not in ids:
        state[f"{prefix}_open"] = ids[0]
    return st.selectbox(label, list(ids), key=f"{prefix}_open", format_func=name)


def sources_in_use(store: Store, notebook_id: int) -> dict[int, Document]:
    """The notebook's sources used in answers by id; when there is none, it says so."""
    sources = {d.id: d for d in store.documents(notebook_id) if d.enabled}
    if not sources:
        st.caption("No sources in use yet: add some under Sources, or switch them on there.")
    return sources
