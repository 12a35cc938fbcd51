"""The Overview in a real browser: quotes without a model; with the Ollama stand-in (it follows
Ollama's documented API; no Ollama server can be installed here) an overview written after the
import by itself, whose suggested question, clicked, is asked and answered in the chat."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.browser.harness import chromium, new_notebook, settle, shot, streamlit_server
from tests.browser.test_browser_a11y import ANSWER_TIMEOUT, IMPORT_TIMEOUT, NOTES
from tests.ollama_standin import OllamaStandIn

QUESTION = "How do tardigrades survive drying out?"


def reply(messages: list[dict]) -> str:
    if "overview" in messages[0]["content"]:
        return (
            "SUMMARY: Tardigrades survive drying out by entering cryptobiosis [1].\n"
            f"QUESTIONS:\n- {QUESTION}\n- What is cryptobiosis?\n- How slow is their metabolism?"
        )
    return "They enter a state called cryptobiosis [1]."


@pytest.mark.parametrize("with_model", [False, True], ids=["quotes", "model"])
def test_the_overview_quotes_sources_and_asks_a_suggested_question(tmp_path: Path, with_model):
    from playwright.sync_api import expect

    source = tmp_path / "tardigrades.txt"
    source.write_text(NOTES, encoding="utf-8")
    standin = OllamaStandIn(reply=reply) if with_model else contextlib.nullcontext()
    with standin as model_server, chromium() as browser:
        env = {"OLLAMA_HOST": model_server.url} if with_model else {}
        with streamlit_server(tmp_path, **env) as server:
            page, dialogs = new_notebook(
                browser, server, "Reading", source, import_timeout=IMPORT_TIMEOUT
            )

            page.locator('[data-testid="stRadio"] label').filter(has_text="Overview").click()
            quote = page.locator(".kn-quote").first
            expect(quote).to_contain_text("Tardigrades", timeout=ANSWER_TIMEOUT)
            expect(page.get_by_text("Quotes, not a summary.")).to_be_visible()
            if not with_model:
                expect(page.get_by_role("button", name="Write overviews")).to_have_count(0)
                shot(page, "overview-01-quotes")
                assert dialogs.messages == []
                return
            # Written after the import, with the model chosen when the file was added.
            expect(page.get_by_text("Written by")).to_be_visible(timeout=ANSWER_TIMEOUT)
            expect(page.get_by_role("button", name="Write overviews")).to_have_count(0)
            assert len([c for c in model_server.chats() if "overview" in str(c)]) == 1
            expect(page.locator("a.kn-cite").first).to_be_visible()
            settle(page)
            shot(page, "overview-02-written")
            page.get_by_role("button", name=QUESTION).click()
            expect(page.get_by_text("They enter a state called cryptobiosis")).to_be_visible(
                timeout=ANSWER_TIMEOUT
            )
            expect(page.locator(".kn-card:visible").first).to_contain_text("tardigrades.txt")
            shot(page, "overview-03-asked")
            assert dialogs.messages == []
