"""Spaced repetition with FSRS (the `fsrs` package): the cards due, and each review's rating.

A card never reviewed is due; after a review its FSRS state (state, step, stability,
difficulty, when it is due next) is kept in `card_schedule`, and the review in `card_reviews`.
Times are stored in UTC. Fuzzing is off, so the same reviews give the same schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import fsrs

from knownote.errors import KnowNoteError, NotFound
from knownote.store.db import Store
from knownote.study.cards import Card, cards

RATINGS = {"again": fsrs.Rating.Again, "hard": fsrs.Rating.Hard, "good": fsrs.Rating.Good,
           "easy": fsrs.Rating.Easy}  # fmt: skip
_SCHEDULER = fsrs.Scheduler(enable_fuzzing=False)


@dataclass(frozen=True)
class Schedule:
    """A card's FSRS state after its last review (times in UTC)."""

    card_id: int
    state: str  # Learning, Review or Relearning
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reviews: int


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=UTC)


def _naive(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None)


def schedule(store: Store, card_id: int) -> Schedule | None:
    """The card's schedule; None when it was never reviewed."""
    with store.lock:
        rows = store.db.execute(
            "SELECT s.card_id, s.state, s.step, s.stability, s.difficulty, s.due, s.last_review, "
            "(SELECT count(*) FROM card_reviews r WHERE r.card_id = s.card_id) "
            "FROM card_schedule s WHERE s.card_id = ?",
            [card_id],
        ).fetchall()
    if not rows:
        return None
    r = rows[0]
    return Schedule(r[0], fsrs.State(r[1]).name, r[2], r[3], r[4], _utc(r[5]), _utc(r[6]), r[7])


def due_cards(store: Store, notebook_id: int, now: datetime | None = None) -> list[Card]:
    """The notebook's shown cards due by `now` (default: now): those never reviewed, in source
    and reading order, after those reviewed before, the longest overdue first."""
    now = now or datetime.now(UTC)
    with store.lock:
        rows = store.db.execute(
            "SELECT s.card_id, s.due FROM card_schedule s JOIN cards c ON c.id = s.card_id "
            "WHERE c.notebook_id = ?",
            [notebook_id],
        ).fetchall()
    due_at = {card_id: _utc(due) for card_id, due in rows}
    shown = [c for c in cards(store, notebook_id) if due_at.get(c.id, now) <= now]
    return sorted(shown, key=lambda c: (c.id not in due_at, due_at.get(c.id, now)))


def review(store: Store, card_id: int, rating: str, now: datetime | None = None) -> Schedule:
    """Record a review ("again", "hard", "good" or "easy") and schedule the card's next one."""
    if rating not in RATINGS:
        raise KnowNoteError(f"Rate a card again, hard, good or easy, not “{rating}”.")
    now = now or datetime.now(UTC)
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM cards WHERE id = ?", [card_id]).fetchall():
            raise NotFound(f"There is no card {card_id}; its source may have been deleted.")
        rows = db.execute(
            "SELECT state, step, stability, difficulty, due, last_review FROM card_schedule "
            "WHERE card_id = ?",
            [card_id],
        ).fetchall()
        if rows:
            state, step, stability, difficulty, due, last = rows[0]
            before = fsrs.Card(card_id, fsrs.State(state), step, stability, difficulty,
                               _utc(due), _utc(last))  # fmt: skip
        else:
            before = fsrs.Card(card_id=card_id, due=now)
        after, _ = _SCHEDULER.review_card(before, RATINGS[rating], review_datetime=now)
        db.execute("DELETE FROM card_schedule WHERE card_id = ?", [card_id])
        db.execute(
            "INSERT INTO card_schedule (card_id, state, step, stability, difficulty, due, "
            "last_review) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [card_id, after.state.value, after.step, after.stability, after.difficulty,
             _naive(after.due), _naive(after.last_review)],
        )  # fmt: skip
        db.execute(
            "INSERT INTO card_reviews (card_id, rating, reviewed_at) VALUES (?, ?, ?)",
            [card_id, RATINGS[rating].value, _naive(now)],
        )
    found = schedule(store, card_id)
    assert found is not None
    return found
