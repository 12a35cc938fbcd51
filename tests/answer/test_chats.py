import json

import pytest

from knownote.answer import chats
from knownote.answer.cite import SourcePassage
from knownote.cli import main
from knownote.errors import KnowNoteError, NotFound
from knownote.notebooks import delete_notebook
from knownote.pipeline.ingest import import_file
from tests.conftest import corpus_file
from tests.ollama_standin import free_port

GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"


@pytest.fixture
def document_id(store, notebook, settings, embedder):
    path = corpus_file(GRAVITY)
    result = import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
    )
    return result.document_id


def sources(store, document_id, cited=(1,)):
    return [
        SourcePassage(
            n,
            p.id,
            p.document_id,
            "Gravity hill",
            p.idx,
            p.start,
            p.end,
            p.page_start,
            p.page_end,
            p.text,
            n in cited,
            section=p.section,  # loaded back from the passage
        )
        for n, p in enumerate(store.passages(document_id)[:3], start=1)
    ]


def save_turn(store, notebook, document_id, question="Why?", text="Illusion [1].", chat_id=None):
    chat_id, _ = chats.add_question(store, notebook.id, chat_id, question)
    chats.add_answer(
        store,
        chat_id,
        text,
        model="llama3.2",
        extractive=False,
        incomplete=False,
        passages=sources(store, document_id),
    )
    return chat_id


def test_a_saved_turn_loads_back_with_its_passages(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    [answer] = chats.load_chat(store, chat_id)
    assert (answer.question, answer.text, answer.model) == ("Why?", "Illusion [1].", "llama3.2")
    assert answer.passages == tuple(sources(store, document_id))
    assert [p.n for p in answer.citations] == [1]
    assert not any(p.stale for p in answer.passages)
    assert answer.chat_id == chat_id and answer.message_id is not None


def test_the_rewrite_searched_beside_a_follow_up_is_kept_and_exported(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id, question="Where is it?")
    chats.add_question(store, notebook.id, chat_id, "And why?")
    chats.add_answer(
        store,
        chat_id,
        "An optical illusion [1].",
        model="llama3.2",
        extractive=False,
        incomplete=False,
        passages=sources(store, document_id),
        searched=("Why does the gravity hill look uphill?",),
    )
    first, follow = chats.load_chat(store, chat_id)
    assert first.searched == ()
    assert follow.searched == ("And why?", "Why does the gravity hill look uphill?")
    exported = chats.export_markdown(store, chat_id)
    assert "*Searched for “Why does the gravity hill look uphill?” and the question.*" in exported


def test_the_chat_title_is_the_first_question_shortened(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id, question="Why " * 40)
    [chat] = chats.list_chats(store, notebook.id)
    assert chat.id == chat_id and len(chat.title) <= chats.TITLE_CHARS
    assert chat.title.endswith("…")


def test_chats_are_listed_newest_first(store, notebook, document_id):
    first = save_turn(store, notebook, document_id)
    second = save_turn(store, notebook, document_id)
    assert [c.id for c in chats.list_chats(store, notebook.id)] == [second, first]


def test_follow_ups_stay_in_order(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id, question="One?")
    save_turn(store, notebook, document_id, question="Two?", chat_id=chat_id)
    assert [a.question for a in chats.load_chat(store, chat_id)] == ["One?", "Two?"]


def test_a_chat_of_another_notebook_cannot_be_continued(store, notebook, document_id, embedder):
    other = store.create_notebook("Other", embedder.name, embedder.dim)
    chat_id = save_turn(store, notebook, document_id)
    with pytest.raises(KnowNoteError, match="another notebook"):
        chats.add_question(store, other.id, chat_id, "Sneaky?")


def test_a_question_without_an_answer_loads_as_unanswered(store, notebook, document_id):
    chat_id, _ = chats.add_question(store, notebook.id, None, "Lost?")
    [turn] = chats.load_chat(store, chat_id)
    assert turn.question == "Lost?" and turn.text == "" and turn.incomplete
    assert "not answered" in turn.notice


def test_a_changed_document_makes_its_citations_stale(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    with store.lock:
        store.db.execute("UPDATE documents SET text = 'X' || text WHERE id = ?", [document_id])
    [answer] = chats.load_chat(store, chat_id)
    assert all(p.stale for p in answer.passages)


def test_a_deleted_document_makes_its_citations_stale(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    store.delete_document(document_id)
    [answer] = chats.load_chat(store, chat_id)
    assert all(p.stale for p in answer.passages)
    assert answer.citations[0].text  # the quoted text is kept


def test_delete_chat_removes_its_messages_and_passages(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    chats.delete_chat(store, chat_id)
    assert chats.list_chats(store, notebook.id) == []
    with store.lock:
        assert store.db.execute("SELECT count(*) FROM answer_passages").fetchone() == (0,)
        assert store.db.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    with pytest.raises(NotFound):
        chats.load_chat(store, chat_id)


def test_deleting_the_notebook_removes_its_chats(store, notebook, document_id):
    save_turn(store, notebook, document_id)
    delete_notebook(store, notebook.id)
    with store.lock:
        for table in ("chats", "messages", "answer_passages"):
            assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


def test_an_answer_with_a_mark_out_of_range_loads_without_it(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id, text="Illusion [1][7].")
    [answer] = chats.load_chat(store, chat_id)
    assert answer.text == "Illusion [1]." and answer.dropped_marks == 1


def test_export_has_questions_answers_and_footnotes(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id, question="What is a gravity hill?")
    save_turn(store, notebook, document_id, question="Why?", text="Horizon [1].", chat_id=chat_id)
    passage = store.passages(document_id)[0]
    markdown = chats.export_markdown(store, chat_id)
    assert markdown.startswith("# What is a gravity hill?\n")
    assert "## What is a gravity hill?" in markdown and "## Why?" in markdown
    assert "Illusion [^1-1]." in markdown and "Horizon [^2-1]." in markdown
    where = f"“Gravity hill”, §Gravity hill, chars {passage.start:,}–{passage.end:,}"
    assert f"[^1-1]: {where}" in markdown
    assert "    > " in markdown  # the quoted passage, indented under its footnote
    assert "not cited" in markdown and "- [2] “Gravity hill”" in markdown


def test_citations_and_export_carry_the_passages_section(store, notebook, document_id):
    chat_id, _ = chats.add_question(store, notebook.id, None, "What else?")
    passage = next(p for p in store.passages(document_id) if "See also" in p.section)
    cited = SourcePassage(
        1, passage.id, document_id, "Gravity hill", passage.idx, passage.start, passage.end,
        None, None, passage.text, True,
    )  # fmt: skip
    chats.add_answer(
        store, chat_id, "Lists [1].", model="m", extractive=False, incomplete=False,
        passages=[cited],
    )  # fmt: skip
    [answer] = chats.load_chat(store, chat_id)
    assert answer.passages[0].section == passage.section == "Gravity hill › See also"
    assert "[^1-1]: “Gravity hill”, §See also, chars" in chats.export_markdown(store, chat_id)


def test_export_links_each_footnote_to_its_range_in_the_app(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    passage = store.passages(document_id)[0]
    markdown = chats.export_markdown(store, chat_id, app_url="http://10.0.0.5:8501")
    link = (
        f"http://10.0.0.5:8501/?notebook={notebook.id}&source={document_id}"
        f"&start={passage.start}&end={passage.end}"
    )
    assert f"[open in KnowNote](<{link}>)" in markdown
    assert "open in KnowNote" not in chats.export_markdown(store, chat_id)


def test_export_marks_stale_citations(store, notebook, document_id):
    chat_id = save_turn(store, notebook, document_id)
    store.delete_document(document_id)
    assert "(stale:" in chats.export_markdown(store, chat_id)


# --- the command line -----------------------------------------------------------------------


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_json_without_ollama_gives_a_quoted_answer(capsys, db_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    run(capsys, "--db", db_path, "import", "Hills", corpus_file(GRAVITY))
    code, out, err = run(
        capsys, "--db", db_path, "ask", "Hills", "What is a gravity hill?", "--json", "-k", "4"
    )
    data = json.loads(out)
    assert code == 0 and data["extractive"] and data["model"] is None
    assert data["chat_id"] == 1 and len(data["passages"]) == 4
    assert {
        "n",
        "document_id",
        "title",
        "passage_index",
        "start",
        "end",
        "page_start",
        "page_end",
        "text",
    } <= set(data["citations"][0])
    assert "ollama serve" in err


def test_ask_streams_text_then_sources_and_export_prints_markdown(capsys, db_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    run(capsys, "--db", db_path, "import", "Hills", corpus_file(GRAVITY))
    code, out, err = run(capsys, "--db", db_path, "ask", "Hills", "What is a gravity hill?")
    assert code == 0 and "[1]" in out and "\nSources:\n[" in out and "--chat 1" in err
    code, out, _ = run(capsys, "--db", db_path, "export", "1")
    assert code == 0 and out.startswith("# What is a gravity hill?") and "[^1-" in out


def test_ask_an_unknown_notebook_fails_with_exit_2(capsys, db_path):
    code, _, err = run(capsys, "--db", db_path, "ask", "Nope", "Why?")
    assert code == 2 and "knownote notebooks" in err


def test_export_an_unknown_chat_fails_with_exit_2(capsys, db_path):
    code, _, err = run(capsys, "--db", db_path, "export", "42")
    assert code == 2 and "no chat 42" in err


def test_the_reason_an_answer_fell_short_is_kept_for_a_reload(store, notebook, document_id):
    chat_id, _ = chats.add_question(store, notebook.id, None, "Why?")
    reason = "The model stopped answering after 120 seconds. What arrived is kept."
    passages = sources(store, document_id)
    chats.add_answer(store, chat_id, "Illusion", model="llama3.2", extractive=False,
                     incomplete=True, passages=passages, notice=reason)  # fmt: skip
    save_turn(store, notebook, document_id, chat_id=chat_id)
    first, second = chats.load_chat(store, chat_id)
    assert first.notice == reason and first.incomplete
    assert second.notice is None


# --- support spans --------------------------------------------------------------------------


def first_sentence(store, document_id):
    """The longest sentence of the document's first passage, without its final full stop."""
    from knownote.index.sentences import sentence_spans

    text = store.passages(document_id)[0].text
    a, b = max(sentence_spans(text, lines=True), key=lambda s: s[1] - s[0])
    return text[a:b].rstrip(".")


def save_supported(store, notebook, document_id, text):
    from knownote.answer.support import support_spans

    passages = sources(store, document_id, cited=(1, 2, 3))
    chat_id, _ = chats.add_question(store, notebook.id, None, "Why?")
    supports = support_spans(text, passages)
    chats.add_answer(store, chat_id, text, model="m", extractive=False, incomplete=False,
                     passages=passages, supports=supports)  # fmt: skip
    return chat_id, supports


def test_support_spans_are_saved_with_the_answer_and_load_back(store, notebook, document_id):
    claim = first_sentence(store, document_id) + " [1]. Penguins fly over the Sahara [2]."
    chat_id, supports = save_supported(store, notebook, document_id, claim)
    [answer] = chats.load_chat(store, chat_id)
    assert answer.supports == supports and len(supports) == 2
    text = store.document_text(document_id)
    assert all(text[s.start : s.end] == s.text for s in answer.supports)
    assert not answer.supports[0].weak and answer.supports[1].weak


def test_a_changed_document_makes_its_support_spans_stale(store, notebook, document_id):
    claim = first_sentence(store, document_id) + " [1]."
    chat_id, _ = save_supported(store, notebook, document_id, claim)
    with store.lock:
        store.db.execute("UPDATE documents SET text = 'X' || text WHERE id = ?", [document_id])
    [answer] = chats.load_chat(store, chat_id)
    assert answer.supports and all(s.stale for s in answer.supports)


def test_a_page_header_inside_a_support_span_is_shown_as_an_ellipsis(store, notebook, document_id):
    from knownote.read.roles import RoleRange

    claim = first_sentence(store, document_id)
    chat_id, [support] = save_supported(store, notebook, document_id, claim + " [1].")
    middle = support.start + (support.end - support.start) // 2
    at = store.document_text(document_id).index(" ", middle)
    store.replace_roles(document_id, [RoleRange(at + 1, at + 4, "page_header")])
    [answer] = chats.load_chat(store, chat_id)
    [loaded] = answer.supports
    text = store.document_text(document_id)
    assert loaded.text == text[loaded.start : loaded.end] and not loaded.stale  # still exact
    head, tail = loaded.display.split(" … ")
    assert " ".join(text[loaded.start : at].split()) == head
    assert " ".join(text[at + 4 : loaded.end].split()) == tail
    quoted = chats.export_markdown(store, chat_id).split("leans on", 1)[1]
    assert " … " in quoted


def test_export_quotes_each_support_span_with_its_offsets(store, notebook, document_id):
    claim = first_sentence(store, document_id) + " [1]. Penguins fly over the Sahara [2]."
    chat_id, supports = save_supported(store, notebook, document_id, claim)
    markdown = chats.export_markdown(store, chat_id)
    assert f"Sentence 1 leans on chars {supports[0].start:,}–{supports[0].end:,}:" in markdown
    assert "*Sentence 2: no close match in the cited passages.*" in markdown


def test_delete_chat_removes_its_support_spans(store, notebook, document_id):
    passage = store.passages(document_id)[0]
    chat_id, _ = save_supported(store, notebook, document_id, passage.text[:80] + " [1].")
    chats.delete_chat(store, chat_id)
    with store.lock:
        assert store.db.execute("SELECT count(*) FROM answer_supports").fetchone() == (0,)
