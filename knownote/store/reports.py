"""Kept reports: a notebook's timelines, glossaries and written reports, their lines and citations.

This module owns `reports`, `report_lines` and `report_cites` (migration m029). A notebook keeps
many reports. Each citation keeps its range, its source's title and the quote, so it still says
where it pointed after its source is deleted or changed (knownote.study.reports marks it stale).
The records here are the store's own: the store may not import knownote.answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb

from knownote.errors import NotFound
from knownote.store.db import Store

ITEM_TABLES = ("report_lines", "report_cites", "report_sources")


@dataclass(frozen=True)
class KeptLine:
    text: str
    style: str
    cites: tuple[int, ...]
    label: str | None
    date: str | None
    unsupported: bool
    continues: bool = False


@dataclass(frozen=True)
class KeptCite:
    n: int
    document_id: int
    title: str
    start: int
    end: int
    quote: str
    page: int | None
    seconds: tuple[float, float] | None
    span: tuple[int, int] | None


@dataclass(frozen=True)
class KeptReport:
    id: int | None  # None until kept
    notebook_id: int
    kind: str
    title: str
    model: str | None
    instructions: str
    written: int
    kept: int
    marked: int
    document_ids: tuple[int, ...]
    made_at: datetime | None
    lines: tuple[KeptLine, ...] = ()
    cites: tuple[KeptCite, ...] = ()


_HEAD = (
    "SELECT id, notebook_id, kind, title, model, instructions, written, kept, marked, "
    "(SELECT coalesce(list(document_id ORDER BY n), []) FROM report_sources "
    "WHERE report_id = reports.id), made_at FROM reports"
)


def save_report(
    store: Store,
    head: KeptReport,
    lines: Sequence[KeptLine],
    cites: Sequence[KeptCite],
) -> int:
    """Keep a report (its `id` and `made_at` are given by the database); its id. NotFound when
    the notebook was deleted meanwhile."""
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM notebooks WHERE id = ?", [head.notebook_id]).fetchall():
            raise NotFound("That notebook was deleted meanwhile; its report was not kept.")
        ((report_id,),) = db.execute(
            "INSERT INTO reports (notebook_id, kind, title, model, instructions, written, kept, "
            "marked) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                head.notebook_id, head.kind, head.title, head.model, head.instructions,
                head.written, head.kept, head.marked,
            ],
        ).fetchall()  # fmt: skip
        if head.document_ids:
            db.executemany(
                "INSERT INTO report_sources VALUES (?, ?, ?)",
                [[report_id, n, d] for n, d in enumerate(head.document_ids)],
            )
        if lines:
            db.executemany(
                "INSERT INTO report_lines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [
                        report_id,
                        i,
                        x.text,
                        x.style,
                        list(x.cites),
                        x.label,
                        x.date,
                        x.unsupported,
                        x.continues,
                    ]
                    for i, x in enumerate(lines)
                ],
            )
        if cites:
            db.executemany(
                "INSERT INTO report_cites VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [cite_row(report_id, c) for c in cites],
            )
    return report_id


def kept_report(store: Store, report_id: int) -> KeptReport:
    """A kept report with its lines and citations; NotFound when there is none."""
    with store.lock:
        db = store.db
        head = db.execute(_HEAD + " WHERE id = ?", [report_id]).fetchall()
        if not head:
            raise NotFound(f"There is no report {report_id}; it may have been deleted.")
        lines = db.execute(
            "SELECT text, style, cites, label, date, unsupported, continues FROM report_lines "
            "WHERE report_id = ? ORDER BY line",
            [report_id],
        ).fetchall()
        cites = db.execute(
            f"SELECT {CITE_COLUMNS} FROM report_cites WHERE report_id = ? ORDER BY n", [report_id]
        ).fetchall()
    return KeptReport(
        *_head(head[0]),
        lines=tuple(KeptLine(r[0], r[1], tuple(r[2]), *r[3:]) for r in lines),
        cites=tuple(kept_cite(r) for r in cites),
    )


def cite_row(owner_id: int, c: KeptCite) -> list:
    """A citation as a row of `report_cites` or `audio_cites` (whose columns are the same)."""
    seconds, span = c.seconds or (None, None), c.span or (None, None)
    return [owner_id, c.n, c.document_id, c.title, c.start, c.end, c.quote, c.page, *seconds, *span]


# A citation's columns in `report_cites` and `audio_cites`, as `kept_cite` reads them.
CITE_COLUMNS = (
    'n, document_id, title, start, "end", quote, page, seconds_start, seconds_end, span_start, '
    "span_end"
)


def kept_cite(row: tuple) -> KeptCite:
    return KeptCite(
        *row[:7],
        seconds=None if row[7] is None else (row[7], row[8]),
        span=None if row[9] is None else (row[9], row[10]),
    )


def report_heads(store: Store, notebook_id: int) -> list[KeptReport]:
    """The notebook's reports without their lines and citations, the newest first."""
    with store.lock:
        rows = store.db.execute(
            _HEAD + " WHERE notebook_id = ? ORDER BY id DESC", [notebook_id]
        ).fetchall()
    return [KeptReport(*_head(row)) for row in rows]


def _head(row: tuple) -> tuple:
    return (*row[:9], tuple(row[9]), row[10])


def delete_report(store: Store, report_id: int) -> None:
    """Delete a kept report; NotFound when it is already gone."""
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM reports WHERE id = ?", [report_id]).fetchall():
            raise NotFound(f"There is no report {report_id}; it may have been deleted already.")
        for table in ITEM_TABLES:
            db.execute(f"DELETE FROM {table} WHERE report_id = ?", [report_id])
        db.execute("DELETE FROM reports WHERE id = ?", [report_id])


def delete_notebook_reports(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    """Inside the caller's transaction (see knownote.notebooks.delete_notebook)."""
    scope = "report_id IN (SELECT id FROM reports WHERE notebook_id = ?)"
    for table in ITEM_TABLES:
        db.execute(f"DELETE FROM {table} WHERE {scope}", [notebook_id])
    db.execute("DELETE FROM reports WHERE notebook_id = ?", [notebook_id])
