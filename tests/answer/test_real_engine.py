"""Answers from a real inference engine: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct (tests/llama_server.py), through the `knownote` command as a user runs it.

A 135M model answers badly, and that is the point: whatever it writes (no marks, marks out of
range, another language, a loop) must come out as a saved, bounded, honestly labelled answer
whose citations are exact passages.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from knownote.cli import main
from knownote.index.embed_server import ServerEmbedder
from knownote.measure.retrieval import load_squad
from knownote.settings import Settings
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.llama_server import CHAT_MODEL, CONTEXT, EMBED_MODEL
from tests.ollama_standin import free_port

pytestmark = pytest.mark.engine
MAX_TOKENS = 48


@pytest.fixture
def engine_env(llama_server, tmp_path: Path, monkeypatch) -> Path:
    """Settings (through the environment, as a user sets them) that reach only the engine."""
    monkeypatch.setenv("KNOWNOTE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # no Ollama here
    monkeypatch.setenv("KNOWNOTE_OPENAI_BASE_URL", llama_server.url)
    monkeypatch.setenv("KNOWNOTE_OPENAI_API_KEY", "sk-test-key-never-stored")
    monkeypatch.setenv("KNOWNOTE_OPENAI_CONTEXT", str(CONTEXT))
    monkeypatch.setenv("KNOWNOTE_MAX_ANSWER_TOKENS", str(MAX_TOKENS))
    return tmp_path


def write_contexts(folder: Path, dataset: str, count: int) -> list[Path]:
    data = load_squad(corpus_file(dataset), max_questions=40)
    paths = []
    for i, context in enumerate(data.contexts[:count]):
        path = folder / f"context-{i}.txt"
        path.write_text(context.text, encoding="utf-8")
        paths.append(path)
    return paths


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ask_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "ask", *argv, "--json")
    answer = json.loads(out)
    assert code == (1 if answer["incomplete"] else 0), err
    return answer


def check_answer(answer: dict, k: int) -> None:
    """What holds whatever the model wrote."""
    assert answer["model"] == f"openai:{CHAT_MODEL}"
    assert not answer["extractive"]
    assert len(answer["answer"]) < MAX_TOKENS * 12  # bounded by max_tokens
    assert 1 <= len(answer["passages"]) <= k
    numbers = [p["n"] for p in answer["passages"]]
    assert numbers == list(range(1, len(numbers) + 1))
    for citation in answer["citations"]:
        assert 1 <= citation["n"] <= len(numbers)
    if not answer["citations"] and answer["answer"] and not answer["incomplete"]:
        assert "cited none of the passages" in answer["notice"]
    if answer["incomplete"]:
        assert answer["notice"]


def check_stored(db: Path) -> None:
    """Every stored citation is an exact passage of its document; the key is nowhere."""
    store = Store.open(db)
    try:
        rows = store.db.execute("SELECT id FROM chats").fetchall()
        assert rows
        dump = json.dumps(store.db.execute("SELECT * FROM messages").fetchall(), default=str)
        assert "sk-test-key-never-stored" not in dump
    finally:
        store.close()
    assert b"sk-test-key-never-stored" not in db.read_bytes()


def test_ask_streams_a_written_answer_then_a_follow_up_and_an_export(engine_env, capsys):
    files = write_contexts(engine_env, "qa_en/xquad.en.json", 3)
    code, _, err = run(capsys, "import", "wiki", *map(str, files))
    assert code == 0, err

    code, out, err = run(capsys, "ask", "wiki", "Who won Super Bowl 50?", "-k", "3")
    assert f"answering with openai:{CHAT_MODEL}" in err
    assert "saved in chat 1" in err
    assert out.strip()  # the pieces were written as they arrived

    first = ask_json(capsys, "wiki", "Which team did the Broncos defeat?", "-k", "3")
    check_answer(first, 3)
    chat = str(first["chat_id"])
    follow = ask_json(capsys, "wiki", "Where was it played?", "-k", "3", "--chat", chat)
    check_answer(follow, 3)
    assert follow["chat_id"] == first["chat_id"]
    assert follow["searched"][0] == "Where was it played?"  # the question is always searched

    code, markdown, _ = run(capsys, "export", chat)
    assert code == 0
    assert "Which team did the Broncos defeat?" in markdown
    assert "Where was it played?" in markdown
    assert follow["answer"].split("[")[0].strip()[:20] in markdown
    check_stored(Settings().db_path)


def test_a_question_in_chinese_gets_a_saved_answer_with_exact_citations(engine_env, capsys):
    files = write_contexts(engine_env, "qa_zh/cmrc2018_dev.json", 2)
    assert run(capsys, "import", "zh", *map(str, files))[0] == 0
    data = load_squad(corpus_file("qa_zh/cmrc2018_dev.json"), max_questions=1)
    answer = ask_json(capsys, "zh", data.questions[0].text, "-k", "4")
    check_answer(answer, 4)
    store = Store.open(Settings().db_path)
    try:
        for p in answer["passages"]:
            assert store.document_text(p["document_id"])[p["start"] : p["end"]] == p["text"]
    finally:
        store.close()


def test_embeddings_through_v1_embeddings(llama_server, settings):
    embedder = ServerEmbedder(
        f"openai:{EMBED_MODEL}", settings.with_(openai_base_url=llama_server.url)
    )
    vectors = embedder.embed_passages(["The cat sat on the mat.", "猫がマットに座った。"])
    assert vectors.shape == (2, embedder.dim) and embedder.dim == 576
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.allclose(embedder.embed_query("The cat sat on the mat."), vectors[0], atol=1e-3)


def test_a_notebook_embedded_by_the_server_records_it_and_searches(engine_env, capsys, monkeypatch):
    monkeypatch.setenv("KNOWNOTE_EMBEDDING_MODEL", f"openai:{EMBED_MODEL}")
    files = write_contexts(engine_env, "qa_en/xquad.en.json", 2)
    assert run(capsys, "import", "served", *map(str, files))[0] == 0
    code, out, _ = run(capsys, "notebooks", "--json")
    (notebook,) = json.loads(out)
    assert notebook["embedding_model"] == f"openai:{EMBED_MODEL}"
    assert notebook["embedding_dim"] == 576
    code, out, err = run(capsys, "search", "served", "Super Bowl", "--mode", "vector", "--json")
    assert code == 0 and json.loads(out)
    assert "keywords only" not in err
