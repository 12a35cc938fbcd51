"""In a real Chromium: a Chinese question about an English PDF, in a notebook of the multilingual
model, is answered beside cards whose marks are exact slices of the English text.

The answer model is tests/ollama_standin.py (no Ollama server can be installed where these tests
run): asked to translate, it gives the question in English; asked to answer, it restates in
Chinese a sentence of the paper on dense representations, citing the passage it was shown that
holds it. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knownote.settings import MULTILINGUAL
from knownote.store.db import Store
from tests.browser.harness import ask, chromium, new_notebook, shot, streamlit_server
from tests.ollama_standin import OllamaStandIn

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
IMPORT_TIMEOUT = 240_000  # ms: the first import may make the multilingual model's graph
ANSWER_TIMEOUT = 120_000
QUESTION = "密集段落检索如何对问题和段落进行编码？"
TRANSLATED = "How does dense passage retrieval encode questions and passages?"
# "Such approaches complement the sparse vector methods as they can potentially give high
# similarity scores to semantically relevant text pairs, even without exact token matching." (on
# dense retrieval, in Related Work) in Chinese: a sentence the support spans must find in the
# English text. (A Chinese sentence that no passage shown says is flagged "no close match".)
SOURCE = "high similarity scores to semantically"
ANSWER = (
    "这类稠密方法可以补充稀疏向量方法，因为即使没有完全相同的词，"
    "它们也能给语义相关的文本对打出很高的相似度分数。[{n}]"
)


def reply(messages: list[dict]) -> str:
    if "Translate the user's question into English" in messages[0]["content"]:
        return TRANSLATED
    # "Passages:\n\n[1] title\ntext\n\n[2] …": the number of the one holding the sentence.
    shown = messages[-1]["content"].split("\n\n[")[1:]
    holding = [block.split("]")[0] for block in shown if SOURCE in " ".join(block.split())]
    return ANSWER.format(n=holding[0]) if holding else "没有一段提到。"


def test_a_chinese_question_over_an_english_pdf_gets_exact_english_marks(tmp_path: Path):
    from playwright.sync_api import expect

    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    with (
        OllamaStandIn(reply=reply) as standin,
        chromium() as browser,
        streamlit_server(
            tmp_path, OLLAMA_HOST=standin.url, KNOWNOTE_EMBEDDING_MODEL=MULTILINGUAL
        ) as server,
    ):
        page, dialogs = new_notebook(browser, server, "Papers", PDF, import_timeout=IMPORT_TIMEOUT)
        # The source's language and the notebook's model are shown.
        expect(page.get_by_text("· English ·").first).to_be_visible(timeout=30_000)
        expect(page.get_by_text(f"Meaning model: {MULTILINGUAL}")).to_be_visible()
        shot(page, "languages-01-sources")

        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        ask(page, QUESTION)
        page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)
        expect(page.get_by_text(f"Searched for: {TRANSLATED}, and the question")).to_be_visible()
        marks = page.locator(".kn-card mark.kn-span").evaluate_all(
            "marks => marks.map(m => [m.closest('.kn-card').dataset.document,"
            " m.dataset.start, m.dataset.end, m.textContent])"
        )
        shot(page, "languages-02-answer")
        assert marks, "the Chinese answer sentence leans on a span of the English text"
        assert any(SOURCE in " ".join(text.split()) for *_, text in marks), marks
        assert dialogs.messages == []

    store = Store.open(server.home / "knownote.duckdb")
    try:
        for document_id, start, end, text in marks:
            english = store.document_text(int(document_id))
            assert english[int(start) : int(end)] == text
            assert any(ch.isascii() and ch.isalpha() for ch in text)
    finally:
        store.close()
