"""FSRS review: due cards, each rating's schedule kept in the database and advanced."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import fsrs
import pytest

from knownote.errors import KnowNoteError, NotFound
from knownote.study.cards import cards
from knownote.study.review import due_cards, review, schedule

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def test_every_new_card_is_due_and_none_has_a_schedule(store, notebook, gravity):
    made = cards(store, notebook.id)
    assert [c.id for c in due_cards(store, notebook.id, NOW)] == [c.id for c in made]
    assert all(schedule(store, c.id) is None for c in made)


def test_a_review_stores_the_fsrs_schedule_and_its_log(store, notebook, gravity):
    card = cards(store, notebook.id)[0]
    kept = review(store, card.id, "good", NOW)
    expected, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(
        fsrs.Card(card_id=card.id, due=NOW), fsrs.Rating.Good, review_datetime=NOW
    )
    assert kept.due == expected.due and kept.stability == pytest.approx(expected.stability)
    assert (kept.state, kept.last_review, kept.reviews) == ("Learning", NOW, 1)
    assert schedule(store, card.id) == kept
    assert card.id not in [c.id for c in due_cards(store, notebook.id, NOW)]
    assert card.id in [c.id for c in due_cards(store, notebook.id, kept.due)]


def test_ratings_order_the_next_review_and_good_reviews_lengthen_it(store, notebook, gravity):
    made = cards(store, notebook.id)
    ratings = ["again", "hard", "good", "easy"]
    dues = [review(store, c.id, r, NOW).due for c, r in zip(made[:4], ratings, strict=True)]
    assert dues == sorted(dues) and dues[0] < dues[3]
    when, gaps = NOW, []
    for _ in range(4):  # good, each time it is due
        kept = review(store, made[2].id, "good", when)
        gaps.append(kept.due - when)
        when = kept.due
    assert kept.state == "Review" and kept.reviews == 5
    assert gaps[-1] > gaps[-2] > timedelta(days=1)


def test_the_schedule_survives_reopening_the_database(db_path, store, notebook, gravity):
    from knownote.store.db import Store

    card = cards(store, notebook.id)[0]
    kept = review(store, card.id, "hard", NOW)
    store.close()
    again = Store.open(db_path)
    try:
        assert schedule(again, card.id) == kept
        assert review(again, card.id, "good", kept.due).reviews == 2
    finally:
        again.close()


def test_the_longest_overdue_card_comes_first_then_new_ones(store, notebook, gravity):
    made = cards(store, notebook.id)
    first = review(store, made[0].id, "again", NOW)
    second = review(store, made[1].id, "again", NOW - timedelta(hours=1))
    due = due_cards(store, notebook.id, NOW + timedelta(days=1))
    assert second.due < first.due
    assert [c.id for c in due[:2]] == [made[1].id, made[0].id]
    assert [c.id for c in due[2:]] == [c.id for c in made[2:]]


def test_an_unknown_rating_or_card_is_refused(store, notebook, gravity):
    with pytest.raises(KnowNoteError, match="again, hard, good or easy"):
        review(store, cards(store, notebook.id)[0].id, "perfect")
    with pytest.raises(NotFound):
        review(store, 999_999, "good")
