"""Shared fixtures: a fresh database file in a temp folder, the real small embedding model."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# One ONNX copy of the packaged model for the whole run and the processes tests start, whatever
# data folder each of them uses (it is made on first use: ~15 s).
os.environ.setdefault(
    "KNOWNOTE_MODEL_CACHE", str(Path(tempfile.gettempdir()) / "knownote-test-models")
)

# New notebooks get the multilingual model (settings.MULTILINGUAL); the suite imports hundreds of
# documents, so its notebooks use the packaged English model's int8 graph, 2.2x faster on the
# same passages. Tests where reading other languages matters ask for the multilingual model by
# name (tests/index/test_e5_export.py, the cross-language tests); test_embed_onnx.py checks
# the default without this setting.
os.environ.setdefault("KNOWNOTE_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
# The apps tests start (in a browser or through AppTest) serve no MCP unless a test gives them a
# port: they would all want the same one, and AppTest's would stay in the test process.
os.environ.setdefault("KNOWNOTE_MCP_PORT", "0")

import numpy as np

from knownote.index.context import NewPassage
from knownote.index.embedders import get_embedder
from knownote.settings import Settings
from knownote.store.db import Store

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DOCS = CORPUS / "docs"


def corpus_file(relative: str) -> Path:
    """A file from ../shared/corpus, or skip the test when the corpus is not there."""
    path = CORPUS / relative
    if not path.exists():
        pytest.skip(f"needs the shared corpus ({path} is absent)")
    return path


def store_vectors(
    store: Store, notebook_id: int, vectors: np.ndarray, language: str | None = None
) -> list[int]:
    """A document of one 10-character passage per vector, stored as given (its passages in
    `language`); its passage ids."""
    n = len(vectors)
    document_id = store.add_document(
        notebook_id=notebook_id,
        title="random",
        filename="random",
        kind="text",
        sha256=f"r{language or ''}",
        text="x" * (10 * n),
        pages=[],
        vectors=vectors,
        passages=[NewPassage(10 * i, 10 * i + 10, None, None, {"x": 1}) for i in range(n)],
        languages=None if language is None else [language],
    )
    return [p.id for p in store.passages(document_id)]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings().with_(home=tmp_path / "home")


@pytest.fixture
def db_path(settings: Settings) -> Path:
    return settings.db_path


@pytest.fixture
def store(db_path: Path):
    store = Store.open(db_path)
    yield store
    store.close()


@pytest.fixture(scope="session")
def embedder():
    return get_embedder()


@pytest.fixture
def notebook(store: Store, embedder):
    return store.create_notebook("Test notebook", embedder.name, embedder.dim)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The real engine (llama-cpp-python's server with SmolLM2), started once per test run."""
    from tests.llama_server import LlamaServer

    with LlamaServer(tmp_path_factory.mktemp("llama")) as server:
        yield server


@pytest.fixture(scope="session")
def library(tmp_path_factory, embedder):
    """A data folder with a real PDF and a Markdown page in one notebook (tests/mcp_library.py)."""
    from tests.mcp_library import build_library

    return build_library(tmp_path_factory.mktemp("library"), embedder)
