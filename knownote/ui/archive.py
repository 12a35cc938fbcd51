"""Carry a notebook to another machine: download it as one archive, import an uploaded one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st

from knownote.archive import export_notebook, import_notebook
from knownote.errors import KnowNoteError
from knownote.excerpt import escape_markdown
from knownote.settings import Settings
from knownote.store import Notebook, Store


def archive_sidebar(store: Store, settings: Settings, current: Notebook | None) -> None:
    """A download of the current notebook and an upload that imports an archive."""
    with st.expander("Move or back up"):
        if current is not None:
            ready = st.session_state.get("archive_ready")
            if ready and ready[0] == current.id:
                st.download_button(
                    f"Download “{current.name}”",
                    data=ready[1],
                    file_name=f"{current.name}.knownote",
                    mime="application/zip",
                    key="download_archive",
                )
            else:
                st.button(
                    "Prepare a download of this notebook",
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
    """Export to a temporary file and keep the bytes in this session only."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "notebook.knownote"
        try:
            export_notebook(store, notebook.id, target)
        except KnowNoteError as e:
            st.session_state["flash"] = ("error", escape_markdown(str(e)))
            return
        st.session_state["archive_ready"] = (notebook.id, target.read_bytes())


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
    shown = escape_markdown(result.name)
    st.session_state["flash"] = (
        "success",
        f"Imported the notebook “{shown}”: {result.documents} sources, {result.chats} chats.",
    )
    st.session_state["pending_notebook"] = result.notebook_id
    st.session_state["archive_name"] = ""
