"""The real `openai` client against tests/openai_standin.py, for the failures a real engine will
not stage (a dropped connection, error bodies, /props); the real engine's own tests are in
test_real_engine.py."""

import pytest

from knownote.answer.ollama_chat import MIN_CONTEXT
from knownote.answer.openai_chat import OpenAIChat
from knownote.answer.servers import AnswerServers, connect
from knownote.errors import LLMUnavailable, ModelError, ModelNotInstalled, StreamInterrupted
from tests.ollama_standin import OllamaStandIn, free_port
from tests.openai_standin import OpenAIStandIn

HELLO = [{"role": "user", "content": "hello"}]
REPLY = "Gravity hills are optical illusions [1]. Cars seem to roll uphill [1][2]."


def collect(chat: OpenAIChat, model: str = "tiny") -> tuple[str, Exception | None]:
    received = []
    try:
        for piece in chat.stream(model, HELLO, 2048):
            received.append(piece)
    except ModelError as e:
        return "".join(received), e
    return "".join(received), None


def test_models_come_from_v1_models():
    with OpenAIStandIn(models=("b-model", "a-model")) as server:
        assert OpenAIChat(server.url).models() == ["a-model", "b-model"]


def test_stream_yields_the_answer_and_bounds_its_length():
    with OpenAIStandIn(reply=REPLY) as server:
        chat = OpenAIChat(server.url, max_tokens=100)
        text, error = collect(chat)
        (body,) = [b for path, b, _ in server.requests if path.endswith("/chat/completions")]
    assert (text, error) == (REPLY, None)
    assert body["stream"] is True
    assert body["max_tokens"] == 100
    assert body["messages"] == HELLO


def test_the_api_key_goes_to_the_server_only_as_a_header():
    with OpenAIStandIn(reply="ok") as server:
        chat = OpenAIChat(server.url, api_key="sk-secret-123")
        collect(chat)
        headers = [h for _, _, h in server.requests]
    assert headers
    assert all(h.get("authorization") == "Bearer sk-secret-123" for h in headers)


def test_a_dropped_connection_keeps_what_arrived():
    with OpenAIStandIn(reply=REPLY, drop_after=3) as server:
        text, error = collect(OpenAIChat(server.url))
    assert text and REPLY.startswith(text)
    assert isinstance(error, StreamInterrupted)
    assert "dropped" in str(error)


def test_an_error_event_mid_stream_keeps_what_arrived():
    with OpenAIStandIn(reply=REPLY, error_after=2) as server:
        text, error = collect(OpenAIChat(server.url))
    assert text
    assert isinstance(error, StreamInterrupted)
    assert "the model crashed" in str(error)


def test_the_length_limit_marks_the_answer_cut():
    with OpenAIStandIn(reply=REPLY, finish_reason="length") as server:
        text, error = collect(OpenAIChat(server.url))
    assert text == REPLY
    assert isinstance(error, StreamInterrupted)
    assert "length limit" in str(error)


def test_an_unknown_model_says_to_choose_a_listed_one():
    with OpenAIStandIn(reply="x") as server:
        text, error = collect(OpenAIChat(server.url), model="mistral")
    assert text == ""
    assert isinstance(error, ModelNotInstalled)
    assert "mistral" in str(error)


def test_an_http_error_body_is_shown():
    body = {"error": {"message": "context overflow: 5000 tokens > 4096", "type": "invalid"}}
    with OpenAIStandIn(status=500, body=body) as server:
        text, error = collect(OpenAIChat(server.url))
    assert text == ""
    assert type(error) is ModelError
    assert "context overflow: 5000 tokens > 4096" in str(error)


def test_a_refused_api_key_names_the_setting_not_the_key():
    with OpenAIStandIn(status=401, body={"error": {"message": "invalid key"}}) as server:
        _, error = collect(OpenAIChat(server.url, api_key="sk-secret-123"))
    assert "KNOWNOTE_OPENAI_API_KEY" in str(error)
    assert "sk-secret-123" not in str(error)


def test_a_server_that_is_down_says_how_to_start_one():
    chat = OpenAIChat(f"http://127.0.0.1:{free_port()}/v1", timeout=5)
    text, error = collect(chat)
    assert text == ""
    assert isinstance(error, LLMUnavailable)
    assert "KNOWNOTE_OPENAI_BASE_URL" in str(error)


def test_context_from_llama_cpp_props_else_the_setting_else_the_minimum():
    with OpenAIStandIn(n_ctx=8192) as server:
        assert OpenAIChat(server.url).context_length("tiny") == 8192
        assert OpenAIChat(server.url, context=3000).context_length("tiny") == 3000
    with OpenAIStandIn() as server:
        assert OpenAIChat(server.url).context_length("tiny") == MIN_CONTEXT


def test_the_answer_room_shrinks_to_fit_the_context():
    with OpenAIStandIn(reply="ok") as server:
        chat = OpenAIChat(server.url, max_tokens=1000)
        long = [{"role": "user", "content": "word " * 2400}]  # ~4000 estimated tokens
        list(chat.stream("tiny", long, 4096))
        body = server.requests[-1][1]
    assert 64 <= body["max_tokens"] < 1000


def test_connect_lists_both_servers_models_labelled(settings):
    with OllamaStandIn(models={"llama3.2:latest": 8192}) as ollama, OpenAIStandIn() as other:
        servers, models, status = connect(
            settings.with_(ollama_host=ollama.url, openai_base_url=other.url)
        )
    assert isinstance(servers, AnswerServers)
    assert models == ["llama3.2:latest", "openai:tiny"]
    assert status is None
    assert servers.label("openai:tiny") == "tiny · OpenAI-compatible server"
    assert servers.label("llama3.2:latest") == "llama3.2:latest · Ollama"


def test_connect_with_only_the_openai_server_up(settings):
    with OpenAIStandIn(reply=REPLY) as other:
        servers, models, status = connect(
            settings.with_(ollama_host=f"http://127.0.0.1:{free_port()}", openai_base_url=other.url)
        )
        assert (models, status) == (["openai:tiny"], None)
        assert "".join(servers.stream("openai:tiny", HELLO, 2048)) == REPLY


def test_connect_says_when_no_server_answers(settings):
    down = f"http://127.0.0.1:{free_port()}"
    servers, models, status = connect(
        settings.with_(ollama_host=down, openai_base_url=down + "/v1")
    )
    assert (servers, models) == (None, [])
    assert "Ollama" in status and "OpenAI-compatible" in status


def test_the_key_is_not_in_the_settings_repr(settings):
    assert "sk-secret-123" not in repr(settings.with_(openai_api_key="sk-secret-123"))


def test_a_busy_server_is_told_apart_from_one_that_is_down():
    with OpenAIStandIn(models_delay=7) as server, pytest.raises(LLMUnavailable, match="busy"):
        OpenAIChat(server.url).models()


def test_connect_keeps_ollama_when_the_openai_server_is_down(settings):
    with OllamaStandIn(models={"llama3.2:latest": 8192}) as ollama:
        servers, models, status = connect(
            settings.with_(
                ollama_host=ollama.url, openai_base_url=f"http://127.0.0.1:{free_port()}/v1"
            )
        )
    assert servers.openai is None and models == ["llama3.2:latest"]
    assert "No OpenAI-compatible server answers" in status


def test_prompts_for_these_servers_are_counted_so_they_never_overflow():
    from knownote.answer.openai_chat import upper_tokens

    assert upper_tokens("检索增强生成") == 18  # three UTF-8 bytes each: a byte-level worst case
    assert upper_tokens("dense passage retrieval") == 8  # a third of the ASCII characters
    # SmolLM2's tokenizer spends 724 tokens on a 417-character cmrc2018 context; Ollama's
    # estimate said 399 and llama.cpp refused the prompt.
    assert upper_tokens("中" * 417) >= 724
