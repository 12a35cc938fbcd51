"""In a real Chromium, with no answer model: a paper's Overview and a quoted answer show its body
text, never its author block, a reference entry or a table row as a sentence. What each shown
sentence is, is read from the paper itself (the same extraction the import made), by its offsets
for the Overview's quotes and by its words for the answer's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knownote.read.extract import extract
from knownote.read.roles import PROSE, Roles, document_roles
from tests.browser.harness import ask, chromium, new_notebook, shot, streamlit_server

pytestmark = pytest.mark.browser

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
IMPORT_TIMEOUT = 240_000
ANSWER_TIMEOUT = 120_000
# Its retrieval results are a table; its authors' affiliations and their papers are cited.
QUESTION = "How does DPR compare with BM25 on Natural Questions and TriviaQA?"
SHOWN = PROSE | {"caption", "footnote"}


def words_key(text: str) -> tuple[str, list[int]]:
    """The letters and digits of `text`, lower-cased, and where each is in `text`."""
    at = [i for i, c in enumerate(text) if c.isalnum()]
    return "".join(text[i].lower() for i in at), at


def role_of_quote(quote: str, text: str, key: tuple[str, list[int]], roles: Roles) -> str:
    """The role where the quote's words are found in the text (its longest run of words without
    a citation mark, which a quote leaves out)."""
    piece = max(re.split(r"\[\d+\]|\(English\)|…", quote), key=len)
    wanted = words_key(piece)[0][:60]
    at = key[0].find(wanted)
    assert len(wanted) >= 20 and at >= 0, f"not found in the paper: {quote!r}"
    return roles.at(key[1][at])


def test_a_paper_is_quoted_from_its_body_text(tmp_path: Path):
    from playwright.sync_api import expect

    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    extracted = extract(PDF.read_bytes(), PDF.name)
    text = extracted.text
    roles = Roles(document_roles(text, extracted.headings, extracted.roles))
    # the parts that must not be quoted are there to be quoted
    assert {"front_matter", "reference", "table"} <= {r.role for r in roles.ranges}
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page, dialogs = new_notebook(browser, server, "Paper", PDF, import_timeout=IMPORT_TIMEOUT)

        page.locator('[data-testid="stRadio"] label').filter(has_text="Overview").click()
        quotes = page.locator(".kn-quote")
        quotes.first.wait_for(timeout=ANSWER_TIMEOUT)
        shot(page, "roles-01-overview")
        assert quotes.count() >= 3
        for i in range(quotes.count()):
            quote = quotes.nth(i)
            start, end = (
                int(quote.get_attribute("data-start")),
                int(quote.get_attribute("data-end")),
            )
            kinds = {p.role for p in roles.pieces(start, end)}
            assert kinds <= SHOWN | {"page_header", "page_footer"}, (text[start:end], kinds)
            assert roles.at(start) in SHOWN, text[start:end]

        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        ask(page, QUESTION)
        answer = page.locator(".kn-answer").last
        answer.locator("a.kn-cite").first.wait_for(timeout=ANSWER_TIMEOUT)
        expect(page.get_by_text("Not connected").first).to_be_visible()
        shot(page, "roles-02-answer")
        key = words_key(text)
        sentences = [s for s in re.split(r"(?<=\])\s+|\n+", answer.inner_text()) if s.strip()]
        quoted = [s for s in sentences if re.search(r"\[\d+\]", s)]
        assert quoted
        for sentence in quoted:
            if "·" in sentence:  # a table is quoted as its rows, and says so by its dots
                assert role_of_quote(sentence, text, key, roles) == "table"
                continue
            assert role_of_quote(sentence, text, key, roles) in SHOWN, sentence
        assert dialogs.messages == []
