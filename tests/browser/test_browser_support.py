"""In a real Chromium: a written answer's sentences land on spans inside the cited passages.

The answer comes from tests/ollama_standin.py (no Ollama server can be installed where these
tests run): its first sentence repeats a sentence of passage [1] as the prompt gave it, its second
is a made-up claim citing [1] too. The PDF is vertical Japanese (one page), so the import is
quick. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest

from knownote.store.db import Store
from tests.browser.harness import Dialogs, chromium, shot, streamlit_server
from tests.ollama_standin import OllamaStandIn

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "cjk_ja_miyazawa_preface_vertical.pdf"
IMPORT_TIMEOUT = 240_000  # ms: the first import loads the embedding model
ANSWER_TIMEOUT = 120_000
MADE_UP = "Penguins migrate across the Sahara desert every winter [1]."


def reply(messages: list[dict]) -> str:
    """A sentence of passage [1] as given in the prompt, then a made-up claim."""
    prompt = messages[-1]["content"]
    first = "".join(prompt.split("\n[2] ")[0].split("\n", 3)[-1].split())  # one glyph a line
    return f"{first[:30]}。[1] {MADE_UP}"


def colours(png: bytes) -> tuple[int, int]:
    """Pixels of the light (yellow) and the strong (orange) highlight."""
    pix = pymupdf.Pixmap(png)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    light = (r > 200) & (g > 170) & (b < 120)
    strong = (r > 200) & (g > 100) & (g < 165) & (b < 70)
    return int(light.sum()), int(strong.sum())


def test_answer_sentences_land_on_spans_and_a_made_up_claim_is_flagged(tmp_path: Path):
    from playwright.sync_api import expect

    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    with (
        OllamaStandIn(reply=reply) as standin,
        chromium() as browser,
        streamlit_server(tmp_path, OLLAMA_HOST=standin.url) as server,
    ):
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs = Dialogs()
        dialogs.watch(page)
        page.goto(server.url)
        page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
        page.get_by_label("Name").fill("Poems")
        page.get_by_role("button", name="Create notebook").click()
        expect(page.get_by_role("heading", name="Poems")).to_be_visible(timeout=IMPORT_TIMEOUT)
        uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
        uploader.wait_for(state="attached", timeout=IMPORT_TIMEOUT)
        uploader.set_input_files(str(PDF))
        page.get_by_text("Last import").wait_for(timeout=IMPORT_TIMEOUT)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        box = page.get_by_placeholder("Ask a question about this notebook's sources")
        box.fill("透明な幽霊の複合体とは何ですか")
        box.press("Enter")
        page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)

        # The made-up claim gets the quiet note; the supported sentence does not.
        note = page.locator(".kn-answer .kn-weak")
        expect(note).to_have_count(1)
        expect(note).to_have_text("no close match in the cited passages")
        answer = page.locator(".kn-answer").inner_text()
        assert answer.index("Penguins") < answer.index("no close match")

        # The first sentence's mark leads to its span: its text in the tooltip, the span in view.
        link = page.locator('.kn-answer a.kn-cite[href^="#span-"]').first
        assert link.get_attribute("title").startswith("Leans on “")
        link.click()
        target = page.locator("mark.kn-span:target")
        expect(target).to_be_in_viewport()
        spans = page.locator(".kn-card mark.kn-span").evaluate_all(
            "marks => marks.map(m => [m.closest('.kn-card').dataset.document,"
            " m.dataset.start, m.dataset.end, m.textContent])"
        )
        assert spans

        # The card's page: the passage in the light colour, the span inside it in the strong one.
        picture = page.locator('[data-testid="stImage"] img').first
        expect(picture).to_be_visible(timeout=60_000)
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
        )
        caption = page.locator('[data-testid="stImage"]').first
        expect(caption).to_contain_text("leans on more strongly")
        picture.scroll_into_view_if_needed()
        shot(page, "support-01-answer-and-page")
        light, strong = colours(picture.screenshot())
        assert light > 200 and strong > 200, (light, strong)
        assert dialogs.messages == []

    store = Store.open(server.home / "knownote.duckdb")
    try:
        for document_id, start, end, text in spans:
            assert store.document_text(int(document_id))[int(start) : int(end)] == text
    finally:
        store.close()
