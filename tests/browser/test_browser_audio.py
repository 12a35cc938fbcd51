"""Audio overviews in a real browser: a kept overview of an English and a Japanese source plays
from a clicked line (Chromium plays the Ogg/Opus), the line being spoken is marked as the audio
moves, and the clicked line's card shows its range with the support span highlighted; then a
read-aloud brief is made through the view, plays from a clicked quote, and that quote's card
highlights exactly its range."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.audio_overviews import keep
from tests.browser.harness import chromium, settle, shot, streamlit_server
from tests.conftest import corpus_file
from tests.show.handmade_audio import ENGLISH, JAPANESE, overview, timed
from tests.ui.test_app_reports import GRAVITY

pytestmark = pytest.mark.browser
TIMEOUT = 240_000


def prepared(tmp_path: Path, embedder) -> str:
    """The sources imported and the hand-made overview kept in the app's data folder; the
    notebook's name."""
    settings = Settings().with_(home=tmp_path / "home")
    gravity = corpus_file(GRAVITY)
    store = Store.open(settings.db_path)
    try:
        notebook = store.create_notebook("Hills, heard", embedder.name, embedder.dim)
        ids = {}
        for name, data in (
            (gravity.name, gravity.read_bytes()),
            ("hills.txt", ENGLISH.encode()),
            ("丘.txt", JAPANESE.encode()),
        ):
            result = import_file(store, notebook, name, data, settings=settings, embedder=embedder)
            assert result.status == "imported", result.error
            ids[name] = result.document_id
        spoken, audio = timed(overview(notebook.id, ids["hills.txt"], ids["丘.txt"], None))
        keep(store, replace(spoken, audio_sha256=store.save_file(audio)))
    finally:
        store.close()
    return notebook.name


def marked(player) -> int:
    return int(player.locator(".kn-line.kn-now").get_attribute("data-i"))


def at(player) -> float:
    return player.locator("#kn-audio").evaluate("a => a.currentTime")


def test_an_overview_plays_from_a_clicked_line_and_shows_that_lines_cards(tmp_path, embedder):
    from playwright.sync_api import expect

    name = prepared(tmp_path, embedder)
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1100})
        messages: list[str] = []
        page.on("dialog", lambda d: (messages.append(d.message), d.dismiss()))
        page.goto(server.url)
        expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=60_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Study").click()
        page.locator('[data-testid="stButtonGroup"] button').filter(has_text="Audio").click()

        player = page.frame_locator('iframe[data-testid="stIFrame"]')
        audio = player.locator("#kn-audio")
        audio.wait_for(state="attached", timeout=60_000)
        assert audio.evaluate("a => a.canPlayType('audio/ogg; codecs=opus')") == "probably"
        page.wait_for_timeout(300)
        audio.evaluate("a => a.readyState >= 1 || new Promise(r => a.onloadedmetadata = r)")
        spoken, _ = timed(overview())
        assert abs(audio.evaluate("a => a.duration") - spoken.seconds) < 0.3
        assert marked(player) == 0

        # a click on the Japanese line plays from its start and shows the card of its mark
        lines = player.locator(".kn-line")
        lines.nth(2).click()
        assert abs(at(player) - spoken.lines[2].start_s) < 0.3
        assert marked(player) == 2
        card = player.locator('.kn-card[data-n="2"]')
        expect(card).to_be_visible()
        expect(card.locator("mark.kn-span")).to_have_text("重力の丘")
        expect(player.locator('.kn-card[data-n="1"]')).to_be_hidden()
        page.wait_for_timeout(600)
        assert not audio.evaluate("a => a.paused") and at(player) > spoken.lines[2].start_s
        shot(page, "audio-01-japanese-line")

        # the audio moved on (set from here): the marked line and its cards follow
        audio.evaluate(f"a => {{ a.pause(); a.currentTime = {spoken.lines[3].start_s + 0.05}; }}")
        expect(player.locator(".kn-line.kn-now")).to_have_attribute("data-i", "3")
        expect(player.locator('.kn-card[data-n="3"]')).to_be_visible()
        expect(player.locator('.kn-card[data-n="1"]')).to_be_visible()
        expect(card).to_be_hidden()
        lines.nth(1).focus()  # the lines are buttons: the keyboard plays from one too
        page.keyboard.press("Enter")
        expect(player.locator(".kn-line.kn-now")).to_have_attribute("data-i", "1")

        # a read-aloud brief made in the view: it opens, and a clicked quote's card marks it
        page.get_by_role("radio", name="Short").check(force=True)
        settle(page)
        page.get_by_role("button", name="Make a read-aloud brief").click()
        expect(player.locator(".kn-line").first).to_contain_text(
            "quotes", timeout=TIMEOUT
        )  # the newest overview opened
        settle(page)
        quote = player.locator('.kn-line:not([data-cites=""])').first
        n = quote.get_attribute("data-cites").split()[0]
        start = float(quote.get_attribute("data-start"))
        quote.click()
        assert abs(at(player) - start) < 0.3
        card = player.locator(f'.kn-card[data-n="{n}"]')
        expect(card).to_be_visible()
        highlighted = card.locator(".kn-excerpt > mark")
        a, b = int(card.get_attribute("data-start")), int(card.get_attribute("data-end"))
        # a card marks its range only while the source's text still holds the quote there
        expect(card.locator(".kn-stale")).to_have_count(0)
        assert 0 <= a < b and highlighted.evaluate("m => m.textContent.length") == b - a
        highlighted = highlighted.inner_text()
        assert "gravity hill" in highlighted and "gravity hill" in quote.inner_text()
        shot(page, "audio-02-read-aloud")
        assert messages == []
