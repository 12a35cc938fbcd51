"""The answer model misbehaving, through the app (AppTest): the user is told what happened, what
arrived is kept and marked, nothing crashes, and the next question is answered.

OLLAMA_HOST points at tests/ollama_standin.py, the in-test server that follows Ollama's documented
API (no Ollama server can be installed where these tests run).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from knownote.answer.chats import INCOMPLETE_NOTICE, list_chats, load_chat
from tests.ollama_standin import OllamaStandIn
from tests.ui.test_app import APP, NOTES, TIMEOUT, all_html, create_notebook, store_for, upload

WRITTEN = "Dense passage retrieval encodes questions and passages as vectors [1]."
MODEL = "llama3.2:latest"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OllamaStandIn]:
    with OllamaStandIn(models={MODEL: 8192}, reply=WRITTEN) as server:
        monkeypatch.setenv("KNOWNOTE_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        monkeypatch.setenv("KNOWNOTE_OLLAMA_TIMEOUT", "1")
        monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
        yield server


@pytest.fixture
def app(server: OllamaStandIn) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    listed = [s.value for s in at.selectbox if s.key == "model"]
    assert listed == [MODEL], [m.value for m in at.markdown]  # what the sidebar said instead
    return with_notes(at)


def with_notes(at: AppTest) -> AppTest:
    create_notebook(at)
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    at.radio(key="view").set_value("Chat").run()
    return at


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input(key="question").set_value(question).run()
    assert not at.exception
    return at


def saved(tmp_path: Path):
    """The answers of the one chat, as the database holds them."""
    store = store_for(tmp_path / "home")
    (chat,) = list_chats(store, store.notebooks()[0].id)
    return load_chat(store, chat.id)


def answer_texts(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html") if 'class="kn-answer"' in h.proto.body]


def then_the_next_question_is_answered(at: AppTest, server: OllamaStandIn, tmp_path: Path):
    server.drop_after = server.error_after = server.stall_after = None
    server.models, server.reply = {MODEL: 8192}, WRITTEN
    ask(at, "How are passages encoded?")
    last = saved(tmp_path)[-1]
    assert last.model == MODEL and not last.incomplete and not last.extractive
    assert last.text == WRITTEN
    assert 'class="kn-cite" href="#' in answer_texts(at)[-1]  # to the card or its span


def test_a_stream_dropped_halfway_is_kept_marked_and_explained(app, server, tmp_path):
    server.drop_after = 4
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert answer.incomplete and answer.text == "Dense passage retrieval encodes"
    assert "Dense passage retrieval encodes" in answer_texts(app)[0]
    (warning,) = app.warning
    assert "What arrived is kept and marked incomplete." in warning.value
    then_the_next_question_is_answered(app, server, tmp_path)
    assert len(app.warning) == 1  # the first answer stays marked


def test_a_model_that_stops_sending_midway_times_out_and_keeps_the_start(app, server, tmp_path):
    server.stall_after, server.stall = 3, 3.0
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert answer.incomplete and answer.text == "Dense passage retrieval"
    assert "stopped sending for 1 seconds" in app.warning[0].value
    then_the_next_question_is_answered(app, server, tmp_path)


def test_no_first_token_within_the_timeout_quotes_the_sources_and_says_why(app, server, tmp_path):
    server.stall_after, server.stall = 0, 3.0
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert answer.extractive and not answer.incomplete
    (info,) = app.info
    assert f"The model {MODEL} did not answer within 1 seconds" in info.value
    assert "sentences quoted from your sources" in info.value
    assert "<mark>" in all_html(app)
    then_the_next_question_is_answered(app, server, tmp_path)


def test_a_model_removed_after_it_was_listed_says_to_pull_it(app, server, tmp_path):
    server.models = {}  # `ollama rm` while the app still lists the model
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert answer.extractive
    (info,) = app.info
    assert f"is not installed on the Ollama server at {server.url}" in info.value
    assert f"ollama pull {MODEL}" in info.value
    then_the_next_question_is_answered(app, server, tmp_path)


def test_a_server_without_models_says_to_pull_one(server, tmp_path):
    server.models = {}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert "Connected, but no models are installed" in "\n".join(m.value for m in at.markdown)
    ask(with_notes(at), "What is dense passage retrieval?")
    assert saved(tmp_path)[0].extractive
    assert "No answer model chosen" in at.info[0].value
    assert "ollama pull llama3.2" in at.info[0].value


def test_ollama_going_down_mid_session_quotes_the_sources(app, server, tmp_path):
    server.__exit__()  # the app listed its models a moment ago
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert answer.extractive
    assert f"No Ollama server answers at {server.url}" in app.info[0].value
    assert "<mark>" in all_html(app)


def test_a_citation_of_a_passage_it_was_not_given_is_not_a_link(app, server, tmp_path):
    server.reply = WRITTEN + " It is also covered in [99]."
    ask(app, "What is dense passage retrieval?")
    (answer,) = saved(tmp_path)
    assert [p.n for p in answer.citations] == [1] and answer.dropped_marks == 1
    (html,) = answer_texts(app)
    assert "99" not in html
    assert html.count('class="kn-cite"') == 1
    captions = "\n".join(c.value for c in app.caption)
    assert "also cited 1 passage number(s) it was not given" in captions
    then_the_next_question_is_answered(app, server, tmp_path)


def test_a_reloaded_incomplete_answer_keeps_its_mark(app, server, tmp_path):
    server.drop_after = 4
    ask(app, "What is dense passage retrieval?")
    (live,) = saved(tmp_path)
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)  # another visit to the app
    fresh.run()
    fresh.radio(key="view").set_value("Chat").run()
    assert not fresh.exception
    # The reason it fell short, as it was said when the answer stopped, not a generic mark.
    assert fresh.warning[0].value == live.notice
    assert live.notice.endswith("What arrived is kept and marked incomplete.")
    assert live.notice != INCOMPLETE_NOTICE
    assert "Dense passage retrieval encodes" in answer_texts(fresh)[0]
