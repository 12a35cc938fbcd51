"""Two sessions of the app (two AppTest runs sharing the process's one cached store), where one
deletes what the other still shows: the other is told, and sees no traceback.
"""

from __future__ import annotations

from pathlib import Path

from tests.ui.test_app import NOTES, create_notebook, home, start, store_for, texts, upload

__all__ = ["home"]  # the fixture, shared with test_app


def two_sessions(home: Path):
    first = create_notebook(start(home), "Shared")
    upload(first, ("notes.txt", NOTES.encode(), "text/plain"))
    second = start(home)
    assert second.selectbox(key="notebook").value == first.selectbox(key="notebook").value
    return first, second


def test_deleting_a_source_another_session_deleted_says_so(home: Path):
    first, second = two_sessions(home)
    (document,) = store_for(home).documents(store_for(home).notebooks()[0].id)
    second.radio(key="view").set_value("Sources").run()
    for at in (first, second):
        at.button(key=f"delete_{document.id}").click().run()
    first.button(key=f"confirm_delete_{document.id}").click().run()
    second.button(key=f"confirm_delete_{document.id}").click().run()
    assert not first.exception and not second.exception
    assert "That source was already deleted" in texts(second)
    assert store_for(home).documents(document.notebook_id) == []


def test_deleting_a_chat_another_session_deleted_says_so(home: Path):
    first, second = two_sessions(home)
    first.radio(key="view").set_value("Chat").run()
    first.chat_input(key="question").set_value("What is keyword search?").run()
    chat_id = first.selectbox(key="chat").value
    second.radio(key="view").set_value("Chat").run()
    second.selectbox(key="chat").set_value(chat_id).run()
    for at in (first, second):
        at.button(key="delete_chat").click().run()
    first.button(key="confirm_delete_chat").click().run()
    second.button(key="confirm_delete_chat").click().run()
    assert not first.exception and not second.exception
    assert "That chat was already deleted" in texts(second)
    assert second.selectbox(key="chat").value is None


def test_deleting_a_notebook_another_session_deleted_says_so(home: Path):
    first, second = two_sessions(home)
    for at in (first, second):
        at.button(key="delete_notebook").click().run()
    first.button(key="confirm_delete_notebook").click().run()
    second.button(key="confirm_delete_notebook").click().run()
    assert not first.exception and not second.exception
    assert "That notebook was already deleted" in texts(second)
    assert store_for(home).notebooks() == []
