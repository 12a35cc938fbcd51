"""Notebooks as people name them, and deleting one: each table's owner deletes its own rows, all
in one transaction."""

from __future__ import annotations

from knownote.answer.chats import delete_notebook_chats
from knownote.answer.notes import delete_notebook_notes
from knownote.errors import NotFound
from knownote.store.audio_overviews import delete_notebook_overviews
from knownote.store.db import Document, Notebook, Store
from knownote.store.library import ALL, choose
from knownote.store.mind_maps import delete_notebook_mind_maps
from knownote.store.reembed import delete_notebook_reembed
from knownote.store.reports import delete_notebook_reports


def delete_notebook(store: Store, notebook_id: int) -> None:
    """Delete a notebook with its documents, chats, notes, reports and audio overviews; its
    files (originals and audio) once nothing uses them. Raises NotFound when it is already
    gone."""
    notebook = store.notebook(notebook_id)
    with store.transaction() as db:
        delete_notebook_chats(db, notebook_id)
        delete_notebook_notes(db, notebook_id)
        delete_notebook_reembed(db, notebook_id)
        delete_notebook_mind_maps(db, notebook_id)
        delete_notebook_reports(db, notebook_id)
        audio = delete_notebook_overviews(db, notebook_id)
        hashes = store.delete_notebook_rows(db, notebook) + audio
    for sha256 in hashes:
        store.discard_file_if_unused(sha256)


def find_notebook(store: Store, name_or_id: str) -> Notebook:
    """A notebook by name, or by number when no notebook has that name."""
    notebook = store.notebook_by_name(name_or_id)
    if notebook is None and name_or_id.strip().isdigit():
        return store.notebook(int(name_or_id))
    if notebook is None:
        raise NotFound(
            f"There is no notebook called “{name_or_id}”. List them with: knownote notebooks"
        )
    return notebook


def find_notebooks(store: Store, names: str) -> list[Notebook]:
    """The notebooks a question across the library asks: "all" (every notebook in the library,
    not those left out of it), or names (or numbers) separated by commas."""
    if names.strip().lower() == ALL:
        return choose(store)
    whole = store.notebook_by_name(names)  # a name that holds a comma
    if whole is not None:
        return [whole]
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    if not wanted:
        raise NotFound("Name a notebook, several separated by commas, or all.")
    found = {n.id: n for n in (find_notebook(store, name) for name in wanted)}
    return list(found.values())


def find_source(store: Store, notebook: Notebook, document_id: int) -> Document:
    """A document of this notebook; NotFound when it is gone or belongs to another notebook."""
    try:
        document = store.document(document_id)
    except NotFound:
        document = None
    if document is None or document.notebook_id != notebook.id:
        raise NotFound(
            f"The notebook “{notebook.name}” has no source {document_id}. List its sources "
            "to see their numbers."
        )
    return document
