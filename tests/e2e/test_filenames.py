"""Hostile file names: folders, absolute paths, NUL and control characters, bidi overrides and
thousands of characters never escape the data folder, and come back as short, plain labels in
the store, the command line and the app."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from knownote.cli import main
from knownote.pipeline.ingest import clean_filename, import_file
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Store
from tests.ui.test_app import settle

ROOT = Path(__file__).resolve().parents[2]

# name given by the uploader -> the label KnowNote shows
NAMES = {
    "../../escape-up.txt": "escape-up.txt",
    "/etc/absolute.txt": "absolute.txt",
    "C:\\Windows\\System32\\drive.txt": "drive.txt",
    "..\\..\\backslashes.txt": "backslashes.txt",
    "nul\x00byte.txt": "nulbyte.txt",
    "ctrl\x1b[31mred\x07\r\n.txt": "ctrl[31mred.txt",
    "invoice\u202etxt.exe": "invoicetxt.exe",
    "zero\u200bwidth\u2066isolate\u2069.txt": "zerowidthisolate.txt",
    "..": "untitled",
    "folder/..": "untitled",
    "x" * 5000 + ".txt": "x" * 150 + "…" + "x" * 36 + ".txt",
}


def plain(label: str) -> bool:
    return (
        0 < len(label) <= 200
        and "/" not in label
        and "\\" not in label
        and not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in label)
    )


@pytest.mark.parametrize(("name", "label"), NAMES.items())
def test_clean_filename(name: str, label: str):
    assert clean_filename(name) == label
    assert plain(label)


def everything_under(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


def test_hostile_names_stay_inside_the_data_folder(tmp_path: Path, store, embedder, settings):
    outside_before = everything_under(tmp_path.parent)
    notebook = store.create_notebook("Names", embedder.name, embedder.dim)
    results = [
        import_file(
            store,
            notebook,
            name,
            f"Document number {i} has its own text.".encode(),
            settings=settings,
            embedder=embedder,
        )
        for i, name in enumerate(NAMES)
    ]
    assert [r.status for r in results] == ["imported"] * len(NAMES)
    assert [r.file for r in results] == list(NAMES.values())

    documents = store.documents(notebook.id)
    assert sorted(d.filename for d in documents) == sorted(NAMES.values())
    assert all(plain(d.title) and plain(d.filename) for d in documents)
    # Every new path is under the data folder, and the originals are named by their hash.
    new = everything_under(tmp_path.parent) - outside_before
    home = settings.home.relative_to(tmp_path.parent)
    assert all(path.is_relative_to(home) for path in new), new
    kept = sorted(p.name for p in store.files_dir.iterdir())
    assert kept == sorted(d.sha256 for d in documents)
    assert not (tmp_path.parent / "escape-up.txt").exists()
    assert not Path("/etc/absolute.txt").exists()


def test_the_command_line_imports_and_lists_odd_names_plainly(tmp_path: Path, capsys, db_path):
    folder = tmp_path / "files"
    folder.mkdir()
    on_disk = {
        "ctrl\x1b[31mred\x07.txt": "ctrl[31mred.txt",
        "invoice\u202etxt.exe": "invoicetxt.exe",
        "y" * 240 + ".txt": "y" * 150 + "…" + "y" * 36 + ".txt",
    }
    paths = []
    for i, name in enumerate(on_disk):
        path = folder / name
        path.write_text(f"File {i} on disk with a name that is hard to print.")
        paths.append(str(path))
    code = main(["--db", str(db_path), "import", "Disk", *paths])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert main(["--db", str(db_path), "show", "1"]) == 0
    out += capsys.readouterr().out
    for label in on_disk.values():
        assert label in out + err
    assert "\x1b" not in out + err and "\u202e" not in out + err and "\x07" not in out + err
    assert sorted(os.listdir(folder)) == sorted(on_disk)  # the originals were only read


def test_the_app_lists_odd_names_as_plain_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KNOWNOTE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.text_input(key="new_notebook_name").set_value("Names").run()
    at.button(key="create_notebook").click().run()
    upload = [
        (name, f"Uploaded file {i} with its own text.".encode(), "text/plain")
        for i, name in enumerate(NAMES)
    ]
    at.file_uploader(key=f"upload_{at.session_state['upload_round']}").set_value(upload).run()
    assert not at.exception
    settle(at)  # the import queue's worker imports them in the background
    shown = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    for label in NAMES.values():
        assert f"✓ {escape_markdown(label)}: 1 passage" in shown
        assert f"**{escape_markdown(label)}**" in shown  # the sources list
    store = Store.open(tmp_path / "home" / "knownote.duckdb")
    assert len(store.documents(store.notebooks()[0].id)) == len(NAMES)
