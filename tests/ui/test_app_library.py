"""The Chat view's "All notebooks" through AppTest: a question of every notebook in the library,
each card naming its notebook, and the switch that leaves a notebook out."""

from __future__ import annotations

from pathlib import Path

from knownote.answer import chats
from knownote.store.library import in_library
from tests.search.test_library import FSDP, two_notebooks
from tests.ui.test_app import all_html, home, start, store_for, texts

__all__ = ["home"]  # the fixture


def test_all_notebooks_asks_each_and_the_cards_name_their_notebook(home: Path):
    at = start(home)
    store = store_for(home)
    two = two_notebooks(store)
    at.run()
    at.radio(key="view").set_value("Chat").run()
    at.selectbox(key="ask_scope").set_value("all").run()
    assert "Asking “Hills”, “训练”." in texts(at)
    at.chat_input(key="question").set_value(FSDP).run()
    assert not at.exception
    html = all_html(at)
    assert 'class="kn-card"' in html and "<mark>" in html
    assert "From the notebook “训练”" in html
    [chat] = chats.list_chats(store, None)  # a chat of the library, of no notebook
    assert at.selectbox(key="chat").value == chat.id
    assert chats.list_chats(store, two.english.id) == []
    at.selectbox(key="ask_scope").set_value("notebook").run()
    assert at.selectbox(key="chat").value is None  # this notebook has no chat yet


def test_a_notebook_switched_out_of_the_library_is_not_asked(home: Path):
    at = start(home)
    store = store_for(home)
    two = two_notebooks(store)
    at.run()
    at.radio(key="view").set_value("Chat").run()
    at.selectbox(key="ask_scope").set_value("all").run()
    at.toggle(key=f"in_library_{two.english.id}").set_value(False).run()
    assert not at.exception
    assert not in_library(store, two.english.id)
    assert "Asking “训练”." in texts(at)
    at.chat_input(key="question").set_value("Why does a car roll uphill on a gravity hill?").run()
    html = all_html(at)
    assert "From the notebook “Hills”" not in html and "From the notebook “训练”" in html
