"""The Overview view through AppTest: each source quoted by its central sentences."""

from __future__ import annotations

from pathlib import Path

from tests.test_app import NOTES, all_html, create_notebook, home, settle, start, texts

__all__ = ["home"]  # the fixture


def test_the_overview_quotes_each_source(home: Path):
    at = create_notebook(start(home))
    key = f"upload_{at.session_state['upload_round']}"
    at.file_uploader(key=key).set_value([("notes.txt", NOTES.encode(), "text/plain")]).run()
    settle(at)
    at.radio(key="view").set_value("Overview").run()
    assert not at.exception
    assert "Quotes, not a summary." in texts(at)
    html = all_html(at)
    assert 'class="kn-quote"' in html and "“Dense passage retrieval encodes" in html
