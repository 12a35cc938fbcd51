"""Making a notebook's cards: only for the sources without, with progress, kept as made."""

from __future__ import annotations

import pytest

from knownote.answer.ollama_chat import OllamaChat
from knownote.errors import KnowNoteError
from knownote.study.cards import SENTENCES, cards, sources_with_cards
from knownote.study.make import Made, make_cards, sources_to_do
from tests.ollama_standin import OllamaStandIn
from tests.study.conftest import import_into

NOTES = (
    b"Dense retrieval encodes passages as vectors and compares them with the question's vector."
    b"\n\nKeyword search counts the terms a passage shares with the question, weighting rare "
    b"terms more."
)


def test_cards_are_made_again_for_new_sources_only(store, notebook, settings, embedder, gravity):
    before = cards(store, notebook.id)
    assert make_cards(store, embedder, notebook.id) == [Made(SENTENCES, 0, 0, 0)]
    assert cards(store, notebook.id) == before
    added = import_into(store, notebook, settings, embedder, "notes.txt", NOTES)
    seen = []
    made = make_cards(store, embedder, notebook.id, progress=lambda *a: seen.append(a))
    assert made[0].sources == 1 and seen[0] == ("notes.txt", 0, 1) and seen[-1][1:] == (1, 1)
    assert cards(store, notebook.id)[: len(before)] == before
    assert {c.document_id for c in cards(store, notebook.id)} == {gravity, added}


def test_a_switched_off_source_waits_until_it_is_used(store, notebook, settings, embedder):
    added = import_into(store, notebook, settings, embedder, "notes.txt", NOTES)
    store.set_document_enabled(added, False)
    assert sources_to_do(store, notebook.id, SENTENCES) == []
    store.set_document_enabled(added, True)
    assert sources_to_do(store, notebook.id, SENTENCES) == [added]


def test_a_stop_between_sources_keeps_what_was_made(store, notebook, settings, embedder):
    first = import_into(store, notebook, settings, embedder, "notes.txt", NOTES)
    import_into(store, notebook, settings, embedder, "more.txt", NOTES + b"\n\nMore.")

    def stop_at_second(title: str, done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        make_cards(store, embedder, notebook.id, progress=stop_at_second)
    assert sources_with_cards(store, notebook.id, SENTENCES) == {first}


def test_a_model_that_fails_keeps_the_cloze_cards(store, notebook, embedder, gravity):
    # The model asked for is not there.
    with OllamaStandIn(models={"other": 8192}) as server, pytest.raises(KnowNoteError):
        make_cards(store, embedder, notebook.id, llm=OllamaChat(server.url, 10), model="llama3.2")
    assert sources_with_cards(store, notebook.id, "llama3.2") == set()
    assert cards(store, notebook.id)
