"""Which notebooks make up the library that "All notebooks" asks: every notebook unless it was
left out (`notebooks.in_library`, m030; NULL, as for notebooks made before it, is in)."""

from __future__ import annotations

from collections.abc import Sequence

from knownote.errors import KnowNoteError, NotFound
from knownote.store.db import Notebook, Store

ALL = "all"  # what the command line and MCP take for every notebook of the library


class LibraryError(KnowNoteError):
    """A question asked of notebooks that cannot be asked (none chosen, none in the library)."""


def library_notebooks(store: Store) -> list[Notebook]:
    """The notebooks in the library, by id."""
    with store.lock:
        rows = store.db.execute(
            "SELECT id FROM notebooks WHERE coalesce(in_library, true) ORDER BY id"
        ).fetchall()
    wanted = {row[0] for row in rows}
    return [n for n in store.notebooks() if n.id in wanted]


def in_library(store: Store, notebook_id: int) -> bool:
    """Whether "All notebooks" searches this notebook."""
    with store.lock:
        row = store.db.execute(
            "SELECT coalesce(in_library, true) FROM notebooks WHERE id = ?", [notebook_id]
        ).fetchone()
    if row is None:
        raise NotFound(f"There is no notebook {notebook_id}.")
    return bool(row[0])


def set_in_library(store: Store, notebook_id: int, included: bool) -> None:
    """Put the notebook in the library, or leave it out (its own chats are unchanged)."""
    with store.transaction() as db:
        row = db.execute(
            "UPDATE notebooks SET in_library = ? WHERE id = ? RETURNING id", [included, notebook_id]
        ).fetchone()
        if row is None:
            raise NotFound(f"There is no notebook {notebook_id}.")


def choose(store: Store, ids: Sequence[int] | None = None) -> list[Notebook]:
    """The notebooks a question across the library asks: these ids, or (None) every notebook
    in the library. Raises LibraryError when that leaves none."""
    if ids is None:
        chosen = library_notebooks(store)
        if not chosen:
            raise LibraryError(
                "No notebook is in the library: every one was left out. Put one back in (the "
                "chat's “In All notebooks” switch, or `knownote library NOTEBOOK on`)."
            )
        return chosen
    if not ids:
        raise LibraryError("Choose at least one notebook to ask.")
    return [store.notebook(i) for i in dict.fromkeys(ids)]
