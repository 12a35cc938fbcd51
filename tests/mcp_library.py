"""For the tests of `knownote mcp` (tests/serve, the browser's link test): a data folder with a
real PDF and a Markdown page, built once per run (the `library` fixture); each test that starts a
server works on its own copy, since the server holds its database while it runs."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from knownote.pipeline.ingest import get_or_create_notebook, import_file
from knownote.settings import Settings
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.ollama_standin import free_port

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "Papers"
PDF = "docs/pdf/paper_naacl06_shinyama_2col.pdf"
PAGE = "docs/web_text/md_wikipedia_gravity_hill.md"
APP_URL = "http://notebook.example:8501"


@dataclass(frozen=True)
class Library:
    """The built folder, the notebook's id and each source's stored text, read before any server
    holds the database: every range a server returns is checked against these."""

    home: Path
    notebook_id: int
    pdf_id: int
    page_id: int
    texts: dict[int, str]

    def copy(self, folder: Path) -> Path:
        """A copy of the data folder in `folder`; its database file."""
        home = folder / "home"
        shutil.copytree(self.home, home)
        return home / "knownote.duckdb"


def build_library(folder: Path, embedder) -> Library:
    home = folder / "home"
    settings = Settings().with_(home=home)
    store = Store.open(settings.db_path)
    try:
        notebook = get_or_create_notebook(store, NOTEBOOK, settings)
        ids = []
        for relative in (PDF, PAGE):
            path = corpus_file(relative)
            result = import_file(
                store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
            )
            assert result.status == "imported", result.error
            ids.append(result.document_id)
        texts = {i: store.document_text(i) for i in ids}
    finally:
        store.close()
    return Library(home, notebook.id, ids[0], ids[1], texts)


def server_env(**extra: str) -> dict[str, str]:
    """What a `knownote mcp` child needs: this worktree's code, the test model and its cache,
    no answer server unless given, and links to APP_URL."""
    env = {
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "KNOWNOTE_MODEL_CACHE": os.environ["KNOWNOTE_MODEL_CACHE"],
        "KNOWNOTE_EMBEDDING_MODEL": os.environ["KNOWNOTE_EMBEDDING_MODEL"],
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        "KNOWNOTE_APP_URL": APP_URL,
        "KNOWNOTE_PASSWORD": "",
    }
    env.update(extra)
    return env


def mcp_command(db: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "knownote.cli", "--db", str(db), "mcp", *options]


def assert_resolves(record: dict, texts: dict[int, str]) -> None:
    """The record's range holds exactly its text in the stored text of its source."""
    text = texts[record["document_id"]]
    assert text[record["start"] : record["end"]] == record["text"]
