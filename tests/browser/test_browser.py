"""End to end in a real headless Chromium: `streamlit run app.py`, a real PDF, a question.

The server runs with a temporary data folder and OLLAMA_HOST at a closed port, so answers take
the quoted-passages path. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from knownote.store.db import Store
from tests.browser.harness import (
    Dialogs,
    Server,
    ask,
    chromium,
    follow_citation,
    shot,
    streamlit_server,
)

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
HOSTILE_NAME = "<img src=x onerror=alert(3)>.txt"
HOSTILE = (
    "Notes on quoting markup.\n\n"
    "The page said <script>alert(1)</script> and then <img src=x onerror=alert(2)> "
    "inside a paragraph about quoting markup safely."
)
IMPORT_TIMEOUT = 240_000  # ms: the first import loads the embedding model
ANSWER_TIMEOUT = 120_000


@dataclass
class Running:
    server: Server
    page: object
    dialogs: Dialogs

    @property
    def home(self) -> Path:
        return self.server.home

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    with chromium() as browser, streamlit_server(tmp_path_factory.mktemp("browser")) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs = Dialogs()
        dialogs.watch(page)
        page.goto(server.url)
        set_up_notebook(page)
        yield Running(server, page, dialogs)


def set_up_notebook(page) -> None:
    """Create a notebook and upload the PDF and a text file full of markup, in one drop."""
    from playwright.sync_api import expect

    page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
    shot(page, "01-empty")
    page.get_by_label("Name").fill("Retrieval papers")
    page.get_by_role("button", name="Create notebook").click()
    expect(page.get_by_role("heading", name="Retrieval papers")).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        [
            {"name": PDF.name, "mimeType": "application/pdf", "buffer": PDF.read_bytes()},
            {"name": HOSTILE_NAME, "mimeType": "text/plain", "buffer": HOSTILE.encode()},
        ]
    )
    page.get_by_text("Last import").wait_for(timeout=IMPORT_TIMEOUT)
    expect(page.get_by_text(f"✓ {PDF.name}: ")).to_be_visible()
    expect(page.get_by_text(f"✓ {HOSTILE_NAME}: ")).to_be_visible()
    expect(page.get_by_text("Use in answers")).to_have_count(2)
    shot(page, "02-sources")
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()


def test_markup_in_a_document_shows_as_text(app: Running):
    from playwright.sync_api import expect

    page = app.page
    ask(page, "What did the page say about quoting markup?")
    card = page.locator(".kn-card:visible").filter(has_text=HOSTILE_NAME).first
    card.wait_for(timeout=ANSWER_TIMEOUT)
    expect(card).to_contain_text("<script>alert(1)</script>")
    expect(card).to_contain_text("<img src=x onerror=alert(2)>")
    assert page.locator(".kn-card script, .kn-card img, .kn-answer img").count() == 0
    shot(page, "03-markup-as-text")
    assert app.dialogs.messages == []


def test_import_ask_and_read_highlighted_sources(app: Running):
    from playwright.sync_api import expect

    page = app.page
    started = time.monotonic()
    page.get_by_role("button", name="New chat").click()
    expect(page.locator(".kn-card")).to_have_count(0, timeout=30_000)
    ask(page, "What is dense passage retrieval?")
    cards = (
        page.locator(".kn-card:visible").filter(has_text=PDF.name).filter(has=page.locator("mark"))
    )
    cards.first.wait_for(timeout=ANSWER_TIMEOUT)
    answered_in = time.monotonic() - started
    expect(page.locator(".kn-answer a.kn-cite").first).to_be_visible()
    first = cards.first
    expect(first.locator(".kn-head")).to_contain_text("p. ")
    found = [
        (
            int(card.get_attribute("data-document")),
            int(card.get_attribute("data-start")),
            int(card.get_attribute("data-end")),
            card.locator("mark:not(.kn-span)").text_content(),
            card.locator(".kn-head").text_content(),
        )
        for card in cards.all()
    ]
    page.get_by_text("What is dense passage retrieval?").last.scroll_into_view_if_needed()
    shot(page, "04-answer")
    follow_citation(page, page.locator(".kn-answer a.kn-cite").first)
    shot(page, "05-citation-link")
    assert app.dialogs.messages == []

    app.stop()  # the server holds the database; read it once it is gone
    store = Store.open(app.home / "knownote.duckdb")
    try:
        for document_id, start, end, marked, header in found:
            text = store.document_text(document_id)
            passage = next(
                p for p in store.passages(document_id) if (p.start, p.end) == (start, end)
            )
            assert marked == passage.text == text[start:end]
            page_no = passage.page_start
            assert f"p. {page_no}" in header or f"pp. {page_no}–" in header
    finally:
        store.close()
    print(f"answer shown {answered_in:.1f}s after asking")
