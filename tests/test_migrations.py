import duckdb

from knownote.migrations import MIGRATIONS, migrate
from knownote.store import Store


def test_blank_database_gets_every_migration_recorded(db_path):
    store = Store.open(db_path)
    rows = store.db.execute("SELECT version, name FROM _migrations ORDER BY version").fetchall()
    store.close()
    assert rows == [(i, m.__name__) for i, m in enumerate(MIGRATIONS, start=1)]


def test_schema_has_the_designed_tables(store):
    tables = {
        r[0]
        for r in store.db.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert {
        "notebooks",
        "documents",
        "pages",
        "passages",
        "passage_terms",
        "chats",
        "messages",
        "answer_passages",
        "_migrations",
    } <= tables


def test_migrating_twice_applies_nothing_new(tmp_path):
    db = duckdb.connect(str(tmp_path / "x.duckdb"))
    assert len(migrate(db)) == len(MIGRATIONS)
    assert migrate(db) == []
    db.close()


def test_reopening_keeps_the_data(db_path):
    store = Store.open(db_path)
    store.create_notebook("Kept", "m", 3)
    store.close()
    store = Store.open(db_path)
    assert [n.name for n in store.notebooks()] == ["Kept"]
    store.close()
