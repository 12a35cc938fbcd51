"""Answers from a real notebook (real corpus documents, the real embedding model).

Written answers come from tests/ollama_standin.py: it stands in for an Ollama server, which
cannot be installed where these tests run, and the real `ollama` client talks to it.
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from knownote.answer import chats
from knownote.answer.ask import ask
from knownote.answer.cite import Answer
from knownote.answer.ollama_chat import OllamaChat, num_ctx_for
from knownote.answer.prompts import build_messages, translation_in
from knownote.answer.prompts import standalone_query as rewrite
from knownote.answer.quotes import extractive_answer
from knownote.errors import KnowNoteError
from knownote.index.sentences import sentence_spans
from knownote.index.tokenize import tokenize
from knownote.pipeline.ingest import import_file
from knownote.search.retrieve import SearchError, search
from knownote.settings import Settings
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.ollama_standin import OllamaStandIn, free_port

RAG = "docs/office/docx_en_rag_intro.docx"
GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
WRITTEN = "A gravity hill is an optical illusion [1]. The horizon is hidden [2][9]."


def add(store, notebook, settings, embedder, relative):
    path = corpus_file(relative)
    result = import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
    )
    assert result.status == "imported", result.error
    return result.document_id


@pytest.fixture(scope="module")
def template(tmp_path_factory, embedder):
    """A database holding the two documents, built once and copied for each test."""
    settings = Settings().with_(home=tmp_path_factory.mktemp("answer-template"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Test notebook", embedder.name, embedder.dim)
    ids = {
        "rag": add(store, notebook, settings, embedder, RAG),
        "gravity": add(store, notebook, settings, embedder, GRAVITY),
    }
    store.close()
    return settings.db_path, ids


@pytest.fixture
def store(template, db_path):
    db_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template[0], db_path)
    store = Store.open(db_path)
    yield store
    store.close()


@pytest.fixture
def notebook(store):
    return store.notebook_by_name("Test notebook")


@pytest.fixture
def docs(template):
    return template[1]


def ask_(store, embedder, notebook, settings, question, **kwargs):
    kwargs.setdefault("llm", None)
    kwargs.setdefault("model", None)
    return ask(store, embedder, notebook.id, question, settings=settings, **kwargs)


# --- the extractive answer ------------------------------------------------------------------


def test_without_a_model_the_answer_quotes_the_sources(store, embedder, notebook, settings, docs):
    answer = ask_(store, embedder, notebook, settings, "What is hybrid search and why use it?")
    assert answer.extractive and answer.model is None and not answer.incomplete
    assert "quoted from your sources" in answer.notice and "ollama serve" in answer.notice
    assert "hybrid search" in answer.text.lower()
    assert answer.citations and answer.citations[0].document_id == docs["rag"]


def test_every_quoted_sentence_comes_from_the_passage_it_cites(
    store, embedder, notebook, settings, docs
):
    answer = ask_(store, embedder, notebook, settings, "Why does a car seem to roll uphill?")
    by_n = {p.n: p for p in answer.passages}
    for paragraph in answer.text.split("\n\n"):
        for quote, n in _quotes(paragraph):
            assert set(tokenize(quote)) <= set(tokenize(by_n[n].text)), (quote, n)
            assert by_n[n].cited


def _quotes(paragraph):
    import re

    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"(.+?) \[(\d+)\]\s*", paragraph)]


def test_extractive_answer_keeps_three_to_five_distinct_sentences(
    store, embedder, notebook, settings, docs
):
    question = "What is a gravity hill and why does it fool people?"
    hits = search(store, embedder, notebook.id, question, k=8)
    text, cited = extractive_answer(embedder, question, hits)
    quotes = [q for p in text.split("\n\n") for q, _ in _quotes(p)]
    assert 1 <= len(quotes) <= 5
    assert len(set(quotes)) == len(quotes)
    assert cited == {n for p in text.split("\n\n") for _, n in _quotes(p)}


def test_an_empty_notebook_says_nothing_matches(store, embedder, settings):
    empty = store.create_notebook("Empty", embedder.name, embedder.dim)
    answer = ask_(store, embedder, empty, settings, "anything?")
    assert answer.passages == () and "Import documents" in answer.text
    assert chats.load_chat(store, answer.chat_id)[0].text == answer.text


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("一つ。二つ！三つ？", ["一つ。", "二つ！", "三つ？"]),
        ("Use e.g. this. Next one.", ["Use e.g. this.", "Next one."]),
        ("Head\n\nBody text.", ["Head", "Body text."]),
        ("List:\n- one\n- two", ["List:", "- one", "- two"]),
        ("He said “yes.” Then left.", ["He said “yes.”", "Then left."]),
        ("Space.[12] Next.", ["Space.[12]", "Next."]),
        ("wrapped\nline here.", ["wrapped\nline here."]),
    ],
)
def test_sentence_spans(text, sentences):
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


# --- written answers through the stand-in ---------------------------------------------------


def test_a_written_answer_streams_and_cites(store, embedder, notebook, settings, docs):
    pieces = []
    with OllamaStandIn(reply=WRITTEN) as server:
        llm = OllamaChat(server.url, 10)
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=llm,
            model="llama3.2",
            on_token=pieces.append,
        )
        (request,) = server.chats()
    assert "".join(pieces) == WRITTEN
    assert not answer.extractive and answer.model == "llama3.2" and answer.notice is None
    assert answer.text == "A gravity hill is an optical illusion [1]. The horizon is hidden [2]."
    assert answer.dropped_marks == 1
    assert [p.n for p in answer.citations] == [1, 2]
    prompt = request["messages"][-1]["content"]
    assert len(answer.passages) == 8 and "[9]" not in prompt
    assert all(f"[{p.n}] {p.title}\n" in prompt for p in answer.passages)
    assert all(not p.cited for p in answer.passages[2:])
    [saved] = chats.load_chat(store, answer.chat_id)
    assert saved.passages == answer.passages and saved.text == answer.text


def test_the_prompt_numbers_the_passages_with_titles(store, embedder, notebook, settings, docs):
    with OllamaStandIn(reply=WRITTEN) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model="llama3.2",
        )
        (request,) = server.chats()
    system, user = request["messages"]
    assert "only" in system["content"] and "[2]" in system["content"]
    assert "language of the question" in system["content"]
    for p in answer.passages:
        assert f"[{p.n}] {p.title}" in user["content"]
        assert p.text.strip() in user["content"]
    assert user["content"].endswith("Question: What is a gravity hill?")
    assert request["options"]["num_ctx"] == num_ctx_for(request["messages"])


def test_a_small_context_drops_the_lowest_passages_instead_of_truncating(
    store, embedder, notebook, settings, docs
):
    with OllamaStandIn(models={"tiny:latest": 2048}, reply="Short [1].") as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model="tiny",
        )
        (request,) = server.chats()
    assert 1 <= len(answer.passages) < 8
    assert request["options"]["num_ctx"] == 2048
    assert num_ctx_for(request["messages"]) <= 2048


def test_a_model_not_installed_falls_back_to_quotes_and_says_pull(
    store, embedder, notebook, settings, docs
):
    with OllamaStandIn(reply=WRITTEN) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model="mistral",
        )
    assert answer.extractive and answer.citations
    assert "ollama pull mistral" in answer.notice and "quoted" in answer.notice


def test_a_refused_connection_falls_back_to_quotes(store, embedder, notebook, settings, docs):
    llm = OllamaChat(f"http://127.0.0.1:{free_port()}", 5)
    answer = ask_(
        store, embedder, notebook, settings, "What is a gravity hill?", llm=llm, model="llama3.2"
    )
    assert answer.extractive and "ollama serve" in answer.notice


def test_a_dropped_stream_keeps_the_partial_answer_marked_incomplete(
    store, embedder, notebook, settings, docs
):
    with OllamaStandIn(reply=WRITTEN, drop_after=8) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model="llama3.2",
        )
    assert answer.incomplete and not answer.extractive
    assert answer.text == "A gravity hill is an optical illusion [1]."
    assert [p.n for p in answer.citations] == [1]
    assert "incomplete" in answer.notice
    [saved] = chats.load_chat(store, answer.chat_id)
    assert saved.incomplete and saved.text == answer.text


def test_stopping_from_the_token_callback_saves_the_partial_answer(
    store, embedder, notebook, settings, docs
):
    class Stop(Exception):
        pass

    def stop_after_three(piece, seen=[]):  # noqa: B006 - counts calls within this test
        seen.append(piece)
        if len(seen) == 3:
            raise Stop

    with OllamaStandIn(reply=WRITTEN) as server, pytest.raises(Stop):
        ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model="llama3.2",
            on_token=stop_after_three,
        )
    [chat] = chats.list_chats(store, notebook.id)
    [saved] = chats.load_chat(store, chat.id)
    assert saved.incomplete and saved.text == "A gravity hill"


# --- follow-ups -----------------------------------------------------------------------------


def test_a_follow_up_is_rewritten_into_a_standalone_query(
    store, embedder, notebook, settings, docs
):
    def reply(messages):
        if "standalone" in messages[0]["content"]:
            return "Why does the horizon matter for a gravity hill illusion?"
        return "Because the horizon is hidden [1]."

    first = ask_(store, embedder, notebook, settings, "What is a gravity hill?")
    with OllamaStandIn(reply=reply) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "Why does the horizon matter for it?",
            llm=OllamaChat(server.url, 10),
            model="llama3.2",
            chat_id=first.chat_id,
        )
        rewrite_request, answer_request = server.chats()
    assert "What is a gravity hill?" in rewrite_request["messages"][-1]["content"]
    assert rewrite_request["stream"] is False
    assert answer.chat_id == first.chat_id
    assert answer.passages[0].document_id == docs["gravity"]
    # the earlier turn goes to the model too, without its citation marks
    assert answer_request["messages"][1] == {"role": "user", "content": "What is a gravity hill?"}
    assert "[" not in answer_request["messages"][2]["content"]
    rewritten = "Why does the horizon matter for a gravity hill illusion?"
    assert answer.searched == ("Why does the horizon matter for it?", rewritten)
    loaded = chats.load_chat(store, first.chat_id)
    assert [a.question for a in loaded] == [
        "What is a gravity hill?",
        "Why does the horizon matter for it?",
    ]
    assert loaded[1].searched == answer.searched  # a reload still says what was searched


def _turn(question, text="Earlier answer [1]."):
    return Answer(question, text, None, True, False, ())


def test_without_a_model_a_follow_up_searches_with_the_previous_question():
    history = [_turn("What is a gravity hill?")]
    assert rewrite("And where?", history, None, None) == "What is a gravity hill? And where?"


def test_a_first_question_is_searched_as_it_is():
    assert rewrite("What is a gravity hill?", [], None, None) == "What is a gravity hill?"


def test_a_failed_rewrite_falls_back_to_the_question():
    llm = OllamaChat(f"http://127.0.0.1:{free_port()}", 5)
    history = [_turn("What is a gravity hill?")]
    assert rewrite("And where?", history, llm, "llama3.2") == "And where?"


def test_earlier_turns_reach_the_model_without_marks():
    messages = build_messages("Why?", [], [_turn("What?", "Because [1][2].")])
    assert messages[1:3] == [
        {"role": "user", "content": "What?"},
        {"role": "assistant", "content": "Because."},
    ]


# --- crash safety ---------------------------------------------------------------------------

KILLED_ASK = textwrap.dedent(
    """
    import sys
    from knownote.answer.ask import ask
    from knownote.index.embedders import get_embedder
    from knownote.answer.ollama_chat import OllamaChat
    from knownote.settings import Settings
    from knownote.store.db import Store

    db, url, notebook_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = Store.open(db)
    print("asking", flush=True)
    ask(store, get_embedder(), notebook_id, "What is a gravity hill?",
        llm=OllamaChat(url, 30), model="llama3.2", settings=Settings())
    """
)


def test_a_process_killed_mid_answer_leaves_the_question_and_no_broken_answer(
    store, embedder, notebook, settings, docs, db_path
):
    store.close()
    with OllamaStandIn(reply=WRITTEN * 20, delay=0.05) as server:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED_ASK, str(db_path), server.url, str(notebook.id)],
            env=env,
            cwd=Path(__file__).resolve().parents[2],
        )
        deadline = time.monotonic() + 120
        while not server.chats() and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)  # some of the answer has streamed
        assert child.poll() is None, "the answer finished before it could be interrupted"
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    reopened = Store.open(db_path)
    try:
        [chat] = chats.list_chats(reopened, notebook.id)
        [turn] = chats.load_chat(reopened, chat.id)
        assert turn.question == "What is a gravity hill?"
        assert turn.incomplete and turn.text == "" and turn.passages == ()
        assert "not answered" in turn.notice
    finally:
        reopened.close()


def test_a_search_that_cannot_run_saves_nothing(store, embedder, notebook, settings, docs):
    with pytest.raises(SearchError):
        ask_(store, embedder, notebook, settings, "What is a gravity hill?", mode="fuzzy")
    assert chats.list_chats(store, notebook.id) == []


def test_a_server_without_a_chosen_model_says_to_pull_one(
    store, embedder, notebook, settings, docs
):
    with OllamaStandIn(models={}) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "What is a gravity hill?",
            llm=OllamaChat(server.url, 10),
            model=None,
        )
        assert server.chats() == []
    assert answer.extractive and "ollama pull" in answer.notice


def test_an_empty_question_is_refused(store, embedder, notebook, settings):
    with pytest.raises(KnowNoteError, match="question"):
        ask_(store, embedder, notebook, settings, "   ")


def test_a_follow_up_with_a_missing_model_is_tried_once_then_quoted(
    store, embedder, notebook, settings, docs
):
    first = ask_(store, embedder, notebook, settings, "What is a gravity hill?")
    with OllamaStandIn(models={}) as server:
        answer = ask_(
            store,
            embedder,
            notebook,
            settings,
            "Why does the horizon matter?",
            llm=OllamaChat(server.url, 10),
            model="llama3.2",
            chat_id=first.chat_id,
        )
        assert len(server.chats()) == 1  # the rewrite failed; the answer was not tried again
    assert answer.extractive and "ollama pull llama3.2" in answer.notice
    assert answer.passages[0].document_id == docs["gravity"]


# --- questions in another language than the sources ----------------------------------------


def translating(messages):
    """The stand-in model: translates when asked to, answers otherwise."""
    if "Translate the user's question into English" in messages[0]["content"]:
        return "Why does a car seem to roll uphill on a gravity hill?"
    return "Weil der Horizont verdeckt ist [1]."


def test_a_question_in_another_language_is_also_searched_translated(
    store, embedder, notebook, settings, docs
):
    question = "Warum scheint ein Auto auf einem Schwerkrafthügel bergauf zu rollen?"
    with OllamaStandIn(reply=translating) as server:
        answer = ask_(
            store, embedder, notebook, settings, question,
            llm=OllamaChat(server.url, 10), model="llama3.2",
        )  # fmt: skip
        translate, _ = server.chats()
    assert translate["messages"][1] == {"role": "user", "content": question}
    translated = "Why does a car seem to roll uphill on a gravity hill?"
    assert answer.searched == (question, translated)
    # The suite's English model reads the German question poorly; the translation finds it.
    assert docs["gravity"] in {p.document_id for p in answer.passages}
    (saved,) = chats.load_chat(store, answer.chat_id)
    assert saved.searched == (question, translated)
    assert f"“{translated}”" in chats.export_markdown(store, answer.chat_id)


def test_a_reply_that_is_no_translation_is_not_searched(store, embedder, notebook, settings, docs):
    question = "Warum scheint ein Auto auf einem Schwerkrafthügel bergauf zu rollen?"
    # A small model restates the question in its own language, or answers it (in either).
    for reply in (
        "Warum rollt ein Auto bergauf auf einem Hügel?",
        "Das ist der Fall deutsch.",
        "The car seems to roll uphill because the horizon is hidden.",
    ):
        with OllamaStandIn(reply=lambda messages, reply=reply: reply) as server:
            answer = ask_(
                store, embedder, notebook, settings, question,
                llm=OllamaChat(server.url, 10), model="llama3.2",
            )  # fmt: skip
        assert answer.searched == (question,)


def test_a_reply_in_the_language_asked_for_is_kept_only_when_shaped_like_a_translation():
    question = "Wie viele Menschen sind im Jahr 1466 in Paris der Pest erlegen?"
    translated = "How many people died of the plague in Paris in 1466?"
    assert translation_in(f"“{translated}”\n", question, "en") == translated
    for reply in (
        "The Germans were defeated in 1468.",  # made up, no question
        "How many people died of the plague in Paris?",  # the year lost
        f"Good question. {translated}",  # more sentences than the question
        'In English: "How many people died of the plague in 1466?',  # a label, then its own
        f'The German question "{question}" asks how many people died in Paris?',  # about it
    ):
        assert translation_in(reply, question, "en") is None, reply
    # A question typed without its question mark may be translated with or without one.
    assert translation_in("What is DECnet", "Was ist DECnet", "en") == "What is DECnet"


def test_a_question_in_the_sources_language_or_with_translation_off_is_searched_as_asked(
    store, embedder, notebook, settings, docs
):
    for text, current in (
        ("Why does a car seem to roll uphill on a gravity hill?", settings),
        ("Warum scheint ein Auto bergauf zu rollen?", settings.with_(translate_questions=False)),
    ):
        with OllamaStandIn(reply=translating) as server:
            answer = ask_(
                store, embedder, notebook, current, text,
                llm=OllamaChat(server.url, 10), model="llama3.2",
            )  # fmt: skip
            assert len(server.chats()) == 1  # the answer only
        assert answer.searched == (text,)
