"""Background imports in a real headless Chromium against `streamlit run app.py`.

Three real PDFs are dropped at once. While the queue works through them the test asks a question
in the chat and gets its answer, watches the progress move and say its rate and the time left
of the book and of the queue, reloads the page and finds the queue as it was, cancels the long
book, restarts the server in the middle of the third import and imports it again with one click.
The database is checked afterwards: every document whole, no orphan rows, no file kept for a job
that ended.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.store.db import Store
from knownote.store.jobs import CANCELLED, IMPORTED, JobQueue
from tests.browser.harness import chromium, shot, streamlit_server
from tests.invariants import assert_queue_consistent, assert_store_consistent

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PDFS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "docs" / "pdf"
FIRST = PDFS / "paper_dpr_2004.04906_2col.pdf"  # 13 pages: imported first, then asked about
BOOK = PDFS / "book_free_culture_lessig_352p.pdf"  # 352 pages: cancelled while it embeds
# 285 pages, ~1,100 passages: long enough to be caught embedding and interrupted by a restart
LAST = PDFS / "book_mupdf_explored_285p.pdf"
LONG = 300_000  # ms; the first import loads the embedding model, and the machine may be busy


def open_sources(page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_role("heading", name="Books")).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()


def bar(page, path: Path):
    return page.locator('[data-testid="stProgress"]').filter(has_text=path.name)


def test_imports_run_in_the_background_and_survive_reload_cancel_and_restart(tmp_path: Path):
    from playwright.sync_api import expect

    for path in (FIRST, BOOK, LAST):
        if not path.exists():
            pytest.skip(f"needs the shared corpus ({path} is absent)")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        with streamlit_server(tmp_path) as server:
            page.goto(server.url)
            page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
            page.get_by_label("Name").fill("Books")
            page.get_by_role("button", name="Create notebook").click()
            expect(page.get_by_role("heading", name="Books")).to_be_visible(timeout=60_000)
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
                [str(FIRST), str(BOOK), str(LAST)]
            )
            expect(page.get_by_text(f"{LAST.name}: waiting to be imported")).to_be_visible()
            page.get_by_text(f"✓ {FIRST.name}: 13 pages").wait_for(timeout=LONG)
            expect(bar(page, BOOK)).to_be_visible(timeout=LONG)
            shot(page, "imports-01-queue")

            # The chat answers from the first paper while the book is being imported.
            page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
            box = page.get_by_placeholder("Ask a question about this notebook's sources")
            box.fill("What is dense passage retrieval?")
            box.press("Enter")
            card = page.locator(".kn-card:visible").filter(has_text=FIRST.name).first
            card.wait_for(timeout=LONG)
            shot(page, "imports-02-answer-while-importing")

            page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()
            book = bar(page, BOOK)
            expect(book).to_be_visible()  # still importing after the answer
            before = book.inner_text()
            expect(book).not_to_have_text(before, timeout=LONG)  # it moves by itself
            # While it embeds it says how fast, and how long it and the queue have left.
            expect(book).to_contain_text("passages/s", timeout=LONG)
            expect(book).to_contain_text(" left")
            expect(page.get_by_text("The queue: 2 files to go")).to_be_visible()

            page.reload()  # a fresh session finds the queue as it is
            open_sources(page, server.url)
            expect(bar(page, BOOK)).to_be_visible(timeout=60_000)
            expect(page.get_by_text(f"{LAST.name}: waiting to be imported")).to_be_visible()
            shot(page, "imports-03-after-reload")

            page.get_by_role("button", name="Cancel", exact=True).click()
            page.get_by_text(f"✗ {BOOK.name}: cancelled, nothing was stored").wait_for(timeout=LONG)
            expect(bar(page, LAST)).to_contain_text("Embedding passages", timeout=LONG)
            shot(page, "imports-04-cancelled")
        # The server stopped in the middle of the last import.

        with streamlit_server(tmp_path) as server:
            open_sources(page, server.url)
            again = page.get_by_role("button", name="Import again")
            expect(
                page.get_by_text(f"{LAST.name}: interrupted when the app stopped")
            ).to_be_visible(timeout=60_000)
            shot(page, "imports-05-interrupted")
            again.click()
            page.get_by_text(f"✓ {LAST.name}: 285 pages").wait_for(timeout=LONG)
            expect(page.get_by_text("Last import")).to_be_visible()
            shot(page, "imports-06-imported-again")

    store = Store.open(tmp_path / "home" / "knownote.duckdb")
    try:
        assert assert_store_consistent(store, 500, 50) == 2
        assert_queue_consistent(store)
        documents = {d.filename: d for d in store.documents(store.notebooks()[0].id)}
        assert set(documents) == {FIRST.name, LAST.name}
        jobs = {job.filename: job for job in JobQueue(store).jobs()}
        assert {name: job.status for name, job in jobs.items()} == {
            FIRST.name: IMPORTED,
            BOOK.name: CANCELLED,
            LAST.name: IMPORTED,
        }
        for name in (FIRST.name, LAST.name):
            assert jobs[name].document_id == documents[name].id
            assert jobs[name].passages == documents[name].passages
    finally:
        store.close()
