"""In a real Chromium, with no answer model: a notebook of an English paper and Chinese notes,
searched fairly across its two languages. A Chinese question about the paper is answered by
quoting it: the first quote comes from the English paper, not from the Chinese notes that share
the question's language. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.settings import MULTILINGUAL
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
PDF = CORPUS / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
NOTES = CORPUS / "docs" / "web_text" / "md_zh_distributed_training_notes.md"
IMPORT_TIMEOUT = 240_000  # ms: the first import may make the multilingual model's graph
ANSWER_TIMEOUT = 120_000
QUESTION = "DPR 的问题编码器和段落编码器是什么模型？"  # both are BERT networks, says the paper


def test_a_chinese_question_is_answered_first_from_the_english_paper(tmp_path: Path):
    from playwright.sync_api import expect

    for path in (PDF, NOTES):
        if not path.exists():
            pytest.skip(f"needs the shared corpus ({path} is absent)")
    with (
        chromium() as browser,
        streamlit_server(tmp_path, KNOWNOTE_EMBEDDING_MODEL=MULTILINGUAL) as server,
    ):
        page, dialogs = new_notebook(
            browser, server, "Two languages", PDF, NOTES, import_timeout=IMPORT_TIMEOUT
        )
        languages = page.get_by_text("A question finds passages in any of these languages")
        expect(languages).to_be_visible(timeout=60_000)
        expect(languages).to_contain_text("English (")
        expect(languages).to_contain_text("Chinese (")
        shot(page, "mixed-01-sources")

        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        ask(page, QUESTION)
        answer = page.locator(".kn-answer").last
        answer.locator("a.kn-cite").first.wait_for(timeout=ANSWER_TIMEOUT)
        first_quote = answer.inner_text().split("[1]")[0]
        card = follow_citation(page, answer.locator("a.kn-cite").first)
        expect(card.locator(".kn-head")).to_contain_text(PDF.name)
        shot(page, "mixed-02-answer")
        assert "BERT" in first_quote or "encoder" in first_quote.lower()
        assert dialogs.messages == []
