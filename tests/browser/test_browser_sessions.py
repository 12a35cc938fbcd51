"""Several sessions, a second process, and a server killed mid-answer, in a real headless Chromium.

One `streamlit run app.py` serves four browser contexts (four Streamlit sessions) that create
notebooks, upload files and ask questions at the same time, into the same and into different
notebooks. Then a `knownote` command and a second server are pointed at the same database and
must say that it is in use. Last, the server is killed with SIGKILL while an answer streams and
started again: the chat comes back with the question. After each step the database is counted
and checked whole (tests/invariants.py). Written answers come from tests/ollama_standin.py, which
stands in for an Ollama server (none can be installed where these tests run).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from knownote.settings import Settings
from knownote.store.db import Store
from tests.browser.harness import ROOT, Dialogs, Server, ask, chromium, shot, streamlit_server
from tests.conftest import corpus_file
from tests.invariants import assert_store_consistent, row_counts
from tests.ollama_standin import OllamaStandIn

pytestmark = pytest.mark.browser

IMPORT_TIMEOUT = 300_000  # ms: four imports at once, and the first one loads the model
ANSWER_TIMEOUT = 180_000
REPLY = "A gravity hill is an optical illusion [1]. The horizon is hidden from view [2]. " * 3
GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
# (notebook, files) per session: two sessions share a notebook and both upload GRAVITY.
SESSIONS = [
    ("Shared", [GRAVITY, "docs/office/docx_en_rag_intro.docx"]),
    ("Shared", [GRAVITY, "docs/office/docx_iceland_horse_short.docx"]),
    ("Own two", ["docs/web_text/txt_war_and_peace_excerpt.txt"]),
    ("Own three", ["docs/office/pptx_sample_presentation_4slides.pptx"]),
]
QUESTION = "What is a gravity hill?"


@dataclass
class App:
    tmp: Path
    server: Server
    browser: object
    standin: OllamaStandIn

    @property
    def db(self) -> Path:
        return self.server.home / "knownote.duckdb"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    for _, files in SESSIONS:
        for relative in files:
            corpus_file(relative)
    tmp = tmp_path_factory.mktemp("sessions")
    with (
        OllamaStandIn(reply=REPLY) as standin,
        chromium() as browser,
        streamlit_server(tmp, OLLAMA_HOST=standin.url) as server,
    ):
        yield App(tmp, server, browser, standin)


def open_page(app: App, dialogs: Dialogs):
    page = app.browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    dialogs.watch(page)
    page.goto(app.server.url)
    return page


def create_notebook(page, name: str) -> None:
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create notebook").click()


def upload(page, files: list[str]) -> None:
    paths = [corpus_file(relative) for relative in files]
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        [{"name": p.name, "mimeType": "application/octet-stream", "buffer": p.read_bytes()}
         for p in paths]
    )  # fmt: skip


def no_exceptions(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def counted(db: Path) -> dict[str, int]:
    store = Store.open(db)
    try:
        settings = Settings()
        assert_store_consistent(store, settings.passage_size, settings.passage_overlap)
        return row_counts(store)
    finally:
        store.close()


def test_four_sessions_at_once_lose_and_duplicate_nothing(app: App):
    from playwright.sync_api import expect

    dialogs = Dialogs()
    pages = [open_page(app, dialogs) for _ in SESSIONS]
    for page in pages:
        page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
    create_notebook(pages[0], "Shared")
    expect(pages[0].get_by_role("heading", name="Shared")).to_be_visible(timeout=120_000)
    for page, (name, _) in list(zip(pages, SESSIONS, strict=True))[2:]:
        create_notebook(page, name)  # both at once
    pages[1].reload()
    for page, (name, _) in zip(pages, SESSIONS, strict=True):
        expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=120_000)

    for page, (_, files) in zip(pages, SESSIONS, strict=True):
        upload(page, files)  # four imports run in the server at once
    for page, (_, files) in zip(pages, SESSIONS, strict=True):
        page.get_by_text("Last import").wait_for(timeout=IMPORT_TIMEOUT)
        for relative in files:
            expect(page.get_by_text(Path(relative).name + ":").first).to_be_visible()
        no_exceptions(page)
    # The file both Shared sessions uploaded is kept once; the second upload is told it is
    # there. Both sessions show the notebook's one import queue.
    for page in pages[:2]:
        shared_results = page.locator("body").inner_text()
        assert shared_results.count(f"✓ {Path(GRAVITY).name}") == 1, shared_results
        assert shared_results.count(f"{Path(GRAVITY).name}: already in this notebook") == 1

    for page in pages:
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        page.get_by_placeholder("Ask a question about this notebook's sources").wait_for()
    for page in pages:
        ask(page, QUESTION)  # four answers at once
    for i, page in enumerate(pages):
        page.locator(".kn-card:visible").first.wait_for(timeout=ANSWER_TIMEOUT)
        expect(page.get_by_text("Answered by llama3.2:latest").first).to_be_visible()
        no_exceptions(page)
        shot(page, f"sessions-{i}")
    assert dialogs.messages == []
    # The model is asked the four questions (and, after the imports, for the sources' overviews).
    answers = [c for c in app.standin.chats() if QUESTION in c["messages"][-1]["content"]]
    assert len(answers) == len(SESSIONS)

    app.server.stop()  # it holds the database; count the rows once it is gone
    rows = counted(app.db)
    print(f"4 sessions: 3 notebooks created, 6 files uploaded, 4 questions; rows {rows}")
    assert rows["notebooks"] == 3
    assert rows["documents"] == 5  # six uploads, one of them the same file twice
    assert rows["chats"] == 4 and rows["messages"] == 8


def test_a_second_process_is_told_the_database_is_in_use(app: App):
    from playwright.sync_api import expect

    for folder in ("first", "second"):
        (app.tmp / folder).mkdir()
    with streamlit_server(app.tmp / "first", KNOWNOTE_HOME=str(app.server.home),
                          OLLAMA_HOST=app.standin.url) as first:  # fmt: skip
        dialogs = Dialogs()
        page = app.browser.new_page()
        dialogs.watch(page)
        page.goto(first.url)
        expect(page.get_by_role("heading", name="Shared")).to_be_visible(timeout=120_000)

        command = subprocess.run(
            [sys.executable, "-m", "knownote.cli", "--db", str(app.db), "notebooks"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert command.returncode != 0
        assert "in use by another KnowNote process" in command.stderr
        assert "Traceback" not in command.stderr

        second_tmp = app.tmp / "second"
        with streamlit_server(second_tmp, KNOWNOTE_HOME=str(app.server.home)) as second:
            other = app.browser.new_page()
            dialogs.watch(other)
            other.goto(second.url)
            expect(other.get_by_text("in use by another KnowNote process")).to_be_visible(
                timeout=60_000
            )
            assert other.get_by_text("Traceback").count() == 0
            shot(other, "second-process")
            page.reload()
            expect(page.get_by_role("heading", name="Shared")).to_be_visible(timeout=60_000)
            no_exceptions(page)
            first.stop()  # once the first server is gone, the second one opens the database
            other.reload()
            expect(other.get_by_role("heading", name="Shared")).to_be_visible(timeout=120_000)
        assert dialogs.messages == []
    rows = counted(app.db)
    assert (rows["documents"], rows["chats"], rows["messages"]) == (5, 4, 8)


def test_a_server_killed_mid_answer_reopens_the_chat_with_the_question(app: App):
    from playwright.sync_api import expect

    app.standin.delay = 0.2  # a slow model: the answer is still streaming when the kill comes
    tmp = app.tmp / "killed"
    tmp.mkdir()
    env = {"KNOWNOTE_HOME": str(app.server.home), "OLLAMA_HOST": app.standin.url}
    asked = len(app.standin.chats())
    with streamlit_server(tmp, **env) as server:
        page = app.browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(server.url)
        expect(page.get_by_role("heading", name="Shared")).to_be_visible(timeout=120_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        page.get_by_role("button", name="New chat").click()
        expect(page.locator(".kn-card")).to_have_count(0, timeout=30_000)
        ask(page, "Where is the horizon hidden?")
        page.locator(".kn-answer").filter(has_text="optical illusion").last.wait_for(
            timeout=ANSWER_TIMEOUT
        )
        assert len(app.standin.chats()) == asked + 1
        server.process.kill()  # SIGKILL, mid-stream
        server.process.wait()
    app.standin.delay = 0.0
    with streamlit_server(tmp, **env) as server:
        page.goto(server.url)
        expect(page.get_by_role("heading", name="Shared")).to_be_visible(timeout=120_000)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        expect(page.get_by_text("Where is the horizon hidden?").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("This question was not answered").first).to_be_visible()
        expect(page.get_by_text("The answer cites no passage.")).to_have_count(0)
        no_exceptions(page)
        shot(page, "reopened-after-kill")
    rows = counted(app.db)
    assert (rows["chats"], rows["messages"]) == (5, 9)  # the question, and no broken answer
