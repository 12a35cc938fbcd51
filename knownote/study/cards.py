"""The study cards kept in the database (`cards`, `card_sources`), and the citation each carries.

A card's `[start, end)` is a range of its document's stored text, like every passage and support
span: `document.text[start:end]` is the sentence a cloze card blanks, or the span a written
answer leans on. Cards are kept; they are made again for the sources that have none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from knownote.answer.cite import chars_label, page_label, time_label
from knownote.errors import NotFound
from knownote.store.db import Store

CLOZE = "cloze"
QA = "qa"
SENTENCES = "sentences"  # `made_by` of the cards made without a model
BLANK = "_____"
# Kinds of answer, so that a quiz offers numbers against numbers and names against names.
NUMBER, NAME, WORD = "number", "name", "word"


@dataclass(frozen=True)
class NewCard:
    """A card about to be kept: `start`/`end` (and `answer_start`/`answer_end` for a cloze
    term) index the document's stored text."""

    document_id: int
    start: int
    end: int
    kind: str
    front: str
    back: str
    answer: str
    answer_kind: str
    language: str
    made_by: str
    supported: bool = True
    score: float | None = None
    answer_start: int | None = None
    answer_end: int | None = None


@dataclass(frozen=True)
class Card:
    """A kept card with its source's title, its page and (a recording) when it was said."""

    id: int
    notebook_id: int
    document_id: int
    title: str
    start: int
    end: int
    kind: str
    front: str
    back: str
    answer: str
    answer_kind: str
    language: str
    made_by: str
    supported: bool
    score: float | None
    answer_start: int | None
    answer_end: int | None
    page: int | None
    seconds: tuple[float, float] | None

    @property
    def where(self) -> str:
        """'p. 3 · chars 1,200–1,310' (or the time of a recording) for the card's range."""
        parts = [page_label(self.page, self.page), time_label(self.seconds)]
        return " · ".join(p for p in [*parts, chars_label(self.start, self.end)] if p)

    @property
    def citation(self) -> str:
        return f"{self.title} · {self.where}"

    def as_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "where": self.where}


_CARD_SQL = """
    SELECT c.id, c.notebook_id, c.document_id, d.title, c.start, c."end", c.kind, c.front,
           c.back, c.answer, c.answer_kind, c.language, c.made_by, c.supported, c.score,
           c.answer_start, c.answer_end,
           (SELECT min(g.page_no) FROM pages g WHERE g.document_id = c.document_id
              AND g.start <= c.start AND c.start < g."end") AS page,
           (SELECT min(s.seconds_start) FROM spoken s WHERE s.document_id = c.document_id
              AND s."end" > c.start AND s.start < c."end") AS said_from,
           (SELECT max(s.seconds_end) FROM spoken s WHERE s.document_id = c.document_id
              AND s."end" > c.start AND s.start < c."end") AS said_to
    FROM cards c JOIN documents d ON d.id = c.document_id
"""


def _card(row: tuple) -> Card:
    seconds = None if row[18] is None else (row[18], row[19])
    return Card(*row[:18], seconds)


def cards(store: Store, notebook_id: int, *, shown_only: bool = True) -> list[Card]:
    """The notebook's cards of sources in use, in source and reading order. `shown_only`:
    only cards whose answer has close support (a written card without is never shown)."""
    where = " WHERE c.notebook_id = ? AND d.enabled" + (" AND c.supported" if shown_only else "")
    with store.lock:
        rows = store.db.execute(
            _CARD_SQL + where + " ORDER BY c.document_id, c.start, c.id", [notebook_id]
        ).fetchall()
    return [_card(row) for row in rows]


def card(store: Store, card_id: int) -> Card:
    with store.lock:
        rows = store.db.execute(_CARD_SQL + " WHERE c.id = ?", [card_id]).fetchall()
    if not rows:
        raise NotFound(f"There is no card {card_id}; its source may have been deleted.")
    return _card(rows[0])


def sources_with_cards(store: Store, notebook_id: int, made_by: str) -> set[int]:
    """Documents of the notebook whose cards `made_by` made (even none)."""
    with store.lock:
        rows = store.db.execute(
            "SELECT s.document_id FROM card_sources s JOIN documents d ON d.id = s.document_id "
            "WHERE d.notebook_id = ? AND s.made_by = ?",
            [notebook_id, made_by],
        ).fetchall()
    return {row[0] for row in rows}


def keep_cards(
    store: Store, document_id: int, made_by: str, made: Sequence[NewCard], written: int
) -> None:
    """Keep a source's new cards and that `made_by` made them (`written`: cards a model wrote,
    before the support check dropped those without close support). One transaction."""
    with store.transaction() as db:
        row = db.execute("SELECT notebook_id FROM documents WHERE id = ?", [document_id]).fetchall()
        if not row:
            raise NotFound("That source was deleted meanwhile; its cards were not kept.")
        db.execute(
            "DELETE FROM card_sources WHERE document_id = ? AND made_by = ?",
            [document_id, made_by],
        )
        db.execute(
            "INSERT INTO card_sources (document_id, made_by, written, kept) VALUES (?, ?, ?, ?)",
            [document_id, made_by, written, sum(c.supported for c in made)],
        )
        rows = [
            [row[0][0], c.document_id, c.start, c.end, c.kind, c.front, c.back, c.answer,
             c.answer_start, c.answer_end, c.answer_kind, c.language, c.made_by, c.supported,
             c.score]
            for c in made
        ]  # fmt: skip
        if rows:
            db.executemany(
                'INSERT INTO cards (notebook_id, document_id, start, "end", kind, front, back, '
                "answer, answer_start, answer_end, answer_kind, language, made_by, supported, "
                "score) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )


@dataclass(frozen=True)
class Kept:
    """What a maker wrote and kept over a notebook's sources."""

    made_by: str
    sources: int
    written: int
    kept: int

    @property
    def share(self) -> float | None:
        """The share of written cards the support check kept (None: none written)."""
        return self.kept / self.written if self.written else None


def kept_shares(store: Store, notebook_id: int) -> list[Kept]:
    with store.lock:
        rows = store.db.execute(
            "SELECT s.made_by, count(*), sum(s.written), sum(s.kept) FROM card_sources s "
            "JOIN documents d ON d.id = s.document_id WHERE d.notebook_id = ? "
            "GROUP BY s.made_by ORDER BY s.made_by",
            [notebook_id],
        ).fetchall()
    return [Kept(r[0], r[1], int(r[2]), int(r[3])) for r in rows]
