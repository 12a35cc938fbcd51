"""Kept audio overviews: a notebook's spoken overviews, their lines, citations and audio file.

This module owns `audio_overviews`, `audio_lines`, `audio_cites` and `audio_sources` (migration
m031). A notebook keeps many overviews. The audio (Ogg/Opus) is a kept file beside the imported
originals, named by its sha256 (`Store.save_file`); the row names it, so the file stays while an
overview uses it. Citations are kept as reports keep theirs (`KeptCite`: range, title, quote), so
knownote.study.audio_overviews can mark one stale. The records here are the store's own: the
store may not import knownote.answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb

from knownote.errors import NotFound
from knownote.store.db import Store
from knownote.store.reports import CITE_COLUMNS, KeptCite, cite_row, kept_cite

ITEM_TABLES = ("audio_lines", "audio_cites", "audio_sources")


@dataclass(frozen=True)
class KeptAudioLine:
    text: str
    speaker: int
    cites: tuple[int, ...]
    spoken: str
    start_s: float | None
    end_s: float | None


@dataclass(frozen=True)
class KeptAudio:
    id: int | None  # None until kept
    notebook_id: int
    format: str
    title: str
    language: str
    voices: tuple[str, ...]
    model: str | None
    focus: str
    length: str
    dropped: int
    audio_sha256: str | None
    seconds: float
    document_ids: tuple[int, ...]
    made_at: datetime | None
    lines: tuple[KeptAudioLine, ...] = ()
    cites: tuple[KeptCite, ...] = ()


_HEAD = (
    "SELECT id, notebook_id, format, title, language, voices, model, focus, length, dropped, "
    "audio_sha256, seconds, (SELECT coalesce(list(document_id ORDER BY n), []) FROM "
    "audio_sources WHERE overview_id = audio_overviews.id), made_at FROM audio_overviews"
)


def save_overview(
    store: Store,
    head: KeptAudio,
    lines: Sequence[KeptAudioLine],
    cites: Sequence[KeptCite],
) -> int:
    """Keep an overview whose audio is already a kept file (its `id` and `made_at` are given by
    the database); its id. NotFound when the notebook was deleted meanwhile."""
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM notebooks WHERE id = ?", [head.notebook_id]).fetchall():
            raise NotFound("That notebook was deleted meanwhile; its audio overview was not kept.")
        ((overview_id,),) = db.execute(
            "INSERT INTO audio_overviews (notebook_id, format, title, language, voices, model, "
            "focus, length, dropped, audio_sha256, seconds) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                head.notebook_id, head.format, head.title, head.language, list(head.voices),
                head.model, head.focus, head.length, head.dropped, head.audio_sha256,
                head.seconds,
            ],
        ).fetchall()  # fmt: skip
        if head.document_ids:
            db.executemany(
                "INSERT INTO audio_sources VALUES (?, ?, ?)",
                [[overview_id, n, d] for n, d in enumerate(head.document_ids)],
            )
        if lines:
            db.executemany(
                "INSERT INTO audio_lines VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [overview_id, i, x.speaker, x.text, list(x.cites), x.spoken, x.start_s,
                     x.end_s]
                    for i, x in enumerate(lines)
                ],
            )  # fmt: skip
        if cites:
            db.executemany(
                "INSERT INTO audio_cites VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [cite_row(overview_id, c) for c in cites],
            )
    return overview_id


def kept_overview(store: Store, overview_id: int) -> KeptAudio:
    """A kept overview with its lines and citations; NotFound when there is none."""
    with store.lock:
        db = store.db
        head = db.execute(_HEAD + " WHERE id = ?", [overview_id]).fetchall()
        if not head:
            raise NotFound(f"There is no audio overview {overview_id}; it may have been deleted.")
        lines = db.execute(
            "SELECT text, speaker, cites, spoken, start_s, end_s FROM audio_lines "
            "WHERE overview_id = ? ORDER BY ordinal",
            [overview_id],
        ).fetchall()
        cites = db.execute(
            f"SELECT {CITE_COLUMNS} FROM audio_cites WHERE overview_id = ? ORDER BY n",
            [overview_id],
        ).fetchall()
    return KeptAudio(
        *_head(head[0]),
        lines=tuple(KeptAudioLine(r[0], r[1], tuple(r[2]), *r[3:]) for r in lines),
        cites=tuple(kept_cite(r) for r in cites),
    )


def overview_heads(store: Store, notebook_id: int) -> list[KeptAudio]:
    """The notebook's overviews without their lines and citations, the newest first."""
    with store.lock:
        rows = store.db.execute(
            _HEAD + " WHERE notebook_id = ? ORDER BY id DESC", [notebook_id]
        ).fetchall()
    return [KeptAudio(*_head(row)) for row in rows]


def _head(row: tuple) -> tuple:
    return (*row[:5], tuple(row[5]), *row[6:12], tuple(row[12]), row[13])


def delete_overview(store: Store, overview_id: int) -> None:
    """Delete a kept overview, and its audio file once nothing else uses it; NotFound when it
    is already gone."""
    with store.transaction() as db:
        row = db.execute(
            "SELECT audio_sha256 FROM audio_overviews WHERE id = ?", [overview_id]
        ).fetchone()
        if row is None:
            raise NotFound(
                f"There is no audio overview {overview_id}; it may have been deleted already."
            )
        for table in ITEM_TABLES:
            db.execute(f"DELETE FROM {table} WHERE overview_id = ?", [overview_id])
        db.execute("DELETE FROM audio_overviews WHERE id = ?", [overview_id])
    if row[0]:
        store.discard_file_if_unused(row[0])


def delete_notebook_overviews(db: duckdb.DuckDBPyConnection, notebook_id: int) -> list[str]:
    """Inside the caller's transaction (see knownote.notebooks.delete_notebook); the audio files
    the overviews used, for the caller to discard once it commits."""
    hashes = db.execute(
        "SELECT DISTINCT audio_sha256 FROM audio_overviews WHERE notebook_id = ? "
        "AND audio_sha256 IS NOT NULL",
        [notebook_id],
    ).fetchall()
    scope = "overview_id IN (SELECT id FROM audio_overviews WHERE notebook_id = ?)"
    for table in ITEM_TABLES:
        db.execute(f"DELETE FROM {table} WHERE {scope}", [notebook_id])
    db.execute("DELETE FROM audio_overviews WHERE notebook_id = ?", [notebook_id])
    return [h for (h,) in hashes]
