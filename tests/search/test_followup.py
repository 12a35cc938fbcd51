"""The search behind a follow-up: the question as asked, fused with a related rewrite."""

import pytest

from knownote.index.embed_server import ServerEmbedder
from knownote.pipeline.ingest import import_file
from knownote.search.followup import fuse_hits, queries_for, related, search_queries
from knownote.search.retrieve import Hit
from tests.ollama_standin import free_port


def hit(pid: int) -> Hit:
    return Hit(pid, 1, "t", pid, 0, 1, None, None, 0.0, "x")


def test_a_rewrite_sharing_a_word_with_the_chat_is_kept():
    assert related("When was the Eiffel tower built", "When was it built?", ["Eiffel tower"])


def test_a_canned_answer_in_another_language_is_dropped():
    rewrite = "I'm sorry, but I can't help with that."
    assert not related(rewrite, "RAGとは何ですか？", ["What is gravity?"])
    assert queries_for("RAGとは何ですか？", rewrite, ["What is gravity?"]) == ("RAGとは何ですか？",)


def test_cjk_bigrams_count_as_shared_words():
    assert related("检索增强生成的定义", "它是什么？", ["检索增强生成"])


def test_the_question_is_always_searched_first():
    assert queries_for("when?", "when was the tower built", ["the tower"]) == (
        "when?",
        "when was the tower built",
    )
    assert queries_for("when?", "when?", []) == ("when?",)
    assert queries_for("when?", None, []) == ("when?",)


def test_fusion_keeps_what_both_rankings_agree_on_first():
    fused = fuse_hits([[hit(1), hit(2), hit(3)], [hit(4), hit(2), hit(1)]], 3)
    assert [h.passage_id for h in fused] == [1, 2, 4]
    assert len(fused) == 3


def test_a_tie_goes_to_the_question_ranking():
    fused = fuse_hits([[hit(1)], [hit(2)]], 2)
    assert [h.passage_id for h in fused] == [1, 2]


@pytest.fixture
def server_notebook(store, embedder, settings):
    """A notebook whose passages were embedded, recorded as served by a server now down."""
    nb = store.create_notebook("served", embedder.name, embedder.dim)
    text = "Gravity hills are optical illusions.\n\nThe Eiffel tower was built in 1889.\n"
    import_file(store, nb, "notes.txt", text.encode(), settings=settings, embedder=embedder)
    return nb


def test_an_embedding_server_that_is_down_falls_back_to_keywords(store, server_notebook, settings):
    down = ServerEmbedder(
        "ollama:bge-m3", settings.with_(ollama_host=f"http://127.0.0.1:{free_port()}")
    )
    found = search_queries(
        store, down, server_notebook.id, ["Eiffel tower"], k=3, mode="hybrid", document_ids=None
    )
    assert found.hits and "Eiffel" in found.hits[0].text
    assert "does not answer" in found.note and "keywords only" in found.note


def test_an_answer_while_the_embedding_server_is_down_quotes_keyword_hits(
    store, server_notebook, settings
):
    from knownote.answer.ask import ask

    down = ServerEmbedder(
        "openai:bge-m3", settings.with_(openai_base_url=f"http://127.0.0.1:{free_port()}/v1")
    )
    answer = ask(store, down, server_notebook.id, "When was the Eiffel tower built?", llm=None,
                 model=None, settings=settings, k=3)  # fmt: skip
    assert "1889" in answer.text and answer.extractive
    assert "does not answer" in answer.notice and "keywords only" in answer.notice
