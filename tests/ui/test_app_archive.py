"""The app's download of a notebook archive: made on request, handed to this session only."""

from __future__ import annotations

import io
import json
import zipfile

from knownote.ui.download import unpack
from tests.ui.test_app import home, start  # noqa: F401  (the fixture and the app runner)


def saved_file(at) -> tuple[dict[str, str], bytes]:
    """The one file this run handed to the page: the save component's bytes, never a URL."""
    (element,) = at.get("bidi_component")
    assert element.proto.component_name == "knownote.save_file"
    return unpack(element.proto.bytes)


def test_prepare_and_download_a_notebook_archive(home):  # noqa: F811
    from knownote.cli import main

    path = home / "notes.md"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text("# Notes\n\nDense retrieval encodes passages as vectors.\n")
    assert main(["--db", str(home / "knownote.duckdb"), "import", "Notes", str(path)]) == 0
    at = start(home)
    assert at.get("bidi_component") == []
    at.button(key="prepare_archive").click().run()
    assert not at.exception
    assert at.get("download_button") == []
    head, data = saved_file(at)
    assert head["name"] == "Notes.knownote" and head["mime"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["notebook"]["name"] == "Notes"
    assert manifest["rows"]["documents"] == 1
    at.run()  # handed over once: the next run sends nothing and keeps nothing
    assert at.get("bidi_component") == []
    assert "download_pending" not in at.session_state
