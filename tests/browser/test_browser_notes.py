"""Notes in a real browser: keep an answer, write a note with hostile HTML, search it, edit it,
use it as a source and get it cited."""

from __future__ import annotations

from pathlib import Path

from knownote.answer import notes
from knownote.store.db import Store
from tests.browser.harness import (
    ask,
    chromium,
    follow_citation,
    new_notebook,
    settle,
    shot,
    streamlit_server,
)
from tests.browser.test_browser_a11y import ANSWER_TIMEOUT, IMPORT_TIMEOUT, NOTES

MINE = (
    "Water bears in moss survive freezing by vitrification.\n\n"
    'Careful: <img src=x onerror="alert(1)"> and <script>alert(2)</script> stay text.'
)


def ask_in_chat(page, question: str) -> None:
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
    ask(page, question)
    page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)
    settle(page)


def test_notes_are_kept_written_searched_edited_and_cited(tmp_path: Path):
    from playwright.sync_api import expect

    source = tmp_path / "tardigrades.txt"
    source.write_text(NOTES, encoding="utf-8")
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page, dialogs = new_notebook(
            browser, server, "Reading", source, import_timeout=IMPORT_TIMEOUT
        )
        ask_in_chat(page, "How do tardigrades survive drying out?")
        page.get_by_role("button", name="Save as note").click()
        expect(page.get_by_text("Kept the answer as a note")).to_be_visible(timeout=30_000)

        notes_tab = page.locator('[data-testid="stRadio"] label').filter(has_text="Notes")
        notes_tab.click()
        kept = page.locator(".kn-card:visible").first
        expect(kept).to_contain_text("tardigrades.txt", timeout=30_000)
        follow_citation(page, page.locator(".kn-answer a.kn-cite").first)

        page.get_by_text("Write a note").click()
        page.get_by_label("Title").first.fill("Freezing")
        page.get_by_label("Note", exact=True).first.fill(MINE)
        settle(page)  # a run still going when the form is sent can drop what it sends
        page.get_by_role("button", name="Save note").click()
        written = page.locator('[data-testid="stMarkdownContainer"]')
        expect(written.filter(has_text="Water bears in moss survive")).to_be_visible(timeout=30_000)
        page.get_by_label("Search notes").fill("vitrification")
        page.get_by_label("Search notes").press("Enter")
        expect(page.get_by_text("1 note holding “vitrification”")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("stay text")).to_be_visible()
        shot(page, "notes-01-search")

        page.get_by_role("button", name="Edit").click()
        page.get_by_role("textbox", name="New text").fill(MINE.replace("freezing", "deep freezing"))
        page.get_by_role("button", name="Save changes").click()
        shown = page.locator('[data-testid="stMarkdownContainer"]')
        expect(shown.filter(has_text="survive deep freezing")).to_be_visible(timeout=30_000)

        page.get_by_role("button", name="Use as a source").click()
        expect(page.get_by_text("is being imported")).to_be_visible(timeout=30_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()
        expect(page.get_by_text("✓ Note - Freezing.md")).to_be_visible(timeout=IMPORT_TIMEOUT)

        ask_in_chat(page, "How do water bears survive deep freezing?")
        cited = page.locator(".kn-card:visible").filter(has_text="Note - Freezing.md").first
        expect(cited).to_be_visible()
        shot(page, "notes-02-cited")
        assert dialogs.messages == []  # the note's HTML never ran
        server.stop()

    store = Store.open(server.home / "knownote.duckdb")
    try:
        mine = next(n for n in notes.notes(store, 1) if not n.from_answer)
        assert "deep freezing" in mine.body
        document = next(d for d in store.documents(1) if d.filename == "Note - Freezing.md")
        text = store.document_text(document.id)
        for p in store.passages(document.id):
            assert text[p.start : p.end] == p.text
    finally:
        store.close()
