"""`knownote check` finds what is wrong in plain words; `knownote backup` writes a checked copy;
archives go through the command line too."""

from __future__ import annotations

from knownote.cli import main
from knownote.store.check import check_store
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.invariants import row_counts


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys, db_path) -> None:
    for name in ("docs/web_text/md_codeblocks.md", "docs/office/docx_en_rag_intro.docx"):
        code, _, _ = run(capsys, "--db", db_path, "import", "Notes", corpus_file(name))
        assert code == 0


def test_a_healthy_database_checks_clean(capsys, db_path):
    imported(capsys, db_path)
    code, out, _ = run(capsys, "--db", db_path, "check")
    assert code == 0
    assert "2 documents checked, every one whole" in out


def test_check_names_each_kind_of_damage(capsys, db_path):
    imported(capsys, db_path)
    store = Store.open(db_path)
    try:
        (first, second) = store.documents(store.notebooks()[0].id)
        store.db.execute(
            "UPDATE passages SET text = 'altered' WHERE document_id = ? AND idx = 0", [first.id]
        )
        store.db.execute(
            "DELETE FROM vectors_384 WHERE passage_id IN "
            "(SELECT id FROM passages WHERE document_id = ?)",
            [second.id],
        )
        store.db.execute("INSERT INTO pages VALUES (4242, 1, 0, 1)")
        kept = store.file_path(second.sha256)
    finally:
        store.close()
    kept.write_bytes(b"not the original")
    code, out, _ = run(capsys, "--db", db_path, "check")
    assert code == 1
    assert "1 rows of pages.document_id point at nothing" in out
    assert "passages are not the text at their offsets" in out
    assert "passages but 0 vectors" in out
    assert "does not hold the bytes it is named after" in out
    assert "Traceback" not in out


def test_backup_writes_a_copy_that_opens_and_checks_clean(capsys, db_path, tmp_path):
    imported(capsys, db_path)
    code, out, _ = run(capsys, "--db", db_path, "backup", tmp_path / "backups")
    assert code == 0, out
    (folder,) = (tmp_path / "backups").iterdir()
    assert not folder.name.startswith(".")
    copy = Store.open(folder / "knownote.duckdb")
    try:
        assert check_store(copy) == (2, [])
        counts = row_counts(copy)
    finally:
        copy.close()
    store = Store.open(db_path)
    try:
        assert row_counts(store) == counts
    finally:
        store.close()


def test_export_and_import_notebook_commands(capsys, db_path, tmp_path):
    imported(capsys, db_path)
    archive = tmp_path / "notes.knownote"
    code, out, _ = run(capsys, "--db", db_path, "export-notebook", "Notes", archive)
    assert code == 0 and "2 documents" in out
    other = tmp_path / "other" / "knownote.duckdb"
    code, out, _ = run(capsys, "--db", other, "import-notebook", archive, "--as", "Moved")
    assert code == 0 and "Moved" in out
    code, _, err = run(capsys, "--db", other, "import-notebook", archive, "--as", "Moved")
    assert code == 1 and "already exists" in err
    archive.write_bytes(archive.read_bytes()[:-100])
    code, _, err = run(capsys, "--db", other, "import-notebook", archive, "--as", "Again")
    assert code == 1 and "Nothing was imported" in err and "Traceback" not in err


def test_check_names_headings_outside_the_text_and_orphan_headings(capsys, db_path):
    imported(capsys, db_path)
    store = Store.open(db_path)
    try:
        first = store.documents(store.notebooks()[0].id)[0]
        assert store.headings(first.id)  # md_codeblocks.md has two "##" headings
        store.db.execute('UPDATE headings SET "end" = 10000000 WHERE document_id = ?', [first.id])
        store.db.execute("INSERT INTO headings VALUES (4242, 0, 1, 1)")
    finally:
        store.close()
    code, out, _ = run(capsys, "--db", db_path, "check")
    assert code == 1
    assert "some headings fall outside its text or hold no words" in out
    assert "1 rows of headings.document_id point at nothing" in out
