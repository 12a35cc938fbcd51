"""A process killed (SIGKILL) inside any migration, of a new or an old database (one made by hand
at migration 3, and the oldest that main's first version wrote): the next start finishes or
redoes the migrations and the database checks clean.

Each migration runs in its own transaction, so the kill lands after the migration's statements
and before its commit: the worst moment.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

import knownote.store.migrations as migrations
from knownote.store.check import check_store
from knownote.store.db import Store
from knownote.store.migrations import MIGRATIONS
from tests.past_versions import LEVELS, unpack

ROOT = Path(__file__).resolve().parents[2]
# Runs the real Store.open with migration `k` (0-based) replaced by one that does its work and
# then kills the process before the commit; only the first `keep` migrations exist.
KILLER = """
import os, signal, sys
import knownote.store.migrations as m
k, keep = int(sys.argv[2]), int(sys.argv[3])
chosen = list(m.MIGRATIONS[:keep])
real = chosen[k]
def killed(db):
    real(db)
    os.kill(os.getpid(), signal.SIGKILL)
killed.__name__ = real.__name__
chosen[k] = killed
m.MIGRATIONS = chosen
from knownote.store.db import Store
Store.open(sys.argv[1])
print("not killed")
"""


def open_and_kill(db: Path, k: int, keep: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", KILLER, str(db), str(k), str(keep)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr


def schema(db: duckdb.DuckDBPyConnection) -> list[tuple]:
    return db.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_name NOT LIKE 'vectors_%' ORDER BY table_name, column_name"
    ).fetchall()


def assert_migrated_whole(store: Store, clean_schema: list[tuple], documents: int) -> None:
    """Every migration recorded under its number, the schema of a new database, all checked."""
    versions = store.db.execute("SELECT version FROM _migrations ORDER BY version").fetchall()
    assert [v for (v,) in versions] == [int(m.__name__[1:4]) for m in MIGRATIONS]
    assert schema(store.db) == clean_schema
    assert check_store(store) == (documents, [])


@pytest.fixture(scope="module")
def clean_schema(tmp_path_factory):
    db = duckdb.connect(str(tmp_path_factory.mktemp("clean") / "clean.duckdb"))
    migrations.migrate(db)
    yield schema(db)
    db.close()


@pytest.mark.parametrize("k", range(len(MIGRATIONS)), ids=[m.__name__ for m in MIGRATIONS])
def test_a_kill_inside_a_migration_of_a_new_database_is_redone(k, tmp_path, clean_schema):
    db = tmp_path / "new.duckdb"
    open_and_kill(db, k, len(MIGRATIONS))
    store = Store.open(db)
    try:
        assert_migrated_whole(store, clean_schema, 0)
    finally:
        store.close()


OLD = 3  # a database last opened when three migrations existed


@pytest.fixture(scope="module")
def old_database(tmp_path_factory):
    """A database at migration 3 holding one whole document, as an old KnowNote left it."""
    path = tmp_path_factory.mktemp("old") / "old.duckdb"
    db = duckdb.connect(str(path))
    real = migrations.MIGRATIONS
    migrations.MIGRATIONS = real[:OLD]
    try:
        migrations.migrate(db)
    finally:
        migrations.MIGRATIONS = real
    db.execute(
        "INSERT INTO notebooks (name, embedding_model, embedding_dim) VALUES ('N', 'm', 384)"
    )
    db.execute(
        "INSERT INTO documents (notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages) VALUES (1, 't', 't.txt', 'txt', 'x', 'ab cd', 5, 0)"
    )
    db.execute(
        'INSERT INTO passages (document_id, notebook_id, idx, start, "end", text, n_terms) '
        "VALUES (1, 1, 0, 0, 5, 'ab cd', 2)"
    )
    db.execute("INSERT INTO passage_terms VALUES (1, 1, 'ab', 1), (1, 1, 'cd', 1)")
    vector = np.where(np.arange(384) % 3 == 0, 1.0, -1.0).astype(np.float32)
    vector /= np.linalg.norm(vector)
    db.execute("CREATE TABLE vectors_384 (passage_id BIGINT PRIMARY KEY, embedding FLOAT[384])")
    db.execute("INSERT INTO vectors_384 VALUES (1, ?::FLOAT[384])", [vector.tolist()])
    db.close()
    return path


@pytest.mark.parametrize(
    "k", range(OLD, len(MIGRATIONS)), ids=[m.__name__ for m in MIGRATIONS[OLD:]]
)
def test_a_kill_inside_a_migration_of_an_old_database_is_redone(
    k, tmp_path, old_database, clean_schema
):
    db = tmp_path / "old.duckdb"
    shutil.copyfile(old_database, db)
    open_and_kill(db, k, len(MIGRATIONS))
    store = Store.open(db)
    try:
        assert schema(store.db) == clean_schema
        assert store.documents(1)[0].passages == 1
        assert check_store(store, files=False) == (1, [])
    finally:
        store.close()


# The oldest database main ever wrote (two migrations: documents and chats), made by that
# version itself with three documents (tests/store/past_versions, see test_upgrades.py); and
# the first one that recorded migrations by their place in the list rather than their number.
OLDEST = LEVELS[0]
BY_PLACE = next(
    level
    for level in LEVELS
    if level["versions"] != [int(name[1:4]) for name in level["migrations"]]
)


def rows_of(db: duckdb.DuckDBPyConnection) -> list[tuple]:
    return db.execute(
        'SELECT document_id, idx, start, "end", text FROM passages ORDER BY document_id, idx'
    ).fetchall()


# Every migration after the oldest level's; and the first one the place-numbered level lacks
# (m006: its "version 6" was m008), killed after the renumbering committed.
KILLS = [(OLDEST, k) for k in range(len(OLDEST["migrations"]), len(MIGRATIONS))] + [
    (
        BY_PLACE,
        next(k for k, m in enumerate(MIGRATIONS) if m.__name__ not in BY_PLACE["migrations"]),
    )
]


@pytest.mark.parametrize(
    ("level", "k"),
    KILLS,
    ids=lambda value: value["commit"] if isinstance(value, dict) else MIGRATIONS[value].__name__,
)
def test_a_kill_inside_a_migration_of_a_past_database_is_redone(level, k, tmp_path, clean_schema):
    db = unpack(level, tmp_path)
    with duckdb.connect(str(db), read_only=True) as old:
        passages = rows_of(old)
    open_and_kill(db, k, len(MIGRATIONS))
    store = Store.open(db)
    try:
        assert_migrated_whole(store, clean_schema, 3)
        assert rows_of(store.db) == passages
    finally:
        store.close()
