"""The app with an OpenAI-compatible server (tests/openai_standin.py) beside Ollama's
(tests/ollama_standin.py): one picker, each model labelled with its server, the key from the
Streamlit secrets never shown."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.ollama_standin import OllamaStandIn
from tests.openai_standin import OpenAIStandIn
from tests.ui.test_app import APP, TIMEOUT


@pytest.fixture
def servers(tmp_path, monkeypatch):
    with (
        OllamaStandIn(models={"llama3.2:latest": 8192}) as ollama,
        OpenAIStandIn(models=("qwen-local",)) as other,
    ):
        monkeypatch.setenv("KNOWNOTE_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        monkeypatch.delenv("KNOWNOTE_OPENAI_BASE_URL", raising=False)
        monkeypatch.delenv("KNOWNOTE_OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
        yield ollama, other


def test_the_picker_lists_both_servers_with_the_key_from_secrets(servers):
    _, other = servers
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["KNOWNOTE_OPENAI_BASE_URL"] = other.url
    at.secrets["KNOWNOTE_OPENAI_API_KEY"] = "sk-from-secrets"
    at.run()
    assert not at.exception
    picker = at.selectbox(key="model")
    assert picker.options == ["llama3.2:latest · Ollama", "qwen-local · OpenAI-compatible server"]
    assert any(h.get("authorization") == "Bearer sk-from-secrets" for _, _, h in other.requests)
    shown = "\n".join(str(e.value) for e in [*at.caption, *at.markdown] if hasattr(e, "value"))
    assert other.url in shown
    assert "sk-from-secrets" not in shown
