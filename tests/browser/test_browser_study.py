"""Studying in a real browser: cards made in the background, a review session of five cards
rated again/hard/good/easy, a card opening its span in its source, and a quiz answered."""

from __future__ import annotations

from pathlib import Path

from tests.browser.harness import chromium, new_notebook, settle, shot, streamlit_server
from tests.browser.test_browser_a11y import ANSWER_TIMEOUT, IMPORT_TIMEOUT, NOTES
from tests.conftest import corpus_file

RATINGS = ["Again", "Hard", "Good", "Easy", "Good"]
OPTIONS = '[data-testid="stRadio"] [role="radiogroup"] label'


def choose(page, label: str) -> None:
    page.locator(OPTIONS).filter(has_text=label).first.click()
    settle(page)


def test_a_review_of_five_cards_a_span_opened_and_a_quiz_answered(tmp_path: Path):
    from playwright.sync_api import expect

    notes = tmp_path / "tardigrades.txt"
    notes.write_text(NOTES, encoding="utf-8")
    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page, dialogs = new_notebook(
            browser, server, "Reading", gravity, notes, import_timeout=IMPORT_TIMEOUT
        )
        choose(page, "Study")
        page.get_by_role("button", name="Make cards for 2 new sources").click()
        start = page.get_by_role("button", name="due cards")
        expect(start).to_be_visible(timeout=ANSWER_TIMEOUT)
        start.click()

        card = page.locator(".st-key-review_card")
        for i, rating in enumerate(RATINGS, start=1):
            expect(page.get_by_text(f"Card {i} of")).to_be_visible(timeout=ANSWER_TIMEOUT)
            expect(card.locator(".kn-card-front")).to_contain_text("_____")
            card.get_by_role("button", name="Show the answer").click()
            expect(card.locator(".kn-card-back mark")).to_be_visible(timeout=ANSWER_TIMEOUT)
            expect(card.locator(".kn-card-where")).to_contain_text("chars")
            if i == 1:
                shot(page, "study-01-review")
            card.get_by_role("button", name=rating, exact=True).click()
        expect(page.get_by_text("Card 6 of").or_(page.get_by_text("Review done"))).to_be_visible(
            timeout=ANSWER_TIMEOUT
        )

        # A card opens the sentence it was made from, highlighted in its source.
        choose(page, "Cards (")
        first = page.locator(".kn-card-back").first
        answer = first.locator("mark").inner_text()
        page.get_by_role("button", name="Open its span").first.click()
        opened = page.locator(".st-key-opened_range")
        expect(opened).to_be_visible(timeout=ANSWER_TIMEOUT)
        expect(opened.locator("mark").first).to_contain_text(answer)
        shot(page, "study-02-opened")

        choose(page, "Study")
        choose(page, "Quiz")
        page.get_by_role("button", name="New quiz").click()
        questions = page.locator('[class*="st-key-quiz_question_"]')
        expect(questions.first).to_be_visible(timeout=ANSWER_TIMEOUT)
        for i in range(questions.count()):
            questions.nth(i).locator(OPTIONS).first.click()
            settle(page)
        page.get_by_role("button", name="Check the answers").click()
        expect(page.get_by_text(f"of {questions.count()} right.")).to_be_visible(
            timeout=ANSWER_TIMEOUT
        )
        shot(page, "study-03-quiz")
        assert dialogs.messages == []
