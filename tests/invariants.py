"""Offset invariants every list of passages must satisfy, shared by the splitter, importer and
corpus tests, and the consistency of a whole database, shared by the crash and load tests.

``assert_spans_valid`` holds for any correct split of ``text``. ``assert_overlap_rule`` adds the
overlap guarantee that ``knownote.index.split.split`` documents. ``assert_store_consistent``
checks every stored document, every reference between rows and the kept original files.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from knownote.index.split import Span
from knownote.store import check
from knownote.store.check import document_problems
from knownote.store.db import Store


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
    the cases ``knownote.index.split`` documents."""
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
    """A stored document is whole (``knownote.store.check``: exact slices, valid offsets and
    pages, a unit vector, its code and recounted keyword rows per passage) and its passages follow
    the splitter's rules (and, given ``overlap``, the overlap rule)."""
    assert document_problems(store.db, document_id) == []
    text = store.document_text(document_id)
    passages = store.passages(document_id)
    assert_spans_valid(text, [(p.start, p.end) for p in passages], size)
    if overlap is not None:
        assert_overlap_rule(text, [(p.start, p.end) for p in passages], size, overlap)


def orphan_rows(store: Store) -> dict[str, int]:
    """Rows whose parent row is gone (or, for passages, rows missing a vector or a code)."""
    return check.orphan_rows(store.db)


def assert_store_consistent(store: Store, size: int, overlap: int) -> int:
    """Every document whole, no orphan rows, and exactly one kept file per document hash
    (``knownote.store.check``, as `knownote check` runs it), plus the splitter's rules per document.

    Returns the number of documents checked.
    """
    checked, problems = check.check_store(store)
    assert problems == []
    ids = [row[0] for row in store.db.execute("SELECT id FROM documents ORDER BY id").fetchall()]
    for document_id in ids:
        assert_document_invariants(store, document_id, size, overlap)
    return checked


def assert_queue_consistent(store: Store) -> None:
    """The import queue's folder holds exactly the files its unfinished jobs wait with, and an
    imported job points at its document."""
    from knownote.store.jobs import IMPORTED, REINDEX, UNFINISHED, JobQueue

    queue = JobQueue(store)
    jobs = [job for job in queue.jobs() if job.kind != REINDEX]  # re-index jobs have no file
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
