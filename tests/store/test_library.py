"""Which notebooks are in the library (m030), stored per notebook."""

from __future__ import annotations

import duckdb
import pytest

from knownote.errors import NotFound
from knownote.store import migrations
from knownote.store.library import in_library, library_notebooks, set_in_library
from knownote.store.migrations import MIGRATIONS, migrate


def test_a_new_notebook_is_in_the_library_and_can_be_left_out(store, embedder):
    a = store.create_notebook("A", embedder.name, embedder.dim)
    b = store.create_notebook("B", embedder.name, embedder.dim)
    assert in_library(store, a.id) and [n.id for n in library_notebooks(store)] == [a.id, b.id]
    set_in_library(store, a.id, False)
    assert not in_library(store, a.id)
    assert [n.id for n in library_notebooks(store)] == [b.id]
    set_in_library(store, a.id, True)
    assert in_library(store, a.id)


def test_an_unknown_notebook_says_so(store):
    with pytest.raises(NotFound, match="no notebook 42"):
        set_in_library(store, 42, False)
    with pytest.raises(NotFound, match="no notebook 42"):
        in_library(store, 42)


def test_m030_keeps_older_notebooks_and_chats_in_and_allows_chats_of_no_notebook(monkeypatch):
    db = duckdb.connect()
    before = [m for m in MIGRATIONS if m.__name__ < "m030"]
    monkeypatch.setattr(migrations, "MIGRATIONS", before)
    migrate(db)
    db.execute(
        "INSERT INTO notebooks (name, embedding_model, embedding_dim) VALUES ('Old', 'm', 3)"
    )
    db.execute("INSERT INTO chats (notebook_id, title) VALUES (1, 'kept')")
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert "m030_library" in migrate(db)
    assert db.execute("SELECT in_library FROM notebooks").fetchall() == [(True,)]
    db.execute("INSERT INTO chats (notebook_id, title) VALUES (NULL, 'of the library')")
    rows = db.execute("SELECT notebook_id, title FROM chats ORDER BY id").fetchall()
    assert rows == [(1, "kept"), (None, "of the library")]
