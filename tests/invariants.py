"""Offset invariants every list of passages must satisfy, shared by the splitter, importer and
corpus tests, and the consistency of a whole database, shared by the crash and load tests.

``assert_spans_valid`` holds for any correct split of ``text``. ``assert_overlap_rule`` adds the
overlap guarantee that ``knownote.split.split`` documents. ``assert_store_consistent`` checks every
stored document, every reference between rows and the kept original files.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from knownote.retrieve import binary_codes
from knownote.split import Span
from knownote.store import Store, sha256_hex
from knownote.tokenize import term_counts


def _pairs(spans: Sequence[tuple[int, int]] | Sequence[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) if isinstance(s, Span) else (s[0], s[1]) for s in spans]


def assert_spans_valid(
    text: str, spans: Sequence[tuple[int, int]] | Sequence[Span], size: int
) -> None:
    """Spans are in order, at most ``size`` long, trimmed, and cover every non-whitespace
    character of ``text`` (so the tail is never dropped)."""
    pairs = _pairs(spans)
    if not text.strip():
        assert pairs == [], f"whitespace-only text must give no passages, got {pairs[:3]}"
        return
    assert pairs, "text with non-whitespace characters must give passages"
    for i, (start, end) in enumerate(pairs):
        where = f"passage {i} [{start}, {end})"
        assert isinstance(start, int) and isinstance(end, int), f"{where}: offsets must be ints"
        assert 0 <= start < end <= len(text), f"{where}: outside the text of {len(text)} chars"
        assert end - start <= size, f"{where}: {end - start} characters, more than {size}"
        assert not text[start].isspace(), f"{where}: starts on whitespace {text[start]!r}"
        assert not text[end - 1].isspace(), f"{where}: ends on whitespace {text[end - 1]!r}"
    for i, ((start, end), (next_start, next_end)) in enumerate(pairwise(pairs)):
        where = f"passages {i} [{start}, {end}) and {i + 1} [{next_start}, {next_end})"
        assert start < next_start, f"{where}: starts not strictly increasing"
        assert end < next_end, f"{where}: ends not strictly increasing"
        gap = text[end:next_start]
        assert not gap.strip(), f"{where}: text between them is dropped: {gap[:80]!r}"
    before, after = text[: pairs[0][0]], text[pairs[-1][1] :]
    assert not before.strip(), f"text before the first passage is dropped: {before[-80:]!r}"
    assert not after.strip(), f"the tail is dropped: {after[:80]!r}"


def assert_overlap_rule(
    text: str, spans: Sequence[tuple[int, int]] | Sequence[Span], size: int, overlap: int
) -> None:
    """Consecutive passages overlap by at most ``overlap`` characters, and fail to overlap only in
    the cases ``knownote.split`` documents."""
    room = max(1, (size - overlap) // 2)
    pairs = _pairs(spans)
    for i, ((start, end), (next_start, _)) in enumerate(pairwise(pairs)):
        where = f"passages {i} [{start}, {end}) and {i + 1} starting at {next_start}"
        if next_start < end:
            assert end - next_start <= overlap, f"{where}: overlap above {overlap}"
            continue
        assert not text[end:next_start].strip(), f"{where}: a gap that is not whitespace"
        too_far = next_start + room - size > end - 1
        assert overlap == 0 or end - start == 1 or too_far, f"{where}: no overlap"


def assert_document_invariants(
    store: Store, document_id: int, size: int, overlap: int | None = None
) -> None:
    """A stored document is whole: passages are exact slices with valid offsets and pages (and,
    given ``overlap``, the overlap rule), each has a unit vector and a code, and its keyword rows
    equal a recount of its text."""
    text = store.document_text(document_id)
    passages = store.passages(document_id)
    pages = store.pages(document_id)
    assert passages, "an imported document has passages"
    assert store.document(document_id).passages == len(passages)
    assert [p.idx for p in passages] == list(range(len(passages)))
    for p in passages:
        assert p.text == text[p.start : p.end]
    assert_spans_valid(text, [(p.start, p.end) for p in passages], size)
    if overlap is not None:
        assert_overlap_rule(text, [(p.start, p.end) for p in passages], size, overlap)
    if pages:
        assert [pg.number for pg in pages] == list(range(1, len(pages) + 1))
        assert all(a.end <= b.start for a, b in pairwise(pages))
        by_number = {pg.number: pg for pg in pages}
        for p in passages:
            assert by_number[p.page_start].start <= p.start < by_number[p.page_start].end
            assert by_number[p.page_end].start < p.end <= by_number[p.page_end].end
    vectors = store.vectors(document_id)
    assert vectors.shape[0] == len(passages)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    codes = store.db.execute(
        "SELECT c0, c1, c2, c3, c4, c5 FROM passage_codes c JOIN passages p ON p.id = c.passage_id "
        "WHERE p.document_id = ? ORDER BY p.idx",
        [document_id],
    ).fetchall()
    assert np.array_equal(np.array(codes, dtype=np.int64), binary_codes(vectors))
    stored_terms = {
        (pid, term): tf
        for pid, term, tf in store.db.execute(
            "SELECT t.passage_id, t.term, t.tf FROM passage_terms t JOIN passages p "
            "ON p.id = t.passage_id WHERE p.document_id = ?",
            [document_id],
        ).fetchall()
    }
    expected = {(p.id, term): tf for p in passages for term, tf in term_counts(p.text).items()}
    assert stored_terms == expected
    n_terms = store.db.execute(
        "SELECT idx, n_terms FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
    ).fetchall()
    assert [n for _, n in n_terms] == [sum(term_counts(p.text).values()) for p in passages]


# Rows that must point at a row that exists: (table, column, parent table, parent column).
REFERENCES = [
    ("documents", "notebook_id", "notebooks", "id"),
    ("pages", "document_id", "documents", "id"),
    ("passages", "document_id", "documents", "id"),
    ("passages", "notebook_id", "notebooks", "id"),
    ("passage_terms", "passage_id", "passages", "id"),
    ("passage_codes", "passage_id", "passages", "id"),
    ("passage_codes", "document_id", "documents", "id"),
    ("chats", "notebook_id", "notebooks", "id"),
    ("messages", "chat_id", "chats", "id"),
    ("answer_passages", "message_id", "messages", "id"),
    ("import_jobs", "notebook_id", "notebooks", "id"),
]


def orphan_rows(store: Store) -> dict[str, int]:
    """Rows whose parent row is gone (or, for passages, rows missing a vector or a code)."""
    found = {}
    checks = [
        (f"{table}.{column}", f"SELECT count(*) FROM {table} WHERE {column} NOT IN "
         f"(SELECT {parent_column} FROM {parent})")
        for table, column, parent, parent_column in REFERENCES
    ]  # fmt: skip
    checks.append(
        ("passage_codes.notebook_id", "SELECT count(*) FROM passage_codes c JOIN passages p "
         "ON p.id = c.passage_id WHERE c.notebook_id <> p.notebook_id OR "
         "c.document_id <> p.document_id")
    )  # fmt: skip
    checks.append(
        ("passages without a code", "SELECT count(*) FROM passages WHERE id NOT IN "
         "(SELECT passage_id FROM passage_codes)")
    )  # fmt: skip
    tables = [
        row[0]
        for row in store.db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'vectors_%'"
        ).fetchall()
    ]
    for table in tables:
        dim = int(table.removeprefix("vectors_"))
        checks.append(
            (f"{table}.passage_id", f"SELECT count(*) FROM {table} WHERE passage_id NOT IN "
             "(SELECT id FROM passages)")
        )  # fmt: skip
        checks.append(
            (f"passages without a row in {table}", "SELECT count(*) FROM passages p JOIN "
             f"notebooks n ON n.id = p.notebook_id WHERE n.embedding_dim = {dim} AND p.id "
             f"NOT IN (SELECT passage_id FROM {table})")
        )  # fmt: skip
    for name, sql in checks:
        (n,) = store.db.execute(sql).fetchone()
        if n:
            found[name] = n
    return found


def assert_store_consistent(store: Store, size: int, overlap: int) -> int:
    """Every document whole, no orphan rows, and exactly one kept file per document hash.

    Returns the number of documents checked.
    """
    assert orphan_rows(store) == {}
    ids = [row[0] for row in store.db.execute("SELECT id FROM documents ORDER BY id").fetchall()]
    for document_id in ids:
        assert_document_invariants(store, document_id, size, overlap)
    hashes = {row[0] for row in store.db.execute("SELECT sha256 FROM documents").fetchall()}
    folder = store.files_dir
    kept = {entry.name for entry in folder.iterdir()} if folder and folder.is_dir() else set()
    assert kept == hashes, f"kept files {sorted(kept - hashes)}, missing {sorted(hashes - kept)}"
    for digest in kept:
        assert sha256_hex(store.read_file(digest)) == digest
    return len(ids)


def assert_queue_consistent(store: Store) -> None:
    """The import queue's folder holds exactly the files its unfinished jobs wait with, and an
    imported job points at its document."""
    from knownote.jobs import IMPORTED, UNFINISHED, JobQueue

    queue = JobQueue(store)
    jobs = queue.jobs()
    waiting = {job.sha256 for job in jobs if job.status in UNFINISHED}
    folder = queue.files_dir
    kept = {entry.name for entry in folder.iterdir()} if folder and folder.is_dir() else set()
    assert kept == waiting, (
        f"queued files {sorted(kept - waiting)}, missing {sorted(waiting - kept)}"
    )
    for job in jobs:
        if job.status == IMPORTED:
            document = store.document(job.document_id)
            assert (document.sha256, document.passages) == (job.sha256, job.passages)


def row_counts(store: Store) -> dict[str, int]:
    """The number of rows in every table."""
    tables = [
        row[0]
        for row in store.db.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY table_name"
        ).fetchall()
    ]
    return {t: store.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
