"""End to end in a real headless Chromium: `streamlit run app.py`, a real PDF, a question.

The server runs with a temporary data folder and OLLAMA_HOST at a closed port, so answers take
the quoted-passages path. Screenshots go to test-output/ at the repository root.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from knownote.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PDF = CORPUS / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
CHROMIUM = Path("/usr/bin/chromium")
OUTPUT = ROOT / "test-output"
HOSTILE_NAME = "<img src=x onerror=alert(3)>.txt"
HOSTILE = (
    "Notes on quoting markup.\n\n"
    "The page said <script>alert(1)</script> and then <img src=x onerror=alert(2)> "
    "inside a paragraph about quoting markup safely."
)
IMPORT_TIMEOUT = 240_000  # ms: the first import loads the embedding model
ANSWER_TIMEOUT = 120_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{log.read_text()}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response,
        ):
            if response.read().strip() == b"ok":
                return
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy in {timeout}s:\n{log.read_text()}")


@dataclass
class Running:
    url: str
    home: Path
    process: subprocess.Popen
    page: object
    dialogs: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    if not PDF.exists():
        pytest.skip(f"needs the shared corpus ({PDF} is absent)")
    from playwright.sync_api import sync_playwright

    tmp = tmp_path_factory.mktemp("browser")
    home = tmp / "home"
    port = free_port()
    env = {
        **os.environ,
        "KNOWNOTE_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    env.pop("KNOWNOTE_PASSWORD", None)
    log = tmp / "streamlit.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                "--server.port", str(port),
                "--server.address", "127.0.0.1",
                "--server.headless", "true",
            ],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    running = Running(url, home, process, page=None)
    try:
        wait_healthy(url, process, log)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=str(CHROMIUM),
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.on("dialog", lambda d: (running.dialogs.append(d.message), d.dismiss()))
            running.page = page
            page.goto(url)
            set_up_notebook(page)
            yield running
            browser.close()
    finally:
        running.stop()


def shot(page, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{name}.png"))


def set_up_notebook(page) -> None:
    """Create a notebook and upload the PDF and a text file full of markup, in one drop."""
    from playwright.sync_api import expect

    page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
    shot(page, "01-empty")
    page.get_by_label("Name").fill("Retrieval papers")
    page.get_by_role("button", name="Create notebook").click()
    expect(page.get_by_role("heading", name="Retrieval papers")).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        [
            {"name": PDF.name, "mimeType": "application/pdf", "buffer": PDF.read_bytes()},
            {"name": HOSTILE_NAME, "mimeType": "text/plain", "buffer": HOSTILE.encode()},
        ]
    )
    page.get_by_text("Last import").wait_for(timeout=IMPORT_TIMEOUT)
    expect(page.get_by_text(f"✓ {PDF.name}: ")).to_be_visible()
    expect(page.get_by_text(f"✓ {HOSTILE_NAME}: ")).to_be_visible()
    expect(page.get_by_text("Use in answers")).to_have_count(2)
    shot(page, "02-sources")
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()


def ask(page, question: str) -> None:
    box = page.get_by_placeholder("Ask a question about this notebook's sources")
    box.fill(question)
    box.press("Enter")


def test_markup_in_a_document_shows_as_text(app: Running):
    from playwright.sync_api import expect

    page = app.page
    ask(page, "What did the page say about quoting markup?")
    card = page.locator(".kn-card:visible").filter(has_text=HOSTILE_NAME).first
    card.wait_for(timeout=ANSWER_TIMEOUT)
    expect(card).to_contain_text("<script>alert(1)</script>")
    expect(card).to_contain_text("<img src=x onerror=alert(2)>")
    assert page.locator(".kn-card script, .kn-card img, .kn-answer img").count() == 0
    shot(page, "03-markup-as-text")
    assert app.dialogs == []


def test_import_ask_and_read_highlighted_sources(app: Running):
    from playwright.sync_api import expect

    page = app.page
    started = time.monotonic()
    page.get_by_role("button", name="New chat").click()
    expect(page.locator(".kn-card")).to_have_count(0, timeout=30_000)
    ask(page, "What is dense passage retrieval?")
    cards = (
        page.locator(".kn-card:visible").filter(has_text=PDF.name).filter(has=page.locator("mark"))
    )
    cards.first.wait_for(timeout=ANSWER_TIMEOUT)
    answered_in = time.monotonic() - started
    expect(page.locator(".kn-answer a.kn-cite").first).to_be_visible()
    first = cards.first
    expect(first.locator(".kn-head")).to_contain_text("p. ")
    found = [
        (
            int(card.get_attribute("data-document")),
            int(card.get_attribute("data-start")),
            int(card.get_attribute("data-end")),
            card.locator("mark").text_content(),
            card.locator(".kn-head").text_content(),
        )
        for card in cards.all()
    ]
    page.get_by_text("What is dense passage retrieval?").last.scroll_into_view_if_needed()
    shot(page, "04-answer")
    page.locator(".kn-answer a.kn-cite").first.click()
    expect(page.locator(".kn-card:target")).to_be_in_viewport()
    shot(page, "05-citation-link")
    assert app.dialogs == []

    app.stop()  # the server holds the database; read it once it is gone
    store = Store.open(app.home / "knownote.duckdb")
    try:
        for document_id, start, end, marked, header in found:
            text = store.document_text(document_id)
            passage = next(
                p for p in store.passages(document_id) if (p.start, p.end) == (start, end)
            )
            assert marked == passage.text == text[start:end]
            page_no = passage.page_start
            assert f"p. {page_no}" in header or f"pp. {page_no}–" in header
    finally:
        store.close()
    print(f"answer shown {answered_in:.1f}s after asking")
