"""Small pieces shared by the app's views: cached document text and confirmation state."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from knownote.errors import KnowNoteError
from knownote.store.db import Store
from knownote.store.jobs import QUEUED, RUNNING, Job

if TYPE_CHECKING:
    from knownote.pipeline.worker import ImportWorker

# Another browser window (a session of the same server) can delete what this one still shows.
ALREADY_DELETED = "That {what} was already deleted, perhaps in another window."


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
