"""Databases and archives written by past versions of KnowNote open with today's code.

tests/store/past_versions holds, for each set of migrations main has had, a database the version
of that time made with its own command line (scripts/build_past_databases.py walks the git
history; the tests read only the stored files). Each is copied, opened the way the command line
opens it (every missing migration runs, each reported), checked whole, and asked what the old
version was asked: the same passages at the same ranges, the same citations, and searches that
find what the old version found.

Search is compared with a tolerance where ranking itself changed between versions: keyword
scores became BM25F with stemming and a title field (main's a417bde), and hybrid search fuses
them, so the places after the first may swap (one question of three, at levels 2-15). What
must not change: today's search returns the same passages (same document, range and text) as the
old one did, the same first; and meaning-only search the same order with the same scores within
SCORE_TOLERANCE (old versions embedded queries with sentence-transformers on PyTorch, today's
with ONNX Runtime).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.answer import notes
from knownote.answer.chats import list_chats, load_chat
from knownote.index.embedders import get_embedder
from knownote.store.archive import import_notebook
from knownote.store.check import check_store
from knownote.store.db import Store
from knownote.store.migrations import MIGRATIONS, migration_version
from tests.past_versions import LEVELS, MANIFEST, PAST, record_of, unpack

ARCHIVES = MANIFEST["archives"]
TODAY = [migration.__name__ for migration in MIGRATIONS]
# The same passage's cosine similarity to the same question, from the vectors stored by the old
# version and a query vector of today's: sentence-transformers on PyTorch (levels 2-3, main before
# d72abdb) and ONNX Runtime agree to 1.8e-7 on these passages (benchmarks/upgrade_search.py);
# 1e-5 leaves room for other CPUs.
SCORE_TOLERANCE = 1e-5


def passage_key(row: dict) -> tuple:
    return (row["document_id"], row["start"], row["end"], row["text"])


def citation_rows(passages) -> list[tuple]:
    return [
        (p.n, p.document_id, p.passage_index, p.start, p.end, p.text, p.cited) for p in passages
    ]


def test_every_migration_level_of_main_has_a_past_database():
    """The stored levels cover every migration up to the newest one built; later ones (added
    since the files were built) are applied by every test below."""
    built = [tuple(level["migrations"]) for level in LEVELS]
    assert built == sorted(set(built), key=len), "one database per level, oldest first"
    newest = built[-1]
    assert list(newest) == TODAY[: len(newest)], "migrations are only ever appended"
    assert not [level for level in MANIFEST["levels"] if "unbuildable" in level]
    assert LEVELS[0]["migrations"] == ["m001_documents_and_passages", "m002_chats"]


@pytest.fixture(scope="module")
def embedder():
    # Every past notebook was made with the packaged English model (the builder asks for it).
    return get_embedder("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory, embedder):
    """Each level's database, upgraded once: (store, what the old version recorded, reports)."""
    opened = {}
    yield (
        lambda level: (
            opened.get(level["commit"])
            or opened.setdefault(
                level["commit"], _upgrade(level, tmp_path_factory.mktemp(level["commit"]))
            )
        )
    )
    for store, _, _ in opened.values():
        store.close()


def _upgrade(level: dict, folder: Path) -> tuple[Store, dict, list[tuple[int, int, str]]]:
    db = unpack(level, folder)
    reports: list[tuple[int, int, str]] = []
    store = Store.open(db, progress=lambda *step: reports.append(step))
    return store, record_of(level), reports


@pytest.mark.parametrize(
    "level", LEVELS, ids=[f"{lv['level']:02d}-{lv['commit']}" for lv in LEVELS]
)
def test_a_past_database_migrates_with_progress_and_checks_clean(level, upgraded):
    store, _, reports = upgraded(level)
    missing = [name for name in TODAY if name not in level["migrations"]]
    assert [name for _, _, name in reports] == missing
    assert [(place, total) for place, total, _ in reports] == [
        (n, len(missing)) for n in range(1, len(missing) + 1)
    ]
    recorded = store.db.execute("SELECT version, name FROM _migrations ORDER BY version").fetchall()
    assert recorded == [(migration_version(m), m.__name__) for m in MIGRATIONS]
    assert check_store(store) == (3, [])


@pytest.mark.parametrize(
    "level", LEVELS, ids=[f"{lv['level']:02d}-{lv['commit']}" for lv in LEVELS]
)
def test_a_past_database_keeps_its_documents_passages_and_citations(level, upgraded):
    store, record, _ = upgraded(level)
    old = record["stored"]
    documents = store.db.execute(
        "SELECT id, filename, kind, sha256, text, n_chars, n_pages FROM documents ORDER BY id"
    ).fetchall()
    assert [list(row) for row in documents] == old["documents"]
    passages = store.db.execute(
        'SELECT document_id, idx, start, "end", page_start, page_end, text FROM passages '
        "ORDER BY document_id, idx"
    ).fetchall()
    assert [list(row) for row in passages] == old["passages"]
    texts = {row[0]: row[4] for row in documents}
    assert all(text == texts[d][start:end] for d, _, start, end, _, _, text in passages)
    pages = store.db.execute('SELECT document_id, page_no, start, "end" FROM pages ORDER BY 1, 2')
    assert [list(row) for row in pages.fetchall()] == old["pages"]

    if "answers" in record:
        (chat,) = list_chats(store, store.notebook_by_name(MANIFEST["notebook"]).id)
        answers = load_chat(store, chat.id)
        assert [a.question for a in answers] == record["questions"]
        for answer, said in zip(answers, record["answers"], strict=True):
            assert answer.passages and not any(p.stale for p in answer.passages)
            assert citation_rows(answer.passages) == [
                (p["n"], p["document_id"], p["passage_index"], p["start"], p["end"], p["text"],
                 p["cited"]) for p in said["passages"]
            ]  # fmt: skip
            assert [p.n for p in answer.passages if p.cited] == [c["n"] for c in said["citations"]]
            assert answer.extractive == said["extractive"]
    if "notes" in record:
        kept, written = (notes.get(store, note_id) for note_id in record["notes"])
        assert kept.passages and not any(p.stale for p in kept.passages)
        assert [row[1:] for row in citation_rows(kept.passages)] == [
            (d, i, s, e, t, c) for _, _, d, i, s, e, t, c in old["note_passages"]
        ]
        assert (written.title, written.body) == tuple(old["notes"][1][1:])


@pytest.mark.parametrize(
    "level",
    [lv for lv in LEVELS if "search" in record_of(lv)],
    ids=[f"{lv['level']:02d}-{lv['commit']}" for lv in LEVELS if "search" in record_of(lv)],
)
def test_a_past_database_finds_what_it_found_before(level, upgraded, embedder):
    from knownote.search.retrieve import search

    store, record, _ = upgraded(level)
    notebook = store.notebook_by_name(MANIFEST["notebook"])
    everything = {
        (d, s, e, t)
        for d, s, e, t in store.db.execute(
            'SELECT document_id, start, "end", text FROM passages'
        ).fetchall()
    }
    for mode, found in record["search"].items():
        for question, hits in zip(record["questions"], found, strict=True):
            assert hits, (mode, question)
            today = search(store, embedder, notebook.id, question, k=5, mode=mode)
            today_keys = [(h.document_id, h.start, h.end, h.text) for h in today]
            assert {passage_key(hit) for hit in hits} <= everything
            assert set(today_keys) == {passage_key(hit) for hit in hits}, (mode, question)
            assert today_keys[0] == passage_key(hits[0]), (mode, question)
            if mode == "vector":
                assert today_keys == [passage_key(hit) for hit in hits], question
                scores = [(h.score, hit["score"]) for h, hit in zip(today, hits, strict=True)]
                assert all(abs(new - old) <= SCORE_TOLERANCE for new, old in scores), scores


@pytest.mark.parametrize("version", sorted(ARCHIVES), ids=[f"format-{v}" for v in sorted(ARCHIVES)])
def test_an_archive_of_every_past_format_imports_whole(version, tmp_path):
    archive = ARCHIVES[version]
    level = next(lv for lv in LEVELS if lv["level"] == archive["level"])
    old = record_of(level)["stored"]
    store = Store.open(tmp_path / "fresh.duckdb")
    try:
        result = import_notebook(store, PAST / archive["file"], max_bytes=10_000_000)
        assert result.documents == 3
        ids = {
            row[1]: row[0]
            for row in store.db.execute("SELECT id, filename FROM documents").fetchall()
        }
        old_names = {row[0]: row[1] for row in old["documents"]}
        documents = store.db.execute(
            "SELECT filename, sha256, text FROM documents ORDER BY filename"
        ).fetchall()
        assert [list(row) for row in documents] == sorted(
            [row[1], row[3], row[4]] for row in old["documents"]
        )
        passages = store.db.execute(
            'SELECT document_id, idx, start, "end", text FROM passages ORDER BY document_id, idx'
        ).fetchall()
        assert sorted(list(row) for row in passages) == sorted(
            [ids[old_names[d]], i, s, e, t] for d, i, s, e, _, _, t in old["passages"]
        )
        (chat,) = list_chats(store, result.notebook_id)
        (answer, *_) = load_chat(store, chat.id)
        assert answer.passages and not any(p.stale for p in answer.passages)
        if int(version) >= 2 and "notes" in record_of(level):
            assert len(notes.notes(store, result.notebook_id)) == 2
        assert check_store(store) == (3, [])
    finally:
        store.close()
