from dataclasses import replace

import pytest

from knownote.answer import chats, notes
from knownote.answer.support import support_spans
from knownote.errors import KnowNoteError, NotFound
from knownote.notebooks import delete_notebook
from knownote.pipeline.ingest import import_file
from knownote.store.archive import export_notebook, import_notebook, notebook_digests
from knownote.store.check import orphan_rows
from knownote.store.db import Store
from tests.answer.test_chats import GRAVITY, sources
from tests.conftest import corpus_file


@pytest.fixture
def document_id(store, notebook, settings, embedder):
    path = corpus_file(GRAVITY)
    data = path.read_bytes()
    return import_file(
        store, notebook, path.name, data, settings=settings, embedder=embedder
    ).document_id


def kept_answer(store, notebook, document_id, text="It is an optical illusion [1]."):
    passages = sources(store, document_id)
    chat_id, _ = chats.add_question(store, notebook.id, None, "What is a gravity hill?")
    chats.add_answer(
        store,
        chat_id,
        text,
        model="llama3.2",
        extractive=False,
        incomplete=False,
        passages=passages,
        supports=support_spans(text, passages),
    )
    [answer] = chats.load_chat(store, chat_id)
    return chat_id, answer, notes.save_answer(store, notebook.id, answer)


def test_an_answer_kept_as_a_note_keeps_its_passages_and_spans(store, notebook, document_id):
    _, answer, note_id = kept_answer(store, notebook, document_id)
    note = notes.get(store, note_id)
    assert note.from_answer and note.question == "What is a gravity hill?"
    assert (note.body, note.model) == (answer.text, "llama3.2")
    assert note.passages == answer.passages
    assert note.supports == answer.supports
    text = store.document_text(document_id)
    assert all(text[p.start : p.end] == p.text for p in note.passages)


def test_a_note_outlives_its_chat(store, notebook, document_id):
    chat_id, answer, note_id = kept_answer(store, notebook, document_id)
    chats.delete_chat(store, chat_id)
    assert notes.get(store, note_id).passages == answer.passages


def test_a_changed_document_makes_a_notes_citations_stale(store, notebook, document_id):
    _, _, note_id = kept_answer(store, notebook, document_id)
    with store.transaction() as db:
        db.execute("UPDATE documents SET text = upper(text) WHERE id = ?", [document_id])
    note = notes.get(store, note_id)
    assert all(p.stale for p in note.passages)
    assert all(s.stale for s in note.supports)


def test_editing_a_kept_answer_follows_its_new_marks(store, notebook, document_id):
    _, _, note_id = kept_answer(store, notebook, document_id)
    passage = notes.get(store, note_id).passages[1]
    sentence = passage.text.split(".")[0].strip()
    notes.edit(store, note_id, "Gravity hills", f"{sentence} [2].")
    note = notes.get(store, note_id)
    assert note.title == "Gravity hills"
    assert [p.n for p in note.passages if p.cited] == [2]
    [support] = note.supports
    assert support.n == 2 and not support.weak
    assert store.document_text(document_id)[support.start : support.end] == support.text


def test_a_written_note_takes_its_first_line_as_title(store, notebook):
    note_id = notes.write(store, notebook.id, "", "Ask about **tilt**\n\nlater")
    note = notes.get(store, note_id)
    assert note.title == "Ask about **tilt** later"
    assert not note.from_answer and note.passages == ()


def test_an_empty_note_is_refused(store, notebook):
    with pytest.raises(KnowNoteError, match="empty"):
        notes.write(store, notebook.id, "  ", "\n")


def test_search_keeps_notes_holding_every_word(store, notebook, document_id):
    kept_answer(store, notebook, document_id)
    notes.write(store, notebook.id, "Tardigrades", "They survive drying out.")
    notes.write(store, notebook.id, "100% sure", "A note with_underscores")
    assert [n.title for n in notes.notes(store, notebook.id, "GRAVITY hill")] == [
        "What is a gravity hill?"
    ]
    assert [n.title for n in notes.notes(store, notebook.id, "drying")] == ["Tardigrades"]
    assert [n.title for n in notes.notes(store, notebook.id, "%")] == ["100% sure"]
    assert [n.title for n in notes.notes(store, notebook.id, "h_underscores")] == ["100% sure"]
    assert notes.notes(store, notebook.id, "drying gravity") == []
    assert len(notes.notes(store, notebook.id)) == 3


def test_deleting_a_note_or_its_notebook_leaves_no_rows(store, notebook, document_id):
    _, _, note_id = kept_answer(store, notebook, document_id)
    notes.delete(store, note_id)
    with pytest.raises(NotFound):
        notes.get(store, note_id)
    kept_answer(store, notebook, document_id)
    delete_notebook(store, notebook.id)
    for table in ("notes", "note_passages", "note_supports"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert orphan_rows(store.db) == {}


def test_the_notebook_export_holds_notes_and_chats_with_footnotes(store, notebook, document_id):
    chat_id, answer, _ = kept_answer(store, notebook, document_id)
    notes.write(store, notebook.id, "Mine", "My *own* words")
    exported = notes.export_notebook(store, notebook.id)
    assert "## Mine\n\nMy *own* words" in exported
    assert "It is an optical illusion [^note1-1]." in exported
    assert f"[^chat{chat_id}-1-1]:" in exported  # a chat's footnotes do not clash with a note's
    assert exported.count(answer.passages[0].text.splitlines()[0]) >= 2


def test_a_note_used_as_a_source_is_cited_like_any_document(
    store, notebook, document_id, settings, embedder
):
    _, _, note_id = kept_answer(store, notebook, document_id)
    filename, data = notes.as_source(notes.get(store, note_id))
    assert filename == "Note - What is a gravity hill.md"
    result = import_file(store, notebook, filename, data, settings=settings, embedder=embedder)
    text = store.document_text(result.document_id)
    assert text.startswith("## What is a gravity hill?\n\nIt is an optical illusion")
    # with the passage it cites
    assert "[^note1-1]: “Gravity hill”, §Gravity hill, chars 0–269" in text
    for p in store.passages(result.document_id):
        assert text[p.start : p.end] == p.text


def test_notes_travel_in_the_notebook_archive(store, notebook, document_id, tmp_path):
    _, _, note_id = kept_answer(store, notebook, document_id)
    notes.write(store, notebook.id, "Mine", "My own words")
    archive = tmp_path / "n.knownote"
    export_notebook(store, notebook.id, archive)
    other = Store.open(tmp_path / "other" / "k.duckdb")
    try:
        result = import_notebook(other, archive, max_bytes=1 << 30)
        assert notebook_digests(other, result.notebook_id) == notebook_digests(store, notebook.id)
        moved = notes.notes(other, result.notebook_id)
        original = notes.notes(store, notebook.id)
        assert [(n.title, n.body) for n in moved] == [(n.title, n.body) for n in original]
        kept = next(n for n in moved if n.from_answer)
        assert [replace(p, document_id=0, passage_id=0) for p in kept.passages] == [
            replace(p, document_id=0, passage_id=0) for p in notes.get(store, note_id).passages
        ]
        assert not any(p.stale for p in kept.passages)
    finally:
        other.close()
