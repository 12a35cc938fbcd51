"""The Notes view: answers kept as notes and a person's own notes; write, edit, search, delete,
download, and use a note as a source of the notebook."""

from __future__ import annotations

import streamlit as st

from knownote.answer import notes
from knownote.answer.notes import Note
from knownote.errors import KnowNoteError, NotFound
from knownote.pipeline.worker import ImportWorker
from knownote.settings import Settings
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Notebook, Store
from knownote.ui.chat import show_answer
from knownote.ui.common import ALREADY_DELETED, ask_before_deleting, count, set_confirm
from knownote.ui.download import prepare

NOTE_HELP = "Markdown: **bold**, *italic*, lists, links. HTML is shown as text."


def notes_view(store: Store, notebook: Notebook, settings: Settings, worker: ImportWorker) -> None:
    from knownote.ui.reports import report_links  # here: it loads the report writers
    from knownote.ui.study import open_report

    report_links(store, notebook, open_report)
    with st.expander("Write a note", expanded=False), st.form("new_note", clear_on_submit=True):
        title = st.text_input("Title", placeholder="Optional: the first line is used")
        body = st.text_area("Note", height=160, help=NOTE_HELP)
        if st.form_submit_button("Save note"):
            try:
                notes.write(store, notebook.id, title, body)
            except KnowNoteError as e:
                st.error(str(e))
    search = st.text_input("Search notes", key="note_search", placeholder="Words in a note")
    kept = notes.notes(store, notebook.id, search)
    top, download = st.columns([4, 1.6], vertical_alignment="bottom")
    if search:
        top.caption(f"{count(len(kept), 'note')} holding “{escape_markdown(search)}”")
    elif not kept:
        top.caption(
            "No notes yet. Write one above, or keep an answer with “Save as note” in the chat."
        )
    download.button(
        "Download notes and chats",
        key="download_notes",
        on_click=download_notes,
        args=(store, notebook.id, settings.app_url),
    )
    for note in kept:
        with st.container(border=True):
            show_note(store, note, settings, worker)


def download_notes(store: Store, notebook_id: int, app_url: str) -> None:
    """Built only when clicked, and handed to this session's page only (no URL)."""
    try:
        markdown = notes.export_notebook(store, notebook_id, app_url)
        prepare(
            f"knownote-notebook-{notebook_id}.md",
            "text/markdown",
            markdown.encode(),
            what="These notes and chats",
        )
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def show_note(store: Store, note: Note, settings: Settings, worker: ImportWorker) -> None:
    editing = st.session_state.get("editing_note") == note.id
    if editing:
        edit_form(store, note, worker)
    else:
        st.markdown(f"#### {escape_markdown(note.title)}")
        if note.from_answer:
            show_answer(store, note.as_answer())
        else:
            st.markdown(note.body)  # raw HTML in it is shown as text, never run
    updated = "" if note.updated_at == note.created_at else f", edited {note.updated_at:%Y-%m-%d}"
    kind = "Kept from an answer" if note.from_answer else "Written"
    st.caption(f"{kind} {note.created_at:%Y-%m-%d %H:%M}{updated}")
    edit, use, remove, _ = st.columns([1, 1.4, 1, 3])
    if not editing:
        edit.button("Edit", key=f"edit_note_{note.id}", on_click=start_edit, args=(note.id,))
    use.button(
        "Use as a source",
        key=f"use_note_{note.id}",
        on_click=use_as_source,
        args=(worker, note, settings),
        help="Import this note into the notebook's sources, so answers can cite it.",
    )
    ask_before_deleting(
        remove,
        ("note", note.id),
        key=f"note_{note.id}",
        label="Delete",
        warning="Delete this note?",
        on_delete=remove_note,
        args=(store, note.id),
    )


def edit_form(store: Store, note: Note, worker: ImportWorker) -> None:
    with st.form(f"edit_note_form_{note.id}"):
        title = st.text_input("New title", value=note.title, key=f"note_title_{note.id}")
        help_ = NOTE_HELP
        if note.from_answer:
            help_ += " Keep the [n] marks: they point at the passages the answer had."
        body = st.text_area(
            "New text", value=note.body, height=200, help=help_, key=f"note_body_{note.id}"
        )
        save, cancel, _ = st.columns([1, 1, 4])
        if save.form_submit_button("Save changes"):
            try:
                embedder = worker.embedder(store.notebook(note.notebook_id).embedding_model)
                notes.edit(store, note.id, title, body, embedder)
            except KnowNoteError as e:
                st.error(str(e))
                return
            st.session_state["editing_note"] = None
            st.rerun()
        if cancel.form_submit_button("Cancel"):
            st.session_state["editing_note"] = None
            st.rerun()


def start_edit(note_id: int) -> None:
    st.session_state["editing_note"] = note_id


def remove_note(store: Store, note_id: int) -> None:
    set_confirm(None)
    try:
        notes.delete(store, note_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="note"))


def use_as_source(worker: ImportWorker, note: Note, settings: Settings) -> None:
    filename, data = notes.as_source(note)
    worker.queue.enqueue(note.notebook_id, filename, data, settings.passage_size)
    worker.wake()
    st.session_state["flash"] = (
        "info",
        f"“{escape_markdown(filename)}” is being imported; it shows under Sources when ready.",
    )
