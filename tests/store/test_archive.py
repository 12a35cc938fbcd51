"""Notebook archives: a round trip gives the same notebook; a bad archive leaves nothing behind."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from knownote.answer.ask import ask
from knownote.answer.chats import add_answer, add_question, list_chats, load_chat
from knownote.answer.cite import SourcePassage
from knownote.errors import KnowNoteError
from knownote.index.analyze import WORDS, passage_terms
from knownote.notebooks import delete_notebook
from knownote.pipeline.ingest import import_file
from knownote.search.retrieve import search
from knownote.settings import Settings
from knownote.store.archive import (
    _BY_NAME,
    TABLES,
    digests,
    export_notebook,
    import_notebook,
    notebook_digests,
)
from knownote.store.check import check_store
from knownote.store.db import TERM_KEY, Store
from tests.conftest import DOCS, corpus_file
from tests.e2e.test_corpus import MUST_FAIL, PASSWORDS
from tests.hostile_archives import HOSTILE
from tests.invariants import row_counts

MAX = 64 * 1024 * 1024
SMALL = ["web_text/md_codeblocks.md", "office/docx_en_rag_intro.docx",
         "pdf/latex_multicolumn_lorem.pdf"]  # fmt: skip


class HashEmbedder:
    """A deterministic stand-in model of another name and dimension than the default: the
    archive must carry its vectors as they are, whatever model made them."""

    name = "test-hash-embedder-32"
    dim = 32

    def embed_passages(self, texts, progress=None):
        return np.stack([self.embed_query(t) for t in texts]).astype(np.float32)

    def embed_query(self, text):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)


def snapshot(store: Store) -> tuple[dict[str, int], set[str]]:
    folder = store.files_dir
    files = {p.name for p in folder.iterdir()} if folder and folder.is_dir() else set()
    return row_counts(store), files


@pytest.fixture(scope="module")
def source(tmp_path_factory, embedder):
    """A notebook of three real documents and a chat of two cited answers, archived once."""
    settings = Settings().with_(home=tmp_path_factory.mktemp("source"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Small", embedder.name, embedder.dim)
    for relative in SMALL:
        path = corpus_file(f"docs/{relative}")
        result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                             embedder=embedder)  # fmt: skip
        assert result.status == "imported", result.error
    first = ask(store, embedder, notebook.id, "What is RAG?", llm=None, model=None,
                settings=settings)  # fmt: skip
    ask(store, embedder, notebook.id, "What do agents do?", llm=None, model=None,
        settings=settings, chat_id=first.chat_id)  # fmt: skip
    target = settings.home / "small.knownote"
    export_notebook(store, notebook.id, target)
    yield store, notebook, target
    store.close()


@pytest.fixture
def small_archive(source):
    return source[2]


@pytest.fixture
def fresh(tmp_path):
    store = Store.open(tmp_path / "elsewhere" / "knownote.duckdb")
    yield store
    store.close()


def test_round_trip_gives_the_same_notebook_with_chats_and_citations(source, fresh, embedder):
    store, notebook, small_archive = source
    result = import_notebook(fresh, small_archive, max_bytes=MAX)
    assert notebook_digests(fresh, result.notebook_id) == notebook_digests(store, notebook.id)
    assert check_store(fresh) == (3, [])
    (chat,) = list_chats(fresh, result.notebook_id)
    turns = load_chat(fresh, chat.id)
    assert [t.question for t in turns] == ["What is RAG?", "What do agents do?"]
    cited = [p for t in turns for p in t.passages]
    assert cited and not any(p.stale for p in cited)
    for p in cited:
        assert fresh.document_text(p.document_id)[p.start : p.end] == p.text
    hits = search(fresh, embedder, result.notebook_id, "retrieval augmented generation", k=3)
    ids = {d.id for d in fresh.documents(result.notebook_id)}
    assert hits and all(hit.document_id in ids for hit in hits)


def test_an_imported_notebook_whose_keyword_rows_get_sorted_keeps_its_digests_and_hits(
    source, fresh, embedder, monkeypatch
):
    from knownote.store import db as store_module

    store, notebook, small_archive = source
    monkeypatch.setattr(store_module, "UNSORTED_TERMS_MIN", 1)
    result = import_notebook(fresh, small_archive, max_bytes=MAX)
    (sorted_rows,) = fresh.db.execute("SELECT sorted_rows FROM sorted_terms").fetchone()
    assert sorted_rows == fresh.db.execute("SELECT count(*) FROM passage_terms").fetchone()[0] > 0
    assert notebook_digests(fresh, result.notebook_id) == notebook_digests(store, notebook.id)
    question = "retrieval augmented generation"
    got = search(fresh, embedder, result.notebook_id, question, k=5, mode="keyword")
    want = search(store, embedder, notebook.id, question, k=5, mode="keyword")
    assert [(h.text, h.score) for h in got] == [(h.text, h.score) for h in want]


def test_importing_under_another_name_and_twice(small_archive, fresh):
    import_notebook(fresh, small_archive, max_bytes=MAX)
    with pytest.raises(KnowNoteError, match=r"already exists.*--as"):
        import_notebook(fresh, small_archive, max_bytes=MAX)
    second = import_notebook(fresh, small_archive, name="Copy", max_bytes=MAX)
    assert second.name == "Copy"
    assert check_store(fresh)[1] == []
    # Both notebooks share the kept files; deleting one keeps the other whole.
    delete_notebook(fresh, second.notebook_id)
    assert check_store(fresh) == (3, [])


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_or_damaged_archive_fails_clearly_and_leaves_nothing(
    case, small_archive, tmp_path, fresh
):
    make, word = HOSTILE[case]
    bad = tmp_path / "bad.knownote"
    bad.write_bytes(make(small_archive.read_bytes()))
    import_notebook(fresh, small_archive, name="Already here", max_bytes=MAX)
    before = snapshot(fresh)
    with pytest.raises(KnowNoteError) as raised:
        import_notebook(fresh, bad, max_bytes=MAX)
    message = str(raised.value)
    assert word.lower() in message.lower(), message
    assert "Traceback" not in message and "Nothing was imported" in message
    assert snapshot(fresh) == before
    assert check_store(fresh) == (3, [])
    assert not list(tmp_path.glob("**/evil*")) and not Path("/tmp/knownote-evil").exists()


def test_an_archive_of_format_1_still_imports(small_archive, tmp_path, fresh):
    """Format 1 had no notes, no searched rewrites and no passage sizes: it imports whole, with
    those left empty, and its digests still hold."""
    from tests.hostile_archives import _entries, _manifest, _put_table, _rebuild, _table

    entries = _entries(small_archive.read_bytes())
    manifest = _manifest(entries)
    tables = {t.name: _table(entries, t.name) for t in TABLES}
    tables["messages"] = tables["messages"].drop_columns(["searched"])
    tables["documents"] = tables["documents"].drop_columns(["passage_size", "passage_overlap"])
    old = {name: rows for name, rows in tables.items() if _BY_NAME[name].since == 1}
    for name in ("messages", "documents"):
        _put_table(entries, name, tables[name])
    manifest["digests"] = {
        name: digest
        for name, digest in digests(tables, manifest["notebook"]).items()
        if name == "notebook" or name in old
    }
    for name in set(tables) - set(old):
        del entries[f"tables/{name}.arrow"]
        del manifest["rows"][name]
    manifest["version"] = 1
    archive = tmp_path / "format1.knownote"
    archive.write_bytes(_rebuild(entries, manifest, rehash=True))
    result = import_notebook(fresh, archive, max_bytes=MAX)
    assert check_store(fresh) == (3, [])
    [chat] = list_chats(fresh, result.notebook_id)
    assert len(load_chat(fresh, chat.id)) == 2
    assert {d.passage_size for d in fresh.documents(result.notebook_id)} == {None}


def outline(store: Store, notebook_id: int) -> list[tuple[str, list[tuple], list[str]]]:
    """Each document's headings and its passages' section paths, by file name."""
    return [
        (
            d.filename,
            [(h.start, h.end, h.level) for h in store.headings(d.id)],
            [p.section for p in store.passages(d.id)],
        )
        for d in sorted(store.documents(notebook_id), key=lambda d: d.filename)
    ]


def test_headings_and_section_paths_round_trip(source, fresh):
    store, notebook, small_archive = source
    before = outline(store, notebook.id)
    assert all(headings for _, headings, _ in before)  # Markdown, Word and PDF headings
    assert any(s for _, _, sections in before for s in sections)
    result = import_notebook(fresh, small_archive, max_bytes=MAX)
    assert outline(fresh, result.notebook_id) == before


def test_roles_round_trip_and_an_archive_of_format_5_leaves_them_to_be_read(
    source, fresh, tmp_path
):
    from tests.hostile_archives import _entries, _manifest, _put_table, _rebuild, _table

    store, notebook, small_archive = source
    before = {d.filename: store.roles(d.id) for d in store.documents(notebook.id)}
    assert any(before.values())
    result = import_notebook(fresh, small_archive, max_bytes=MAX)
    assert {d.filename: fresh.roles(d.id) for d in fresh.documents(result.notebook_id)} == before
    # a PDF whose page layouts are still to be read stays so (its kept file travels with it)
    unread = {store.document(i).filename for i in store.documents_without_roles(10)}
    assert {fresh.document(i).filename for i in fresh.documents_without_roles(10)} == unread

    entries = _entries(small_archive.read_bytes())
    manifest = _manifest(entries)
    tables = {t.name: _table(entries, t.name) for t in TABLES}
    tables["documents"] = tables["documents"].drop_columns(["roles_read"])
    _put_table(entries, "documents", tables["documents"])
    del entries["tables/roles.arrow"], manifest["rows"]["roles"]
    tables["roles"] = tables["roles"][:0]
    manifest["digests"] = {
        name: digest
        for name, digest in digests(tables, manifest["notebook"]).items()
        if name != "roles"
    }
    manifest["version"] = 5
    archive = tmp_path / "format5.knownote"
    archive.write_bytes(_rebuild(entries, manifest, rehash=True))
    other = Store.open(tmp_path / "other.duckdb")
    try:
        again = import_notebook(other, archive, max_bytes=MAX)
        held = [d.id for d in other.documents(again.notebook_id)]
        assert sorted(other.documents_without_roles(10)) == sorted(held)
        assert all(other.roles(i) == [] for i in held)
    finally:
        other.close()


def test_an_archive_of_format_2_imports_without_headings(small_archive, tmp_path, fresh):
    """Format 2 had no headings and no section paths: it imports whole, with none."""
    from tests.hostile_archives import _entries, _manifest, _put_table, _rebuild, _table

    entries = _entries(small_archive.read_bytes())
    manifest = _manifest(entries)
    tables = {t.name: _table(entries, t.name) for t in TABLES}
    tables["passages"] = tables["passages"].drop_columns(["section"])
    # Documents were indexed the old way then (plain words, no heading field).
    tables["documents"] = tables["documents"].drop_columns(["embedded_as", "terms_as"])
    tables["passages"], tables["passage_terms"] = _plain_words(
        tables["passages"], tables["passage_terms"]
    )
    for name in ("passages", "documents", "passage_terms"):
        _put_table(entries, name, tables[name])
    manifest["rows"]["passage_terms"] = tables["passage_terms"].num_rows
    del tables["headings"], entries["tables/headings.arrow"], manifest["rows"]["headings"]
    manifest["digests"] = {
        name: digest
        for name, digest in digests(
            {**tables, "headings": _table(_entries(small_archive.read_bytes()), "headings")[:0]},
            manifest["notebook"],
        ).items()
        if name != "headings"
    }
    manifest["version"] = 2
    archive = tmp_path / "format2.knownote"
    archive.write_bytes(_rebuild(entries, manifest, rehash=True))
    result = import_notebook(fresh, archive, max_bytes=MAX)
    assert check_store(fresh) == (3, [])
    for _, headings, sections in outline(fresh, result.notebook_id):
        assert headings == [] and set(sections) == {""}


def _plain_words(passages: pa.Table, like: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Passages and keyword rows as the old way counted them: plain words, no heading field."""
    counted = [passage_terms(text, "", WORDS) for text in passages.column("text").to_pylist()]
    lengths = pa.array([n for _, n in counted], passages.schema.field("n_terms").type)
    passages = passages.set_column(passages.schema.get_field_index("n_terms"), "n_terms", lengths)
    rows = [
        (pid, notebook_id, term, tf)
        for pid, notebook_id, (terms, _) in zip(
            passages.column("id").to_pylist(),
            passages.column("notebook_id").to_pylist(),
            counted,
            strict=True,
        )
        for term, tf in terms.items()
    ]
    ids, notebooks, terms, tfs = (list(c) for c in zip(*rows, strict=True))
    keys = duckdb.execute(f"SELECT {TERM_KEY} FROM unnest(?::VARCHAR[]) t(term)", [terms])
    table = pa.table(
        [ids, notebooks, terms, tfs, [k for (k,) in keys.fetchall()]], schema=like.schema
    )
    return passages, table.sort_by([("passage_id", "ascending"), ("term", "ascending")])


def test_an_archive_over_the_size_limit_is_refused(small_archive, fresh):
    with pytest.raises(KnowNoteError, match="max_archive_mb"):
        import_notebook(fresh, small_archive, max_bytes=1000)
    assert fresh.notebooks() == []


def test_a_stale_citation_stays_stale_and_a_deleted_document_is_not_revived(
    store, notebook, embedder, settings, tmp_path, fresh
):
    for relative in SMALL[:2]:
        path = corpus_file(f"docs/{relative}")
        import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                    embedder=embedder)  # fmt: skip
    answer = ask(store, embedder, notebook.id, "What is RAG?", llm=None, model=None,
                 settings=settings)  # fmt: skip
    gone = answer.passages[0].document_id
    store.delete_document(gone)
    target = tmp_path / "stale.knownote"
    export_notebook(store, notebook.id, target)
    result = import_notebook(fresh, target, max_bytes=MAX)
    (chat,) = list_chats(fresh, result.notebook_id)
    (turn,) = load_chat(fresh, chat.id)
    before = {p.n: p.stale for p in load_chat(store, answer.chat_id)[0].passages}
    assert {p.n: p.stale for p in turn.passages} == before
    assert any(before.values())
    assert notebook_digests(fresh, result.notebook_id) == notebook_digests(store, notebook.id)


def test_an_empty_notebook_round_trips(store, notebook, tmp_path, fresh):
    target = tmp_path / "empty.knownote"
    export_notebook(store, notebook.id, target)
    result = import_notebook(fresh, target, max_bytes=MAX)
    assert fresh.notebook(result.notebook_id).embedding_model == notebook.embedding_model
    assert notebook_digests(fresh, result.notebook_id) == notebook_digests(store, notebook.id)


def test_a_web_page_s_origin_and_a_recording_s_times_round_trip(store, notebook, tmp_path, fresh):
    from datetime import UTC, datetime

    from knownote.store.db import WebOrigin

    settings = Settings(home=tmp_path)
    origin = WebOrigin(
        "https://example.org/a", "https://example.org/b", datetime(2026, 12, 2, tzinfo=UTC)
    )
    web = import_file(store, notebook, "a", b"<html><body><p>A page.</p></body></html>",
                      settings=settings, origin=origin)  # fmt: skip
    talk = import_file(store, notebook, "talk.txt", b"Words said.", settings=settings)
    assert web.status == talk.status == "imported"
    with store.transaction() as db:  # a recording's words, as the import of one stores them
        db.execute("INSERT INTO spoken VALUES (?, 0, 5, 1.5, 2.0), (?, 6, 11, 2.0, 2.5)",
                   [talk.document_id, talk.document_id])  # fmt: skip
    target = tmp_path / "web.knownote"
    export_notebook(store, notebook.id, target)
    result = import_notebook(fresh, target, max_bytes=MAX)
    ids = {d.filename: d.id for d in fresh.documents(result.notebook_id)}
    assert fresh.web_origin(ids["a"]) == replace(origin, version=1)
    assert fresh.time_range(ids["talk.txt"], 0, 11) == (1.5, 2.5)


def cited(p, title: str) -> SourcePassage:
    return SourcePassage(1, p.id, p.document_id, title, p.idx, p.start, p.end, p.page_start,
                         p.page_end, p.text, True)  # fmt: skip


IMPORTABLE = (
    sorted(p for p in DOCS.rglob("*") if p.is_file() and p.name not in MUST_FAIL)
    if DOCS.is_dir()
    else []
)


@pytest.mark.slow
@pytest.mark.skipif(not IMPORTABLE, reason=f"needs the shared corpus ({DOCS} is absent)")
def test_every_importable_corpus_document_round_trips_with_its_citations(tmp_path):
    """Every importable corpus document, under a model of another name and dimension, and a
    chat citing a passage of each: export, import into a fresh data folder, compare by hash."""
    settings = Settings().with_(home=tmp_path / "here")
    store = Store.open(settings.db_path)
    embedder = HashEmbedder()
    notebook = store.create_notebook("Corpus", embedder.name, embedder.dim)
    chat_id = None
    for path in IMPORTABLE:
        result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                             embedder=embedder, password=PASSWORDS.get(path.name))  # fmt: skip
        assert result.status == "imported", result.error
        passage = store.passages(result.document_id)[-1]
        chat_id, _ = add_question(store, notebook.id, chat_id, f"What does {path.name} end with?")
        add_answer(store, chat_id, "It ends so [1].", model=None, extractive=True,
                   incomplete=False, passages=[cited(passage, path.name)])  # fmt: skip
    archive = tmp_path / "corpus.knownote"
    export_notebook(store, notebook.id, archive)
    other = Store.open(tmp_path / "there" / "knownote.duckdb")
    try:
        result = import_notebook(other, archive, max_bytes=4 * 1024**3)
        assert notebook_digests(other, result.notebook_id) == notebook_digests(store, notebook.id)
        assert check_store(other) == (len(IMPORTABLE), [])
        assert other.notebook(result.notebook_id).embedding_model == embedder.name
        (chat,) = list_chats(other, result.notebook_id)
        turns = load_chat(other, chat.id)
        assert len(turns) == len(IMPORTABLE)
        for turn in turns:
            (p,) = turn.passages
            assert not p.stale
            assert other.document_text(p.document_id)[p.start : p.end] == p.text
            assert re.search(re.escape(p.title), turn.question)
    finally:
        other.close()
        store.close()


def studied_notebook(store: Store, notebook, settings: Settings, embedder):
    """The notebook with a real page's cloze cards, two of them reviewed."""
    from datetime import UTC, datetime

    from knownote.study.cards import cards
    from knownote.study.make import make_cards
    from knownote.study.review import review

    path = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                         embedder=embedder)  # fmt: skip
    assert result.status == "imported", result.error
    make_cards(store, embedder, notebook.id)
    made = cards(store, notebook.id)
    when = datetime(2026, 12, 2, 9, tzinfo=UTC)
    review(store, made[0].id, "good", when)
    review(store, made[0].id, "easy", when.replace(hour=10))
    review(store, made[1].id, "again", when)
    return made


def study_state(store: Store, notebook_id: int) -> list[tuple]:
    from knownote.study.cards import cards
    from knownote.study.review import schedule

    return [
        (c.title, c.start, c.end, c.front, c.answer, c.answer_start, c.made_by,
         schedule(store, c.id) and replace(schedule(store, c.id), card_id=0))
        for c in cards(store, notebook_id)
    ]  # fmt: skip


def test_study_cards_and_their_schedule_round_trip(store, notebook, tmp_path, fresh, embedder):
    from knownote.study.cards import sources_with_cards

    studied_notebook(store, notebook, Settings(home=tmp_path), embedder)
    target = tmp_path / "study.knownote"
    export_notebook(store, notebook.id, target)
    result = import_notebook(fresh, target, max_bytes=MAX)
    assert study_state(fresh, result.notebook_id) == study_state(store, notebook.id)
    assert next(s for s in study_state(fresh, result.notebook_id) if s[-1])[-1].reviews == 2
    assert len(sources_with_cards(fresh, result.notebook_id, "sentences")) == 1
    assert notebook_digests(fresh, result.notebook_id) == notebook_digests(store, notebook.id)


def test_an_archive_of_format_4_imports_without_cards(store, notebook, tmp_path, fresh, embedder):
    from tests.hostile_archives import _entries, _manifest, _rebuild

    studied_notebook(store, notebook, Settings(home=tmp_path), embedder)
    target = tmp_path / "study.knownote"
    export_notebook(store, notebook.id, target)
    entries = _entries(target.read_bytes())
    manifest = _manifest(entries)
    for table in TABLES:
        if table.since == 5:
            del entries[f"tables/{table.name}.arrow"], manifest["rows"][table.name]
            del manifest["digests"][table.name]
    manifest["version"] = 4
    archive = tmp_path / "format4.knownote"
    archive.write_bytes(_rebuild(entries, manifest, rehash=True))
    result = import_notebook(fresh, archive, max_bytes=MAX)
    assert check_store(fresh) == (1, [])
    assert study_state(fresh, result.notebook_id) == []


def test_a_backup_carries_the_cards_and_their_schedule(store, notebook, tmp_path, embedder):
    from knownote.store.backup import backup

    studied_notebook(store, notebook, Settings(home=tmp_path), embedder)
    copy = backup(store, tmp_path / "backups")
    again = Store.open(copy.folder / store.path.name)
    try:
        assert study_state(again, notebook.id) == study_state(store, notebook.id)
    finally:
        again.close()


def test_an_archive_of_format_7_imports_without_audio_overviews(small_archive, tmp_path, fresh):
    from tests.hostile_archives import _entries, _manifest, _rebuild

    entries = _entries(small_archive.read_bytes())
    manifest = _manifest(entries)
    for table in TABLES:
        if table.since == 8:
            del entries[f"tables/{table.name}.arrow"], manifest["rows"][table.name]
            del manifest["digests"][table.name]
    manifest["version"] = 7
    archive = tmp_path / "format7.knownote"
    archive.write_bytes(_rebuild(entries, manifest, rehash=True))
    result = import_notebook(fresh, archive, max_bytes=MAX)
    assert check_store(fresh) == (3, [])
    assert fresh.db.execute("SELECT count(*) FROM audio_overviews").fetchall() == [(0,)]
    assert len(fresh.documents(result.notebook_id)) == 3
