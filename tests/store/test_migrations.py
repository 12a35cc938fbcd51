import duckdb

from knownote.store.db import Store
from knownote.store.migrations import MIGRATIONS, migrate


def test_blank_database_gets_every_migration_recorded(db_path):
    store = Store.open(db_path)
    rows = store.db.execute("SELECT version, name FROM _migrations ORDER BY version").fetchall()
    store.close()
    assert rows == [(int(m.__name__[1:4]), m.__name__) for m in MIGRATIONS]


def test_migrations_are_numbered_in_order_and_versioned_by_their_number():
    numbers = [int(m.__name__[1:4]) for m in MIGRATIONS]
    assert numbers == sorted(set(numbers)) and numbers[:5] == [1, 2, 3, 4, 5]


def test_a_database_that_lacks_a_migration_from_the_middle_gets_it(tmp_path, monkeypatch):
    from knownote.store import migrations

    db = duckdb.connect(str(tmp_path / "x.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m is not MIGRATIONS[5]])
    migrate(db)
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert migrate(db) == [MIGRATIONS[5].__name__]  # a later one already there is not redone
    db.close()


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
    import knownote.store.migrations as migrations

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
    assert migrations.migrate(db)[0] == "m004_document_passage_counts"
    assert db.execute("SELECT n_passages FROM documents WHERE id = 7").fetchone() == (2,)
    db.close()


def test_passage_codes_are_rebuilt_as_signed_words_from_the_vectors(tmp_path, monkeypatch):
    import numpy as np

    import knownote.store.migrations as migrations
    from knownote.index.codes import binary_codes

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:4])
    migrations.migrate(db)
    db.execute(
        'INSERT INTO passages (id, document_id, notebook_id, idx, start, "end", text, n_terms) '
        "VALUES (5, 7, 1, 0, 0, 2, 'ab', 1)"
    )
    vector = np.where(np.arange(384) % 3 == 0, 1.0, -1.0).astype(np.float32)
    db.execute("CREATE TABLE vectors_384 (passage_id BIGINT PRIMARY KEY, embedding FLOAT[384])")
    db.execute("INSERT INTO vectors_384 VALUES (5, ?::FLOAT[384])", [vector.tolist()])
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:5])
    assert migrations.migrate(db) == ["m005_signed_passage_codes"]
    row = db.execute("SELECT * FROM passage_codes").fetchone()
    assert row[:3] == (5, 1, 7)
    assert list(row[3:]) == binary_codes(vector)[0].tolist()
    types = db.execute(
        "SELECT DISTINCT data_type FROM information_schema.columns "
        "WHERE table_name = 'passage_codes' AND column_name LIKE 'c_'"
    ).fetchall()
    assert types == [("BIGINT",)]
    db.close()


def test_answers_get_a_table_of_support_spans(store):
    columns = store.db.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_name = 'answer_supports' ORDER BY ordinal_position"
    ).fetchall()
    assert [c for (c,) in columns] == [
        "message_id", "sentence", "sentence_start", "sentence_end", "n", "document_id",
        "start", "end", "text", "score", "suggested", "weak",
    ]  # fmt: skip


def test_ocr_pages_table_holds_boxes_and_lines_per_page(store):
    columns = store.db.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = 'ocr_pages' ORDER BY ordinal_position"
    ).fetchall()
    assert columns == [
        ("document_id", "BIGINT"),
        ("page_no", "INTEGER"),
        ("boxes", "BLOB"),
        ("lines", "BLOB"),
    ]


def test_term_keys_are_added_to_terms_stored_before_them(tmp_path, monkeypatch):
    import knownote.store.migrations as migrations
    from knownote.search.retrieve import Scope, keyword_scores

    path = tmp_path / "old.duckdb"
    db = duckdb.connect(str(path))
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:5])
    migrations.migrate(db)
    db.execute(
        "INSERT INTO notebooks (id, name, embedding_model, embedding_dim) VALUES (1, 'n', 'm', 3)"
    )
    db.execute(
        "INSERT INTO documents (id, notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages) VALUES (7, 1, 't', 't.txt', 'txt', 'x', 'cat mat', 7, 0)"
    )
    db.execute(
        'INSERT INTO passages (id, document_id, notebook_id, idx, start, "end", text, n_terms) '
        "VALUES (5, 7, 1, 0, 0, 7, 'cat mat', 2)"
    )
    db.execute("INSERT INTO passage_terms VALUES (5, 1, 'cat', 1), (5, 1, 'mat', 1)")
    db.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    store = Store.open(path)
    keys = store.db.execute("SELECT term, term_key FROM passage_terms ORDER BY term").fetchall()
    assert len({key for _, key in keys}) == 2 and all(key is not None for _, key in keys)
    assert [pid for pid, _ in keyword_scores(store, Scope(1), "cat", 5)] == [5]
    store.close()


def test_keyword_rows_stored_before_are_sorted_by_term(tmp_path, monkeypatch):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m020"])
    migrations.migrate(db)
    rows = [(i, 1, f"term{i % 7}", i % 3 + 1) for i in range(50)]
    db.executemany("INSERT INTO passage_terms (passage_id, notebook_id, term, tf) VALUES "
                   "(?, ?, ?, ?)", rows)  # fmt: skip
    db.execute("UPDATE passage_terms SET term_key = (md5_number_lower(term) >> 1)::BIGINT")
    columns = "passage_id, notebook_id, term, tf, term_key"
    kept = db.execute(f"SELECT {columns} FROM passage_terms ORDER BY ALL").fetchall()
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert "m020_sorted_terms" in migrations.migrate(db)
    keys = [
        k for (k,) in db.execute("SELECT term_key FROM passage_terms ORDER BY rowid").fetchall()
    ]
    assert keys == sorted(keys)
    assert db.execute(f"SELECT {columns} FROM passage_terms ORDER BY ALL").fetchall() == kept
    assert db.execute("SELECT sorted_rows FROM sorted_terms").fetchall() == [(50,)]
    db.close()


def test_a_blank_database_has_no_sorted_terms_yet(store):
    assert store.db.execute("SELECT sorted_rows FROM sorted_terms").fetchall() == [(0,)]


def test_documents_imported_before_are_marked_as_indexed_the_old_way(tmp_path, monkeypatch):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    before = [m for m in MIGRATIONS if migrations.migration_version(m) < 18]
    monkeypatch.setattr(migrations, "MIGRATIONS", before)
    migrations.migrate(db)
    db.execute(
        "INSERT INTO documents (id, notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages) VALUES (7, 1, 't', 't.txt', 'txt', 'x', 'ab cd', 5, 0)"
    )
    db.execute(
        "INSERT INTO import_jobs (notebook_id, filename, sha256, size, passage_size) "
        "VALUES (1, 'a.pdf', 'y', 1, 500)"
    )
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert "m018_how_documents_are_indexed" in migrations.migrate(db)
    row = db.execute("SELECT embedded_as, terms_as FROM documents WHERE id = 7").fetchone()
    assert row == ("text", "words")
    assert db.execute("SELECT kind FROM import_jobs").fetchall() == [("import",)]
    db.close()


def test_keyword_rows_stored_before_get_their_passage_length_in_place(tmp_path, monkeypatch):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m021"])
    migrations.migrate(db)
    db.execute(
        'INSERT INTO passages (id, document_id, notebook_id, idx, start, "end", text, n_terms) '
        "SELECT i, 1, 1, i, 0, 1, 'x', 10 + i FROM range(3) t(i)"
    )
    db.execute(
        "INSERT INTO passage_terms (passage_id, notebook_id, term, tf, term_key) "
        "SELECT i % 3, 1, 't' || (9 - i), 1, 9 - i FROM range(9) t(i)"
    )
    order = db.execute("SELECT passage_id, term FROM passage_terms ORDER BY rowid").fetchall()
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m022"])
    assert migrations.migrate(db) == ["m021_term_rows_carry_passage_length"]
    rows = db.execute("SELECT passage_id, term, n_terms FROM passage_terms ORDER BY rowid")
    assert [(p, t, n) for p, t, n in rows.fetchall()] == [(p, t, 10 + p) for p, t in order]
    db.close()


def test_keyword_rows_lose_their_copy_of_the_passage_length_and_keep_their_order(
    tmp_path, monkeypatch
):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m032"])
    migrations.migrate(db)
    db.execute(
        'INSERT INTO passages (id, document_id, notebook_id, idx, start, "end", text, n_terms) '
        "SELECT i, 1, 1, i, 0, 1, 'x', 10 + i FROM range(3) t(i)"
    )
    db.execute(
        "INSERT INTO passage_terms (passage_id, notebook_id, term, tf, term_key, n_terms) "
        "SELECT i % 3, 1, 't' || (9 - i), 1 + i, 9 - i, 10 + i % 3 FROM range(9) t(i)"
    )
    before = db.execute("SELECT passage_id, term, tf, term_key FROM passage_terms ORDER BY rowid")
    before = before.fetchall()
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert migrations.migrate(db) == ["m032_term_rows_without_passage_length"]
    columns = [r[0] for r in db.execute("DESCRIBE passage_terms").fetchall()]
    assert columns == ["passage_id", "notebook_id", "term", "tf", "term_key"]
    after = db.execute("SELECT passage_id, term, tf, term_key FROM passage_terms ORDER BY rowid")
    after = after.fetchall()
    assert after == before
    db.close()


def test_documents_stored_before_have_no_languages_yet(tmp_path):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    migrations.migrate(db)
    db.execute(
        "INSERT INTO notebooks (id, name, embedding_model, embedding_dim) VALUES (1, 'n', 'm', 3)"
    )
    db.execute(
        "INSERT INTO documents (id, notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages) VALUES (1, 1, 't', 'f', 'text', 'h', 'x', 1, 0)"
    )
    assert db.execute("SELECT languages FROM documents").fetchall() == [(None,)]
    db.close()


def test_migrations_recorded_by_their_place_in_the_list_are_renumbered_by_name(tmp_path):
    # Before main's a0bc3c2 the version was the place in the list: a database of that time with
    # m001-m005 and m008 recorded m008_support_spans as version 6, before m006 existed.
    import knownote.store.migrations as migrations

    early = [m for m in MIGRATIONS if m.__name__[:4] in ("m001", "m002", "m003", "m004", "m005")]
    supports = next(m for m in MIGRATIONS if m.__name__.startswith("m008"))
    db = duckdb.connect(str(tmp_path / "by_place.duckdb"))
    db.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for place, migration in enumerate([*early, supports], start=1):
        migration(db)
        db.execute("INSERT INTO _migrations (version, name) VALUES (?, ?)",
                   [place, migration.__name__])  # fmt: skip
    told = []
    applied = migrations.migrate(db, progress=lambda *step: told.append(step))
    assert "m006_ocr_pages" in applied and supports.__name__ not in applied
    assert [name for _, _, name in told] == applied
    assert told[0][:2] == (1, len(applied)) and told[-1][:2] == (len(applied), len(applied))
    rows = db.execute("SELECT version, name FROM _migrations ORDER BY version").fetchall()
    assert rows == [(int(m.__name__[1:4]), m.__name__) for m in MIGRATIONS]
    db.close()


def test_a_new_database_is_not_reported_as_upgraded(tmp_path):
    told = []
    store = Store.open(tmp_path / "new.duckdb", progress=lambda *step: told.append(step))
    store.close()
    assert told == []


def test_passages_stored_before_take_their_document_s_main_language(tmp_path, monkeypatch):
    import knownote.store.migrations as migrations

    db = duckdb.connect(str(tmp_path / "old.duckdb"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m027"])
    migrations.migrate(db)
    db.execute(
        "INSERT INTO documents (id, notebook_id, title, filename, kind, sha256, text, n_chars, "
        "n_pages, languages) VALUES (1, 1, 't', 'f', 'text', 'a', 'x', 1, 0, ['zh', 'en']), "
        "(2, 1, 't', 'f', 'text', 'b', 'x', 1, 0, NULL), "
        "(3, 1, 't', 'f', 'text', 'c', 'x', 1, 0, [])"
    )
    db.execute(
        'INSERT INTO passages (id, document_id, notebook_id, idx, start, "end", text, n_terms) '
        "SELECT i, i, 1, 0, 0, 1, 'x', 1 FROM range(1, 4) t(i)"
    )
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in MIGRATIONS if m.__name__ < "m028"])
    assert migrations.migrate(db) == ["m027_passage_languages"]
    rows = db.execute("SELECT id, language FROM passages ORDER BY id").fetchall()
    assert rows == [(1, "zh"), (2, None), (3, None)]
    db.close()
