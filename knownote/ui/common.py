"""Small pieces shared by the app's views: cached document text and confirmation state."""

from __future__ import annotations

import streamlit as st

from knownote.errors import KnowNoteError
from knownote.store import Store

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


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
