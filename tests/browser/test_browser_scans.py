"""In a real Chromium: a photo of a page (PNG) imports by OCR, its passage is cited with an OCR
label, and the citation shows the scan itself with the cited characters highlighted.
Screenshots go to test-output/ at the repository root."""

from __future__ import annotations

import io
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from tests.browser.harness import (
    ask,
    chromium,
    follow_citation,
    new_notebook,
    shot,
    streamlit_server,
)
from tests.browser.test_browser_page import ANSWER_TIMEOUT, IMPORT_TIMEOUT
from tests.browser.test_browser_support import colours

pytestmark = pytest.mark.browser

LINES = [
    "The lighthouse keeper rang the fog bell",
    "every night from October to March, when",
    "the harbour filled with grey sea mist.",
]


def photo_of_text(path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=460, height=160)
    for i, line in enumerate(LINES):
        page.insert_text((20, 45 + 34 * i), line, fontsize=18)
    pix = page.get_pixmap(dpi=150, alpha=False)
    out = io.BytesIO()
    Image.frombytes("RGB", (pix.width, pix.height), pix.samples).save(out, "PNG")
    path.write_bytes(out.getvalue())


def test_a_citation_of_a_photo_is_highlighted_on_the_scan(tmp_path: Path):
    from playwright.sync_api import expect

    photo = tmp_path / "lighthouse.png"
    photo_of_text(photo)
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page, dialogs = new_notebook(browser, server, "Scans", photo, import_timeout=IMPORT_TIMEOUT)
        expect(page.get_by_text(f"✓ {photo.name}: ")).to_be_visible()
        warning = "1 page read by OCR; check quotes against the page image."
        expect(page.get_by_text(warning).first).to_be_visible()
        shot(page, "scan-01-imported")
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()

        ask(page, "When did the keeper ring the fog bell?")
        page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)
        links = page.locator(".kn-answer a.kn-cite")
        expect(links.first).to_be_visible()
        target = follow_citation(page, links.first)
        expect(target.locator(".kn-ocr")).to_have_text("OCR")
        picture = target.locator(
            "xpath=following::div[@data-testid='stImage'][1]//img"
        )  # fmt: skip
        expect(picture).to_be_in_viewport()
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
        )
        caption = target.locator("xpath=following::div[@data-testid='stImage'][1]")
        expect(caption).to_contain_text("p. 1 of the image: the cited passage is highlighted")
        shot(page, "scan-02-citation-on-the-scan")
        # The passage in yellow, and the support span of the answer's sentence inside it in orange.
        assert sum(colours(picture.screenshot())) > 500, "the scan shows no highlight"
        assert dialogs.messages == []
