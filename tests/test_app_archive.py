"""The app's download of a notebook archive: prepared on request, for this session only."""

from __future__ import annotations

import io
import json
import zipfile

from tests.test_app import home, start  # noqa: F401  (the fixture and the app runner)


def test_prepare_and_download_a_notebook_archive(home):  # noqa: F811
    from knownote.cli import main

    path = home / "notes.md"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text("# Notes\n\nDense retrieval encodes passages as vectors.\n")
    assert main(["--db", str(home / "knownote.duckdb"), "import", "Notes", str(path)]) == 0
    at = start(home)
    at.button(key="prepare_archive").click().run()
    assert not at.exception
    (button,) = at.get("download_button")
    data = at.session_state["archive_ready"][1]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["notebook"]["name"] == "Notes"
    assert manifest["rows"]["documents"] == 1
    assert button is not None
