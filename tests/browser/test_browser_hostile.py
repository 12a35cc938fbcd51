"""Markup and Markdown in documents, titles, file names, notebook names and questions shows as
text in a real browser: no dialog, no injected element, and the payload readable where it
belongs (import messages, the sources list, the extracted text, the question, the answer and its
cards).

`streamlit run app.py` with a temporary data folder and no Ollama, so the answer quotes the
passages (and so repeats the payloads). Screenshots go to test-output/.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.browser.harness import Dialogs, Server, chromium, shot, streamlit_server

pytestmark = pytest.mark.browser

TIMEOUT = 240_000  # ms: the first import loads the embedding model

PAYLOADS = [
    '<script>alert("s1")</script>',
    '<img src=x onerror=alert("s2")>',
    "<a href=\"javascript:alert('s3')\">a link</a>",
    "</mark><b>bold</b><mark>",
    '"><svg onload=alert("s5")>',
    '\' and ` and [x](javascript:alert("s6"))',
    ":red[red words] and $$x^2$$",
    "<iframe src=\"javascript:alert('s8')\"></iframe>",
]
SENTENCES = [f"The quoting rule keeps {p} as plain text in every view." for p in PAYLOADS]
TEXT = "Notes on the quoting rule.\n\n" + "\n\n".join(SENTENCES)
HTML_TITLE = '<script>alert("t2")</script> Hostile page'
PAGE = (
    f"<html><head><title>{html.escape(HTML_TITLE)}</title></head><body>"
    + "".join(f"<p>{html.escape(s)}</p>" for s in SENTENCES)
    + "</body></html>"
)
MD_TITLE = '<script>alert("t3")</script> heading'
MARKDOWN = f"# {MD_TITLE}\n\n" + "\n\n".join(SENTENCES)

# file name as uploaded -> (content, the title the sources list shows). Chromium sends a double
# quote in a file name as %22 (the HTML form encoding), so the names use single quotes.
FILES = {
    "<img src=x onerror=alert('f1')>.txt": (TEXT, "<img src=x onerror=alert('f1')>.txt"),
    "'><svg onload=alert('f2')>.html": (PAGE, HTML_TITLE),
    "[x](javascript:alert('f3')).md": (MARKDOWN, MD_TITLE),
    ":red[f4] $$f4$$ `tick` 'quote'.txt": (
        TEXT + "\n\nA fourth copy.",
        ":red[f4] $$f4$$ `tick` 'quote'.txt",
    ),
}
BROKEN = "[x](javascript:alert('e1')) :red[e1] <b>e1.pdf"  # empty: its import fails
NOTEBOOK = '<img src=x onerror=alert("nb")> :red[nb] $$n$$'
QUESTION = (
    'What does the quoting rule keep? <script>alert("q1")</script> '
    '[x](javascript:alert("q2")) :red[q3] $$q4$$'
)
# Anything here inside the app is markup that escaped its text.
INJECTED = (
    "script",
    "iframe",
    "object",
    "embed",
    "b",
    "[onerror]",
    "[onload]",
    'a[href^="javascript" i]',
    'img[src="x"]',
    ".katex",
)


@dataclass
class Running:
    server: Server
    page: object
    dialogs: Dialogs


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with chromium() as browser, streamlit_server(tmp_path_factory.mktemp("hostile")) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs = Dialogs()
        dialogs.watch(page)
        page.goto(server.url)
        yield Running(server, page, dialogs)


def injected(page) -> dict[str, int]:
    app = page.locator('[data-testid="stApp"]')
    counts = {selector: app.locator(selector).count() for selector in INJECTED}
    return {selector: n for selector, n in counts.items() if n}


def test_1_import_shows_names_and_titles_as_text(app: Running):
    from playwright.sync_api import expect

    page = app.page
    page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
    page.get_by_label("Name", exact=True).fill(NOTEBOOK)
    page.get_by_role("button", name="Create notebook").click()
    expect(page.get_by_role("heading", name=NOTEBOOK)).to_be_visible(timeout=60_000)
    page.get_by_text("New notebook", exact=True).click()
    page.get_by_label("Name", exact=True).fill(NOTEBOOK)
    page.get_by_role("button", name="Create notebook").click()
    expect(page.get_by_text(f"A notebook called “{NOTEBOOK}” already exists.")).to_be_visible()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        [
            {"name": name, "mimeType": "text/plain", "buffer": content.encode()}
            for name, (content, _) in FILES.items()
        ]
        + [{"name": BROKEN, "mimeType": "application/pdf", "buffer": b""}]
    )
    try:
        page.get_by_text("Last import").wait_for(timeout=TIMEOUT)
    finally:
        shot(page, "hostile-01-sources")
    for name in FILES:
        expect(page.get_by_text(f"✓ {name}: ")).to_be_visible()
    expect(page.get_by_text(f"{BROKEN}: {BROKEN} is empty (0 bytes)")).to_be_visible()
    for name, (_, title) in FILES.items():
        expect(page.get_by_text(title, exact=True)).to_be_visible()
        expect(page.get_by_text(name).last).to_be_visible()  # the caption under the title
    shot(page, "hostile-01-sources")
    assert injected(page) == {}
    assert app.dialogs.messages == []


def test_2_extracted_text_shows_every_payload(app: Running):
    from playwright.sync_api import expect

    page = app.page
    toggles = page.get_by_text("Show extracted text")
    for i in range(toggles.count()):
        toggles.nth(i).click()
        expect(page.locator('[data-testid="stCode"]')).to_have_count(i + 1, timeout=30_000)
    for code in page.locator('[data-testid="stCode"]').all():
        for payload in PAYLOADS:
            expect(code).to_contain_text(payload)
    shot(page, "hostile-02-extracted-text")
    assert injected(page) == {}
    assert app.dialogs.messages == []


def test_3_question_answer_and_cards_show_payloads_as_text(app: Running):
    from playwright.sync_api import expect

    page = app.page
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
    box = page.get_by_placeholder("Ask a question about this notebook's sources")
    box.fill(QUESTION)
    box.press("Enter")
    page.locator(".kn-card").first.wait_for(timeout=120_000)
    expect(page.locator('[data-testid="stChatMessage"]').filter(has_text=QUESTION)).to_be_visible()
    cards = page.locator(".kn-card")
    shown = "\n".join(cards.all_text_contents())
    assert all(payload in shown for payload in PAYLOADS)
    titles = [title for _, title in FILES.values()]
    assert any(title in shown for title in titles)
    # Exactly one highlight per card: the "</mark>" in the text did not end it.
    assert page.locator(".kn-card mark:not(.kn-span)").count() == cards.count()
    answer = page.locator(".kn-answer").first.text_content()
    quoted = [p for p in PAYLOADS if p in answer]
    print(f"payloads quoted in the answer: {quoted}")
    assert quoted
    page.get_by_text(QUESTION).first.scroll_into_view_if_needed()
    shot(page, "hostile-03-answer")
    # The chat is named after the question, in the chat picker.
    chat_picker = page.get_by_role("combobox", name="Chat").aria_snapshot()
    assert '<script>alert("q1")</script>' in chat_picker
    assert injected(page) == {}
    assert app.dialogs.messages == []
