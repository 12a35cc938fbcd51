"""Answers across the library: saved in a chat of no notebook, each passage from its own.

Written answers come from tests/ollama_standin.py (it stands in for an Ollama server, which
cannot be installed here; the real `ollama` client talks to it).
"""

from __future__ import annotations

import pytest

from knownote.answer import chats
from knownote.answer.ask import ask, ask_library
from knownote.answer.ollama_chat import OllamaChat
from knownote.errors import KnowNoteError
from knownote.index.embedders import get_embedder
from knownote.notebooks import delete_notebook
from tests.ollama_standin import OllamaStandIn
from tests.search.test_library import FSDP, two_notebooks

APP = "http://localhost:8501"


@pytest.fixture
def two(store):
    return two_notebooks(store)


def test_a_quoted_answer_across_notebooks_is_a_chat_of_the_library(store, settings, two):
    answer = ask_library(
        store, [two.english, two.chinese], FSDP, llm=None, model=None, settings=settings, k=4
    )
    assert answer.extractive and answer.passages and answer.citations
    assert answer.passages[0].document_id == two.training
    chat = chats.get_chat(store, answer.chat_id)
    assert chat.notebook_id is None
    assert [c.id for c in chats.list_chats(store, None)] == [answer.chat_id]
    assert chats.list_chats(store, two.chinese.id) == []
    [saved] = chats.load_chat(store, answer.chat_id)
    assert saved.text == answer.text and not any(p.stale for p in saved.passages)


def test_a_written_answer_across_notebooks_follows_up_in_the_same_chat(store, settings, two):
    both = [two.english, two.chinese]
    with OllamaStandIn(reply="FSDP shards the parameters [1].") as server:
        llm = OllamaChat(server.url, 10)
        first = ask_library(store, both, FSDP, llm=llm, model="llama3.2", settings=settings)
        again = ask_library(
            store, both, "And a gravity hill?", llm=llm, model="llama3.2", settings=settings,
            chat_id=first.chat_id,
        )  # fmt: skip
    assert first.model == "llama3.2" and first.citations[0].document_id == two.training
    assert again.chat_id == first.chat_id
    assert len(chats.load_chat(store, first.chat_id)) == 2


def test_a_notebook_chat_and_a_library_chat_do_not_mix(store, settings, two):
    english = get_embedder(two.english.embedding_model)
    mine = ask(store, english, two.english.id, "What is a gravity hill?", llm=None, model=None,
               settings=settings)  # fmt: skip
    with pytest.raises(KnowNoteError, match="belongs to one notebook"):
        ask_library(store, [two.english], "Again?", llm=None, model=None, settings=settings,
                    chat_id=mine.chat_id)  # fmt: skip
    theirs = ask_library(store, [two.english, two.chinese], FSDP, llm=None, model=None,
                         settings=settings)  # fmt: skip
    with pytest.raises(KnowNoteError, match="asked of the library"):
        ask(store, english, two.english.id, "Again?", llm=None, model=None, settings=settings,
            chat_id=theirs.chat_id)  # fmt: skip


def test_the_markdown_of_a_library_chat_links_each_passage_to_its_notebook(store, settings, two):
    both = [two.english, two.chinese]
    answer = ask_library(store, both, "gravity hill FSDP", llm=None, model=None,
                         settings=settings, k=8)  # fmt: skip
    held = {p.document_id for p in answer.passages}
    assert held == {two.gravity, two.training}  # both notebooks gave passages
    markdown = chats.export_markdown(store, answer.chat_id, app_url=APP)
    for p in answer.citations:
        notebook = two.english.id if p.document_id == two.gravity else two.chinese.id
        assert f"?notebook={notebook}&source={p.document_id}&start={p.start}" in markdown


def test_deleting_a_notebook_keeps_the_library_chat_with_its_passages_stale(store, settings, two):
    answer = ask_library(store, [two.english, two.chinese], FSDP, llm=None, model=None,
                         settings=settings)  # fmt: skip
    delete_notebook(store, two.chinese.id)
    [saved] = chats.load_chat(store, answer.chat_id)
    gone = [p for p in saved.passages if p.document_id == two.training]
    assert gone and all(p.stale for p in gone)
