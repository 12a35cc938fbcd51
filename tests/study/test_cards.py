"""The cards kept in the database: read back with their citation, kept per source and maker,
gone with their source."""

from __future__ import annotations

import pytest

from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.study.cards import (
    QA,
    NewCard,
    card,
    cards,
    keep_cards,
    kept_shares,
    sources_with_cards,
)
from knownote.study.review import review
from tests.invariants import row_counts


def test_a_card_reads_back_with_its_source_title_and_range(store, notebook, gravity):
    first = cards(store, notebook.id)[0]
    assert card(store, first.id) == first
    assert first.title == store.document(gravity).title
    assert first.citation == f"{first.title} · chars {first.start:,}–{first.end:,}"
    assert first.as_dict()["where"] == first.where


def test_the_sources_with_cards_are_remembered_even_without_a_card(store, notebook, gravity):
    assert sources_with_cards(store, notebook.id, "sentences") == {gravity}
    assert sources_with_cards(store, notebook.id, "llama3.2") == set()
    keep_cards(store, gravity, "llama3.2", [], written=0)
    assert sources_with_cards(store, notebook.id, "llama3.2") == {gravity}


def test_a_card_without_close_support_is_kept_marked_and_never_shown(store, notebook, gravity):
    text = store.document_text(gravity)
    marked = NewCard(gravity, 0, 20, QA, "Who?", "Nobody", "Nobody", "name", "en", "m",
                     supported=False, score=0.05)  # fmt: skip
    shown = NewCard(gravity, 0, 20, QA, "What?", text[:20], text[:20], "word", "en", "m",
                    supported=True, score=0.9)  # fmt: skip
    keep_cards(store, gravity, "m", [marked, shown], written=2)
    assert [c.front for c in cards(store, notebook.id) if c.made_by == "m"] == ["What?"]
    assert len([c for c in cards(store, notebook.id, shown_only=False) if c.made_by == "m"]) == 2
    share = next(k for k in kept_shares(store, notebook.id) if k.made_by == "m")
    assert (share.sources, share.written, share.kept, share.share) == (1, 2, 1, 0.5)


def test_cards_of_a_deleted_source_go_with_their_schedule(store, notebook, gravity):
    review(store, cards(store, notebook.id)[0].id, "good")
    store.delete_document(gravity)
    counts = row_counts(store)
    assert [counts[t] for t in ("cards", "card_sources", "card_schedule", "card_reviews")] == [
        0
    ] * 4


def test_cards_of_a_deleted_notebook_go(store, notebook, gravity):
    review(store, cards(store, notebook.id)[0].id, "again")
    delete_notebook(store, notebook.id)
    counts = row_counts(store)
    assert [counts[t] for t in ("cards", "card_sources", "card_schedule", "card_reviews")] == [
        0
    ] * 4


def test_cards_are_not_kept_for_a_source_deleted_meanwhile(store, notebook, gravity):
    store.delete_document(gravity)
    with pytest.raises(NotFound):
        keep_cards(store, gravity, "sentences", [], written=0)
    with pytest.raises(NotFound):
        card(store, 1)


def test_a_switched_off_source_s_cards_are_not_shown(store, notebook, gravity):
    store.set_document_enabled(gravity, False)
    assert cards(store, notebook.id) == []


def test_the_database_check_finds_cards_whose_source_is_gone(store, notebook, gravity):
    from knownote.store.check import orphan_rows

    assert orphan_rows(store.db) == {}
    made = len(cards(store, notebook.id))
    store.db.execute("DELETE FROM documents WHERE id = ?", [gravity])  # as a crash could leave
    found = orphan_rows(store.db)
    assert (found["cards.document_id"], found["card_sources.document_id"]) == (made, 1)


def test_a_card_of_a_recording_says_when_its_words_were_said(store, notebook, gravity):
    first = cards(store, notebook.id)[0]
    with store.transaction() as db:  # the words of the card's sentence, as a transcript keeps them
        db.execute(
            "INSERT INTO spoken VALUES (?, ?, ?, 61.0, 62.5), (?, ?, ?, 62.5, 64.0)",
            [gravity, first.start, first.start + 5, gravity, first.end - 5, first.end],
        )
    timed = card(store, first.id)
    assert timed.seconds == (61.0, 64.0) and "1:01" in timed.where
