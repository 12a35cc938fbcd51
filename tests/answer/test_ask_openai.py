"""The answer path with an OpenAI-compatible server (tests/openai_standin.py scripts what the
model says): passages left out for the context are named, a loop is cut, the key is not kept."""

from __future__ import annotations

import pytest

from knownote.answer.ask import REPEATED, ask
from knownote.answer.openai_chat import OpenAIChat
from knownote.answer.servers import AnswerServers
from knownote.pipeline.ingest import import_file
from tests.openai_standin import OpenAIStandIn

PARAGRAPHS = "\n\n".join(
    f"Paragraph {i} about gravity hills: the road in place {i} only looks like it climbs, "
    f"and cars seem to roll uphill there, which is an optical illusion number {i}. " * 3
    for i in range(8)
)


@pytest.fixture
def hills(store, notebook, settings, embedder):
    result = import_file(
        store, notebook, "hills.txt", PARAGRAPHS.encode(), settings=settings, embedder=embedder
    )
    assert result.status == "imported", result.error
    return notebook


def answer(store, embedder, notebook, settings, server, **chat):
    servers = AnswerServers(None, OpenAIChat(server.url, **chat))
    return ask(store, embedder, notebook.id, "Why do cars roll uphill?", llm=servers,
               model="openai:tiny", settings=settings, k=8)  # fmt: skip


def test_passages_left_out_for_the_context_are_named(store, embedder, hills, settings):
    with OpenAIStandIn(reply="It is an illusion [1].", n_ctx=1200) as server:
        result = answer(store, embedder, hills, settings, server, max_tokens=200)
    assert result.text == "It is an illusion [1]."
    assert 1 <= len(result.passages) < 8
    assert f"{8 - len(result.passages)} of the 8 passages found were left out" in result.notice
    assert "1,200 tokens" in result.notice


def test_a_looping_answer_is_cut_and_saved(store, embedder, hills, settings):
    loop = "The road only looks like it climbs [1]. " * 30
    with OpenAIStandIn(reply=loop, n_ctx=8192) as server:
        result = answer(store, embedder, hills, settings, server)
    assert result.text == "The road only looks like it climbs [1]."
    assert REPEATED in result.notice
    assert not result.incomplete


def test_marks_out_of_range_are_dropped_and_counted(store, embedder, hills, settings):
    with OpenAIStandIn(reply="It is an illusion [1][42]. 这是错觉 [0].", n_ctx=8192) as server:
        result = answer(store, embedder, hills, settings, server)
    assert [p.n for p in result.citations] == [1]
    assert result.dropped_marks == 2


def test_the_api_key_is_not_stored(store, embedder, hills, settings, db_path):
    with OpenAIStandIn(reply="Yes [1].", n_ctx=8192) as server:
        answer(store, embedder, hills, settings, server, api_key="sk-never-in-the-db")
    store.db.execute("CHECKPOINT")
    assert b"sk-never-in-the-db" not in db_path.read_bytes()
