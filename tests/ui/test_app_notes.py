"""The Notes view through AppTest: keep an answer, write, search, edit, delete, use as a source."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from knownote.answer import notes
from knownote.ui.download import unpack
from tests.ui.test_app import (
    NOTES,
    all_html,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
)

__all__ = ["home"]  # the fixture


def labelled(widgets, label: str):
    return next(w for w in widgets if w.label == label)


def notebook_with_an_answer(home: Path) -> AppTest:
    at = create_notebook(start(home))
    key = f"upload_{at.session_state['upload_round']}"
    at.file_uploader(key=key).set_value([("notes.txt", NOTES.encode(), "text/plain")]).run()
    settle(at)
    at.radio(key="view").set_value("Chat").run()
    at.chat_input(key="question").set_value("What is dense passage retrieval?").run()
    assert not at.exception
    return at


def write(at: AppTest, title: str, body: str) -> None:
    labelled(at.text_input, "Title").set_value(title)
    labelled(at.text_area, "Note").set_value(body)
    labelled(at.button, "Save note").click().run()
    assert not at.exception


def test_an_answer_saved_as_a_note_shows_with_its_cards(home: Path):
    at = notebook_with_an_answer(home)
    [save] = [b for b in at.button if b.label == "Save as note"]
    save.click().run()
    assert "Kept the answer as a note" in "\n".join(s.value for s in at.success)
    at.radio(key="view").set_value("Notes").run()
    assert not at.exception
    html = all_html(at)
    assert 'class="kn-card"' in html and "<mark>" in html
    assert "[1] notes.txt · chars 0–" in html
    assert "What is dense passage retrieval?" in texts(at)
    at.button(key="download_notes").click().run()  # to this session's page, with no URL
    assert not at.exception and at.get("download_button") == []
    (saver,) = at.get("bidi_component")
    head, markdown = unpack(saver.proto.bytes)
    assert head["name"].startswith("knownote-notebook-") and head["mime"] == "text/markdown"
    assert "What is dense passage retrieval?" in markdown.decode()


def test_a_written_note_is_found_edited_and_deleted(home: Path):
    at = create_notebook(start(home))
    at.radio(key="view").set_value("Notes").run()
    write(at, "Tardigrades", "They survive **drying** out.")
    write(at, "", "Hybrid search <script>alert(1)</script> fuses rankings.")
    assert "They survive **drying** out." in texts(at)
    at.text_input(key="note_search").set_value("drying").run()
    assert "They survive **drying** out." in texts(at)
    assert "fuses rankings" not in texts(at)
    [note] = notes.notes(store_for(home), 1, "drying")
    at.button(key=f"edit_note_{note.id}").click().run()
    at.text_area(key=f"note_body_{note.id}").set_value("They survive drying out, for decades.")
    labelled(at.button, "Save changes").click().run()
    assert not at.exception
    assert "They survive drying out, for decades." in texts(at)
    at.button(key=f"delete_note_{note.id}").click().run()
    at.button(key=f"confirm_delete_note_{note.id}").click().run()
    assert not at.exception
    at.text_input(key="note_search").set_value("").run()
    assert [n.title for n in notes.notes(store_for(home), 1)] == [
        "Hybrid search <script>alert(1)</script> fuses rankings."
    ]


def test_a_note_used_as_a_source_is_imported(home: Path):
    at = create_notebook(start(home))
    at.radio(key="view").set_value("Notes").run()
    write(at, "Tardigrades", "Tardigrades survive drying out by entering cryptobiosis.")
    [note] = notes.notes(store_for(home), 1)
    at.button(key=f"use_note_{note.id}").click().run()
    assert not at.exception
    settle(at)
    [document] = store_for(home).documents(1)
    assert document.filename == "Note - Tardigrades.md"
    text = store_for(home).document_text(document.id)
    assert "cryptobiosis" in text
