"""A notebook of real sources with their cloze cards, made once for the study tests: the first
pages of the free-culture book (a long PDF, pages and all) and a Wikipedia page in Markdown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.make import make_cards
from tests.answer.test_overview import imported
from tests.conftest import corpus_file

GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
WAR = "docs/web_text/txt_war_and_peace_excerpt.txt"
BOOK_PAGES = 14  # the book's first pages: its preface and introduction, quickly embedded


def book_pages(pages: int = BOOK_PAGES) -> bytes:
    """The free-culture book's first pages, cut from the corpus file (not copied anywhere)."""
    with pymupdf.open(corpus_file("docs/pdf/book_free_culture_lessig_352p.pdf")) as book:
        book.select(list(range(pages)))
        return book.tobytes()


def import_into(store, notebook, settings, embedder, name: str, data: bytes) -> int:
    result = import_file(store, notebook, name, data, settings=settings, embedder=embedder)
    assert result.status == "imported", result.error
    return result.document_id


@pytest.fixture(scope="session")
def studied(tmp_path_factory, embedder):
    """(store, notebook, {name: document id}) with cloze cards made; tests only read it."""
    settings = Settings().with_(home=tmp_path_factory.mktemp("studied"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Study", embedder.name, embedder.dim)
    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    documents = {
        "book": import_into(store, notebook, settings, embedder, "free_culture.pdf", book_pages()),
        "gravity": import_into(
            store, notebook, settings, embedder, gravity.name, gravity.read_bytes()
        ),
    }
    make_cards(store, embedder, notebook.id)
    yield store, notebook, documents
    store.close()


@pytest.fixture
def gravity(store, notebook, settings, embedder) -> int:
    """A Wikipedia page (Markdown) in the test's own notebook, with its cloze cards made."""
    path = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    document_id = import_into(store, notebook, settings, embedder, path.name, path.read_bytes())
    make_cards(store, embedder, notebook.id)
    return document_id


@pytest.fixture(scope="module")
def two_sources_home(tmp_path_factory, embedder) -> Path:
    """A data folder with one notebook of two small sources (GRAVITY, WAR), imported once for
    the module (a test changes a copy: `copy_of`)."""
    home = tmp_path_factory.mktemp("prepared")
    settings = Settings().with_(home=home)
    store = Store.open(settings.db_path)
    try:
        notebook = store.create_notebook("Two sources", embedder.name, embedder.dim)
        for relative in (GRAVITY, WAR):
            imported(store, notebook, settings, embedder, relative)
    finally:
        store.close()
    return home


def copy_of(prepared: Path, tmp_path: Path) -> Settings:
    """The settings of a copy of a prepared data folder, for a test that may change it."""
    home = tmp_path / "home"
    shutil.copytree(prepared, home)
    return Settings().with_(home=home)
