"""Carry a notebook to another machine: download it as one archive, import an uploaded one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st

from knownote.errors import KnowNoteError
from knownote.settings import Settings
from knownote.show.excerpt import escape_markdown
from knownote.store.archive import export_notebook, import_notebook
from knownote.store.db import Notebook, Store
from knownote.ui.download import check_fits, prepare
from knownote.ui.uploads import release


def archive_sidebar(store: Store, settings: Settings, current: Notebook | None) -> None:
    """A download of the current notebook and an upload that imports an archive."""
    with st.expander("Move or back up"):
        if current is not None:
            st.button(
                "Download this notebook",
                key="prepare_archive",
                on_click=prepare_archive,
                args=(store, current),
                help="One .knownote file: sources, passages, vectors and chats.",
            )
        # The uploader appears only when asked for: one file input on the page, the sources'.
        if st.toggle("Import a notebook archive", key="archive_import_open"):
            st.file_uploader("Archive", type=["knownote"], key="archive_upload")
            st.text_input("Import as", key="archive_name", placeholder="the archive's own name")
            st.button("Import notebook", key="import_archive", on_click=import_archive,
                      args=(store, settings))  # fmt: skip


def prepare_archive(store: Store, notebook: Notebook) -> None:
    """Export to a temporary file and hand the bytes to this session's page only (no URL)."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "notebook.knownote"
        try:
            export_notebook(store, notebook.id, target)
            what = "This notebook's archive"
            check_fits(target.stat().st_size, what)  # before its bytes are read
            prepare(
                f"{notebook.name}.knownote",
                "application/zip",
                target.read_bytes(),
                what=what,
            )
        except KnowNoteError as e:
            st.session_state["flash"] = ("error", escape_markdown(str(e)))


def import_archive(store: Store, settings: Settings) -> None:
    upload = st.session_state.get("archive_upload")
    if upload is None:
        st.session_state["flash"] = ("error", "Choose a .knownote file to import first.")
        return
    name = st.session_state.get("archive_name", "").strip() or None
    handle, path = tempfile.mkstemp(suffix=".knownote")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(upload.getbuffer())
        result = import_notebook(
            store, Path(path), name=name, max_bytes=settings.max_archive_mb * 1024 * 1024
        )
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
        return
    finally:
        Path(path).unlink(missing_ok=True)
        release([upload])  # its bytes are imported or refused: memory holds them no longer
    shown = escape_markdown(result.name)
    st.session_state["flash"] = (
        "success",
        f"Imported the notebook “{shown}”: {result.documents} sources, {result.chats} chats.",
    )
    st.session_state["pending_notebook"] = result.notebook_id
    st.session_state["archive_name"] = ""
