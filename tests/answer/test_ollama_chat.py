"""The real `ollama` client against tests/ollama_standin.py, an HTTP server that stands in for an
Ollama server (none can be installed where these tests run) and follows Ollama's documented API.
"""

import pytest

from knownote.answer.ollama_chat import OllamaChat, connect, estimate_tokens, num_ctx_for
from knownote.errors import (
    LLMTimeout,
    LLMUnavailable,
    ModelError,
    ModelNotInstalled,
    StreamInterrupted,
)
from tests.ollama_standin import OllamaStandIn, free_port

HELLO = [{"role": "user", "content": "hello"}]
REPLY = "Gravity hills are optical illusions [1]. Cars seem to roll uphill [1][2]."


def collect(chat: OllamaChat, model: str = "llama3.2") -> tuple[str, Exception | None]:
    received = []
    try:
        for piece in chat.stream(model, HELLO, 2048):
            received.append(piece)
    except ModelError as e:
        return "".join(received), e
    return "".join(received), None


def test_models_lists_the_installed_models():
    with OllamaStandIn(models={"qwen2.5:7b": 32768, "llama3.2:latest": 131072}) as server:
        assert OllamaChat(server.url, 5).models() == ["llama3.2:latest", "qwen2.5:7b"]


def test_stream_yields_the_answer_in_pieces():
    with OllamaStandIn(reply=REPLY) as server:
        pieces = list(OllamaChat(server.url, 5).stream("llama3.2", HELLO, 4096))
    assert len(pieces) > 3
    assert "".join(pieces) == REPLY


def test_stream_sends_num_ctx_and_the_messages():
    with OllamaStandIn(reply="ok") as server:
        list(OllamaChat(server.url, 5).stream("llama3.2", HELLO, 6144))
        (body,) = server.chats()
    assert body["options"]["num_ctx"] == 6144
    assert body["messages"] == HELLO
    assert body["stream"] is True


def test_a_model_that_is_not_installed_says_how_to_pull_it():
    with OllamaStandIn(models={"llama3.2:latest": 8192}, reply="x") as server:
        text, error = collect(OllamaChat(server.url, 5), model="mistral")
    assert text == ""
    assert isinstance(error, ModelNotInstalled)
    assert "ollama pull mistral" in str(error)


def test_a_refused_connection_says_how_to_start_ollama():
    chat = OllamaChat(f"http://127.0.0.1:{free_port()}", 5)
    with pytest.raises(LLMUnavailable, match="ollama serve"):
        chat.models()
    text, error = collect(chat)
    assert text == ""
    assert isinstance(error, LLMUnavailable)
    assert "ollama serve" in str(error)


def test_a_stream_dropped_halfway_keeps_the_first_half():
    with OllamaStandIn(reply=REPLY, drop_after=4) as server:
        text, error = collect(OllamaChat(server.url, 5))
    assert isinstance(error, StreamInterrupted)
    assert text == "Gravity hills are optical"


def test_an_error_line_mid_stream_is_an_interruption():
    with OllamaStandIn(reply=REPLY, error_after=2) as server:
        text, error = collect(OllamaChat(server.url, 5))
    assert isinstance(error, StreamInterrupted)
    assert text == "Gravity hills"


def test_an_answer_cut_at_the_length_limit_is_an_interruption():
    with OllamaStandIn(reply=REPLY, done_reason="length") as server:
        text, error = collect(OllamaChat(server.url, 5))
    assert text == REPLY
    assert isinstance(error, StreamInterrupted)


def test_a_model_slower_than_the_timeout_times_out():
    with OllamaStandIn(reply="slow", delay=1.0) as server:
        text, error = collect(OllamaChat(server.url, 0.3))
    assert text == ""
    assert isinstance(error, LLMTimeout)
    assert "ollama_timeout" in str(error)


def test_complete_returns_the_whole_reply():
    with OllamaStandIn(reply="gravity hill illusion") as server:
        assert OllamaChat(server.url, 5).complete("llama3.2", HELLO, 2048) == (
            "gravity hill illusion"
        )
        assert server.chats()[0]["stream"] is False


def test_context_length_comes_from_show():
    with OllamaStandIn(models={"llama3.2:latest": 8192}) as server:
        chat = OllamaChat(server.url, 5)
        assert chat.context_length("llama3.2") == 8192
        assert chat.context_length("absent") is None


def test_connect_without_a_server_gives_a_status_line(settings):
    client, models, status = connect(settings.with_(ollama_host=f"http://127.0.0.1:{free_port()}"))
    assert (client, models) == (None, [])
    assert "ollama serve" in status


def test_connect_to_a_server_without_models_says_to_pull_one(settings):
    with OllamaStandIn(models={}) as server:
        client, models, status = connect(settings.with_(ollama_host=server.url))
    assert client is not None and models == []
    assert "ollama pull" in status


def test_connect_lists_models(settings):
    with OllamaStandIn() as server:
        client, models, status = connect(settings.with_(ollama_host=server.url))
    assert client is not None and models == ["llama3.2:latest"] and status is None


def test_tokens_are_estimated_per_cjk_character_and_per_three_latin():
    assert estimate_tokens("abcdef") == 2
    assert estimate_tokens("分布式训练") == 5
    assert estimate_tokens("") == 0


def test_num_ctx_is_at_least_2048_and_a_multiple_of_1024():
    assert num_ctx_for([{"role": "user", "content": "hi"}]) == 2048
    size = num_ctx_for([{"role": "user", "content": "x" * 30_000}])
    assert size % 1024 == 0 and size >= 10_000 + 1024


def test_num_ctx_is_capped_at_the_model_context():
    assert num_ctx_for([{"role": "user", "content": "漢" * 50_000}], limit=32768) == 32768
