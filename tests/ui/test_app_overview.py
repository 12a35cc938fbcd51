"""The Overview view through AppTest: each source quoted by its central sentences."""

from __future__ import annotations

import os
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from knownote.answer.chats import list_chats
from tests.ollama_standin import OllamaStandIn
from tests.ui.test_app import (
    APP,
    NOTES,
    TIMEOUT,
    all_html,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
    upload,
)
from tests.ui.test_app_model import MODEL, server

__all__ = ["home", "server"]  # the fixtures


def test_the_overview_quotes_each_source(home: Path):
    at = create_notebook(start(home))
    key = f"upload_{at.session_state['upload_round']}"
    at.file_uploader(key=key).set_value([("notes.txt", NOTES.encode(), "text/plain")]).run()
    settle(at)
    at.radio(key="view").set_value("Overview").run()
    assert not at.exception
    assert "Quotes, not a summary." in texts(at)
    html = all_html(at)
    assert 'class="kn-quote"' in html and "“Dense passage retrieval encodes" in html


def test_with_a_model_an_overview_is_written_and_its_question_asked(server: OllamaStandIn):
    server.reply = lambda messages: (
        "SUMMARY: The notes compare dense and keyword search [1].\n"
        "QUESTIONS:\n- What does hybrid search combine?\n- How are passages encoded?\n"
        "- What does keyword search rank?"
        if "overview" in messages[0]["content"]
        else "Hybrid search combines both rankings [1]."
    )
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    create_notebook(at)
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    # The model chosen when the file was added writes its overview once the import is done.
    store = store_for(Path(os.environ["KNOWNOTE_HOME"]))
    [document] = store.documents(store.notebooks()[0].id)
    deadline = time.monotonic() + TIMEOUT
    while store.overview(document.id) is None:
        assert time.monotonic() < deadline, "no overview was written after the import"
        time.sleep(0.1)
    at.radio(key="view").set_value("Overview").run()
    assert not at.exception
    assert "write_overviews" not in [b.key for b in at.button]  # nothing left to write
    at.button(key=f"write_overview_{document.id}").click().run()  # "Write again"
    assert len([c for c in server.chats() if "overview" in c["messages"][0]["content"]]) == 2
    html = all_html(at)
    assert "The notes compare dense and keyword search" in html and 'class="kn-cite"' in html
    assert f"Written by {MODEL}" in texts(at)
    [ask] = [b for b in at.button if b.label == "What does hybrid search combine?"]
    ask.click().run()
    assert not at.exception
    assert at.radio(key="view").value == "Chat"
    assert "Hybrid search combines both rankings" in all_html(at)
    [chat] = list_chats(store_for(Path(os.environ["KNOWNOTE_HOME"])), 1)
    assert chat.title == "What does hybrid search combine?"
