"""A web page imported by its address and a recording, asked about in a real headless Chromium.

A corpus HTML page is served by a local server (127.0.0.1, allowed with
KNOWNOTE_ALLOW_LOCAL_ADDRESSES=1), its address pasted in the Sources view; a WAV spoken by
espeak-ng is dropped beside it. Without an answer model the answer quotes passages: each card's
mark is checked against the stored snapshot's text, the web card names its address, and the cited
recording's player starts within a second of the cited words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knownote.read.audio import packaged_model
from knownote.store.db import Store
from tests.browser.harness import ask, chromium, settle, shot, streamlit_server
from tests.conftest import corpus_file
from tests.speech import GRAVITY_HILL, plain_paragraphs, speak
from tests.web_server import serve

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LONG = 300_000  # ms: the first import prepares the embedding model


def marked_cards(page, name: str) -> list[tuple[int, int, int, str, str]]:
    cards = page.locator(".kn-card:visible").filter(has_text=name).filter(has=page.locator("mark"))
    cards.first.wait_for(timeout=LONG)
    return [
        (
            int(card.get_attribute("data-document")),
            int(card.get_attribute("data-start")),
            int(card.get_attribute("data-end")),
            card.locator("mark:not(.kn-span)").text_content(),
            card.text_content(),
        )
        for card in cards.all()
    ]


def test_a_page_by_its_address_and_a_recording_are_asked_about(tmp_path: Path):
    from playwright.sync_api import expect

    page_bytes = corpus_file("docs/web_text/html_wikipedia_tardigrades.html").read_bytes()
    recording = None
    if packaged_model() is not None:
        paragraphs = plain_paragraphs(corpus_file(GRAVITY_HILL).read_text(encoding="utf-8"))
        text = " ".join(paragraphs[1:3])  # about a minute: the cited words start well after 0
        recording = speak(text, tmp_path / "gravity_hill_talk.wav")
    with (
        serve() as site,
        chromium() as browser,
        streamlit_server(tmp_path, KNOWNOTE_ALLOW_LOCAL_ADDRESSES="1") as server,
    ):
        address = site.page("/wiki/Tardigrade", page_bytes)
        label = address.split("://", 1)[1]
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(server.url)
        page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
        page.get_by_label("Name").fill("Web")
        page.get_by_role("button", name="Create notebook").click()
        expect(page.get_by_role("heading", name="Web")).to_be_visible(timeout=60_000)
        page.get_by_role("textbox", name="Add web pages: paste addresses").fill(address)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text(re.compile(r"✓ .*/wiki/Tardigrade: \d+ passages")).wait_for(timeout=LONG)
        expect(page.get_by_text("Version 1, fetched from " + address)).to_be_visible()
        if recording is not None:
            uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
            uploader.set_input_files([str(recording)])
            page.get_by_text(re.compile(rf"✓ {recording.name}: \d+ passage")).wait_for(timeout=LONG)
        shot(page, "web-01-sources")

        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        ask(page, "How do tardigrades survive exposure to outer space?")
        web_cards = marked_cards(page, label)
        assert all("fetched from " + address in card[4] for card in web_cards)
        shot(page, "web-02-answer")
        heard: list[tuple[int, int, int, float]] = []
        if recording is not None:
            page.get_by_role("button", name="New chat").click()
            expect(page.locator(".kn-card")).to_have_count(0, timeout=30_000)
            ask(page, "How did the 2003 study recreate antigravity places in the lab?")
            spoken_cards = marked_cards(page, recording.name)
            settle(page)
            player = page.locator('[data-testid="stAudio"]').first
            player.wait_for(timeout=60_000)
            page.wait_for_function(
                "() => { const a = document.querySelector('audio'); return a && a.readyState > 0 }",
                timeout=60_000,
            )
            at = page.evaluate("() => document.querySelector('audio').currentTime")
            first = spoken_cards[0]
            heard.append((first[0], first[1], first[2], at))
            shot(page, "web-03-recording")
            web_cards += spoken_cards
    store = Store.open(tmp_path / "home" / "knownote.duckdb")
    try:
        for document_id, start, end, marked, _ in web_cards:
            text = store.document_text(document_id)
            passage = next(
                p for p in store.passages(document_id) if (p.start, p.end) == (start, end)
            )
            assert marked == passage.text == text[start:end]
        web = store.document(web_cards[0][0])
        assert web.kind == "web" and store.read_file(web.sha256) == page_bytes
        for document_id, start, end, at in heard:
            said = store.time_range(document_id, start, end)
            assert said is not None and said[0] > 5 and abs(at - said[0]) < 1.0, (at, said)
    finally:
        store.close()
