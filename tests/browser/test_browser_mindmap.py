"""The Mind map in a real browser: a book with an outline drawn as a tree, and a node of it,
clicked, opening its range highlighted in the book's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.outline import outline_map
from tests.browser.harness import chromium, settle, shot, streamlit_server
from tests.conftest import corpus_file

pytestmark = pytest.mark.browser
BOOK = "docs/pdf/book_mupdf_explored_285p.pdf"


def prepared_book(tmp_path: Path, embedder) -> tuple[str, str, dict]:
    """The book imported into the data folder the app will use; (notebook, source label, the
    first chapter node: its label, range and text)."""
    settings = Settings().with_(home=tmp_path / "home")
    store = Store.open(settings.db_path)
    try:
        notebook = store.create_notebook("Book", embedder.name, embedder.dim)
        path = corpus_file(BOOK)
        result = import_file(
            store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
        )
        assert result.status == "imported", result.error
        mind_map = outline_map(store, notebook.id, notebook.name)
        (source,) = mind_map.children(None)
        chapter = next(n for n in mind_map.children(source.id) if mind_map.children(n.id))
        (cite,) = chapter.cites
        text = store.document_text(cite.document_id)[cite.start : cite.end]
    finally:
        store.close()
    node = {"label": chapter.label, "start": cite.start, "end": cite.end, "text": text}
    return notebook.name, source.label, node


def test_the_book_is_drawn_and_a_node_opens_its_range(tmp_path: Path, embedder):
    from playwright.sync_api import expect

    name, source, node = prepared_book(tmp_path, embedder)
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(server.url)
        expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=60_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Mind map").click()
        chart = page.locator(".st-key-mind_map_chart svg:has(g.node)")
        expect(chart).to_be_visible(timeout=60_000)
        # The title, the book, its parts and chapters (three levels shown at first).
        expect(chart.locator("g.node").nth(3)).to_be_visible()
        assert chart.locator("g.node").count() > 5
        expect(chart).to_contain_text(node["label"][:20])
        settle(page)
        shot(page, "mindmap-01-drawn")

        branch = page.locator('[data-testid="stExpander"]').filter(has_text=source[:20]).first
        branch.locator("summary").click()
        button = branch.get_by_role("button", name=node["label"], exact=True)
        expect(button).to_be_visible()
        button.click()

        card = page.locator(".st-key-opened_range .kn-card")
        expect(card).to_be_visible(timeout=60_000)
        assert card.get_attribute("data-start") == str(node["start"])
        assert card.get_attribute("data-end") == str(node["end"])
        marked = card.locator(".kn-excerpt > mark").text_content()
        assert " ".join(marked.split()) == " ".join(node["text"].split())
        settle(page)
        shot(page, "mindmap-02-opened")
