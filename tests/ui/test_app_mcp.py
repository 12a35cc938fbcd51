"""The app's own MCP server through AppTest: a port that is taken is said in words in the sidebar,
and the app keeps working."""

from __future__ import annotations

import socket

import pytest
from streamlit.testing.v1 import AppTest

from tests.ollama_standin import free_port
from tests.ui.test_app import APP, TIMEOUT


def test_a_taken_mcp_port_is_said_in_the_sidebar_and_the_app_keeps_working(
    tmp_path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("KNOWNOTE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("KNOWNOTE_MCP_PORT", str(taken.getsockname()[1]))
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    said = [c.value for c in at.sidebar.caption]
    assert any("The app serves no MCP" in c and "is taken" in c for c in said), said
    assert at.sidebar.button(key="create_notebook") is not None
