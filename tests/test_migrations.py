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


def test_document_passage_counts_are_backfilled(tmp_path, monkeypatch):
    import knownote.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:3])
    migrations.migrate(db)
    db.execute(
        "INSERT INTO documents (id, notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages) VALUES (7, 1, 't', 't.txt', 'txt', 'x', 'ab cd', 5, 0)"
    )
    for idx in range(2):
        db.execute(
            'INSERT INTO passages (document_id, notebook_id, idx, start, "end", text, n_terms) '
            "VALUES (7, 1, ?, 0, 2, 'ab', 1)",
            [idx],
        )
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert migrations.migrate(db) == ["m004_document_passage_counts"]
    assert db.execute("SELECT n_passages FROM documents WHERE id = 7").fetchone() == (2,)
    db.close()
