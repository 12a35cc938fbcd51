"""Reports in a real browser: a timeline of an English Wikipedia page and a Chinese Wikipedia
paragraph made in the background, shown, and a `[n]` mark of each language followed to its
citation card, where exactly the quoted range is highlighted."""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from tests.browser.harness import chromium, follow_citation, settle, shot, streamlit_server
from tests.conftest import corpus_file
from tests.ui.test_app_reports import GRAVITY, chinese_paragraph

pytestmark = pytest.mark.browser
TIMEOUT = 120_000


def prepared(tmp_path: Path, embedder) -> str:
    """The two sources imported into the data folder the app will use; the notebook's name."""
    settings = Settings().with_(home=tmp_path / "home")
    gravity = corpus_file(GRAVITY)
    store = Store.open(settings.db_path)
    try:
        notebook = store.create_notebook("Hills and coaches", embedder.name, embedder.dim)
        for name, data in (
            (gravity.name, gravity.read_bytes()),
            ("戚务生.txt", chinese_paragraph().encode()),
        ):
            result = import_file(store, notebook, name, data, settings=settings, embedder=embedder)
            assert result.status == "imported", result.error
    finally:
        store.close()
    return notebook.name


def test_a_timeline_is_made_shown_and_its_citations_highlight_their_ranges(
    tmp_path: Path, embedder
):
    from playwright.sync_api import expect

    name = prepared(tmp_path, embedder)
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        messages: list[str] = []
        page.on("dialog", lambda d: (messages.append(d.message), d.dismiss()))
        page.goto(server.url)
        expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=60_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Study").click()
        sections = page.locator('[data-testid="stButtonGroup"] button')
        sections.filter(has_text="Reports").click()
        page.get_by_role("button", name="Make a timeline").click()

        report = page.locator(".kn-report")
        expect(report).to_be_visible(timeout=TIMEOUT)
        expect(report).to_contain_text("2003")
        expect(report).to_contain_text("1944年")
        settle(page)
        shot(page, "reports-01-timeline")

        for year in ("2003", "1944年"):
            entry = report.locator("p, li, .kn-quote").filter(has_text=year).first
            card = follow_citation(page, entry.locator("a.kn-cite").first)
            marked = card.locator(".kn-excerpt > mark")
            expect(marked).to_contain_text(year)
            start, end = int(card.get_attribute("data-start")), int(card.get_attribute("data-end"))
            assert 0 <= start < end
            quote = entry.inner_text()
            assert " ".join(marked.inner_text().split()) in " ".join(quote.split())
        shot(page, "reports-02-citation")
        assert messages == []
