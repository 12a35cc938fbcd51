"""Links that open a range (`?notebook=…&source=…&start=…&end=…`) through AppTest: the range
marked exactly, and a link that cannot be followed said in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from knownote.pipeline.ingest import get_or_create_notebook, import_file
from knownote.settings import Settings
from knownote.store.db import Store
from tests.ollama_standin import free_port
from tests.ui.test_app import APP, TIMEOUT

TEXT = "# Herons\n\nThe grey heron nests by the eastern reed bed every spring.\n"


@pytest.fixture
def linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder) -> tuple[int, int, str]:
    """A data folder with one notebook and one source: (notebook id, source id, its text)."""
    home = tmp_path / "home"
    monkeypatch.setenv("KNOWNOTE_HOME", str(home))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
    settings = Settings()
    store = Store.open(settings.db_path)
    try:
        notebook = get_or_create_notebook(store, "Birds", settings)
        result = import_file(
            store, notebook, "herons.md", TEXT.encode(), settings=settings, embedder=embedder
        )
        text = store.document_text(result.document_id)
    finally:
        store.close()
    return notebook.id, result.document_id, text


def open_link(**params: object) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({name: str(value) for name, value in params.items()})
    at.run()
    assert not at.exception
    return at


def shown_html(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def test_a_link_marks_exactly_its_range(linked):
    notebook_id, source_id, text = linked
    start = text.index("grey heron")
    at = open_link(notebook=notebook_id, source=source_id, start=start, end=start + 10)
    assert f"<mark>{text[start : start + 10]}</mark>" in shown_html(at)
    assert f'data-start="{start}" data-end="{start + 10}"' in shown_html(at)
    # The Sources view, not the Chat a notebook with sources opens on, with the source listed.
    assert at.radio(key="view").value == "Sources"
    assert at.toggle(key=f"show_text_{source_id}") is not None


def test_a_range_past_the_end_is_said_in_words(linked):
    notebook_id, source_id, text = linked
    at = open_link(notebook=notebook_id, source=source_id, start=0, end=len(text) + 5)
    [warning] = at.warning
    assert "This link cannot be opened" in warning.value and "runs past the end" in warning.value
    assert "<mark>" not in shown_html(at)


def test_a_link_to_a_deleted_notebook_or_a_garbled_link_is_said_in_words(linked):
    _, source_id, _ = linked
    at = open_link(notebook=99, source=source_id, start=0, end=5)
    assert "may have been deleted" in at.warning[0].value
    at = open_link(notebook="one", source=source_id)
    assert "does not name a range" in at.warning[0].value
