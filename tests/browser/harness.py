"""Harness for browser tests: a real `streamlit run app.py` and Debian's headless Chromium.

Every browser test module uses these, so the server start-up and the browser flags live once.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.ollama_standin import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
OUTPUT = ROOT / "test-output"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


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
class Server:
    url: str
    home: Path
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def streamlit_server(tmp: Path, **env_extra: str) -> Iterator[Server]:
    """`streamlit run app.py` on a free port with a data folder in `tmp`.

    OLLAMA_HOST points at a closed port unless given, so answers take the quoted-passages path.
    KNOWNOTE_PASSWORD is removed unless given.
    """
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
    env.update(env_extra)
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
    server = Server(f"http://127.0.0.1:{port}", home, process, log)
    try:
        wait_healthy(server.url, process, log)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium browser (Playwright), or skip when Debian's chromium is absent."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def settle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit's run has finished and every page image has loaded.

    A link clicked before that can jump to a card the run then replaces, or to a place the
    images still push down.
    """
    page.wait_for_function(
        '!document.querySelector(\'[data-stale="true"], [data-testid="stStatusWidget"]\')',
        timeout=timeout,
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stImage\"] img')]"
        ".every(i => i.complete && i.naturalWidth > 0)",
        timeout=timeout,
    )


def follow_citation(page, link):
    """Click a [n] link of an answer once the page is still; the card it leads to, in view."""
    from playwright.sync_api import expect

    settle(page)
    link.click()
    target = page.locator(".kn-card:target, .kn-card:has(:target)")
    expect(target).to_be_in_viewport()
    return target


def new_notebook(browser, server: Server, name: str, *files: Path, import_timeout: float = 240_000):
    """A page of the app (its dialogs watched) with a new notebook `name` holding `files`, once
    their import is over. Returns (page, dialogs)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    dialogs = Dialogs()
    dialogs.watch(page)
    page.goto(server.url)
    page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create notebook").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=60_000)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploader.set_input_files([str(f) for f in files])
    page.get_by_text("Last import").wait_for(timeout=import_timeout)
    return page, dialogs


def ask(page, question: str) -> None:
    """Type a question into the chat box and send it."""
    box = page.get_by_placeholder("Ask a question about this notebook's sources")
    box.fill(question)
    box.press("Enter")


def shot(page, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{name}.png"))


@dataclass
class Dialogs:
    """Every dialog (alert, confirm, prompt) a page opens; injected script would land here."""

    messages: list[str] = field(default_factory=list)

    def watch(self, page) -> None:
        page.on("dialog", lambda d: (self.messages.append(d.message), d.dismiss()))
