"""An answer from the real engine in the browser: `streamlit run app.py` reaching
llama-cpp-python's OpenAI-compatible server (tests/llama_server.py), driven by headless Chromium.
"""

from __future__ import annotations

import pytest

from knownote.measure.retrieval import load_squad
from tests.browser.harness import Dialogs, chromium, shot, streamlit_server
from tests.conftest import corpus_file
from tests.llama_server import CONTEXT

pytestmark = [pytest.mark.browser, pytest.mark.engine]
TIMEOUT = 240_000  # ms: the first import loads the embedding model; answers on shared cores


def test_an_answer_from_the_real_engine_shows_beside_its_passages(llama_server, tmp_path):
    from playwright.sync_api import expect

    data = load_squad(corpus_file("qa_en/xquad.en.json"), max_questions=1)
    context = data.contexts[0].text
    env = {
        "KNOWNOTE_OPENAI_BASE_URL": llama_server.url,
        "KNOWNOTE_OPENAI_API_KEY": "sk-browser-secret",
        "KNOWNOTE_OPENAI_CONTEXT": str(CONTEXT),
        "KNOWNOTE_MAX_ANSWER_TOKENS": "48",
    }
    with chromium() as browser, streamlit_server(tmp_path, **env) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs = Dialogs()
        dialogs.watch(page)
        page.goto(server.url)
        page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
        picker = page.get_by_role("combobox", name="Model")
        shown = picker.evaluate("e => e.value || e.getAttribute('aria-label') || e.textContent")
        assert "smollm2 · OpenAI-compatible server" in (shown + page.content())
        page.get_by_label("Name").fill("Super Bowl")
        page.get_by_role("button", name="Create notebook").click()
        expect(page.get_by_role("heading", name="Super Bowl")).to_be_visible(timeout=TIMEOUT)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            [{"name": "super-bowl.txt", "mimeType": "text/plain", "buffer": context.encode()}]
        )
        page.get_by_text("Last import").wait_for(timeout=TIMEOUT)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        box = page.get_by_placeholder("Ask a question about this notebook's sources")
        box.fill("Who won Super Bowl 50?")
        box.press("Enter")
        page.get_by_text("Answered by openai:smollm2").wait_for(timeout=TIMEOUT)
        answer = page.locator(".kn-answer").last
        expect(answer).not_to_be_empty()
        cited = page.locator(".kn-card:visible")
        if cited.count() == 0:  # the small model often cites nothing: the app says so
            expect(page.get_by_text("The answer cites no passage.")).to_be_visible()
            expect(page.get_by_text("more passages it had in front of it")).to_be_visible()
        shot(page, "engine-answer")
        assert "sk-browser-secret" not in page.content()
        assert dialogs.messages == []
