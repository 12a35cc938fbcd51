"""Deleting a notebook: each table's owner deletes its own rows, all in one transaction."""

from __future__ import annotations

from knownote.answer.chats import delete_notebook_chats
from knownote.answer.notes import delete_notebook_notes
from knownote.store.db import Store
from knownote.store.reembed import delete_notebook_reembed


def delete_notebook(store: Store, notebook_id: int) -> None:
    """Delete a notebook with its documents, chats and notes; its files once nothing uses them.
    Raises NotFound when it is already gone."""
    notebook = store.notebook(notebook_id)
    with store.transaction() as db:
        delete_notebook_chats(db, notebook_id)
        delete_notebook_notes(db, notebook_id)
        delete_notebook_reembed(db, notebook_id)
        hashes = store.delete_notebook_rows(db, notebook)
    for sha256 in hashes:
        store.discard_file_if_unused(sha256)
