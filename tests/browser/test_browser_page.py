"""In a real Chromium: click a citation of a PDF passage and see its page with the passage marked.

The PDF is vertical Japanese (one page), so the import is quick and the highlight has to follow
vertical lines. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest

from tests.browser.harness import (
    ask,
    chromium,
    follow_citation,
    new_notebook,
    shot,
    streamlit_server,
)

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "cjk_ja_miyazawa_preface_vertical.pdf"
IMPORT_TIMEOUT = 240_000  # ms: the first import loads the embedding model
ANSWER_TIMEOUT = 120_000


def yellow_pixels(png: bytes) -> int:
    pix = pymupdf.Pixmap(png)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    return int(((r > 200) & (g > 170) & (b < 120)).sum())


def test_a_citation_leads_to_the_highlighted_page(tmp_path: Path):
    from playwright.sync_api import expect

    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page, dialogs = new_notebook(browser, server, "Poems", PDF, import_timeout=IMPORT_TIMEOUT)
        expect(page.get_by_text(f"✓ {PDF.name}: ")).to_be_visible()
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()

        ask(page, "透明な幽霊の複合体とは何ですか")
        page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)
        pictures = page.locator('[data-testid="stImage"] img')
        expect(pictures.first).to_be_visible(timeout=60_000)
        links = page.locator(".kn-answer a.kn-cite")
        expect(links.first).to_be_visible()
        page.mouse.wheel(0, -5000)
        shot(page, "page-01-answer")

        target = follow_citation(page, links.last)
        n = target.get_attribute("data-n")
        # The page image of the card the link led to: the next picture after that card.
        picture = target.locator(
            "xpath=following::div[@data-testid='stImage'][1]//img"
        )  # fmt: skip
        expect(picture).to_be_in_viewport()
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
        )
        caption = target.locator("xpath=following::div[@data-testid='stImage'][1]")
        expect(caption).to_contain_text("p. 1 of the PDF: the cited passage is highlighted")
        shot(page, "page-02-citation-on-page")
        # A page without the highlight has no yellow at all; a short passage marks ~1%.
        assert yellow_pixels(picture.screenshot()) > 500, f"card [{n}] shows no highlight"
        assert dialogs.messages == []
