"""In a real headless Chromium: a notebook archive made elsewhere is uploaded in the sidebar of
a fresh app, and a citation of its saved chat is clicked and lands on its highlighted passage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from knownote.store.db import Store
from tests.browser.harness import Dialogs, chromium, follow_citation, settle, shot, streamlit_server
from tests.conftest import corpus_file

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def knownote(*args: object) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OLLAMA_HOST": "http://127.0.0.1:9"}
    subprocess.run([sys.executable, "-m", "knownote.cli", *map(str, args)], cwd=ROOT, env=env,
                   check=True, capture_output=True)  # fmt: skip


def test_an_uploaded_archive_opens_with_its_chat_and_citations_resolve(tmp_path):
    from playwright.sync_api import expect

    elsewhere = tmp_path / "elsewhere" / "knownote.duckdb"
    pdf = corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")
    knownote("--db", elsewhere, "import", "Carried", pdf)
    knownote("--db", elsewhere, "ask", "Carried", "What is dense passage retrieval?")
    archive = tmp_path / "carried.knownote"
    knownote("--db", elsewhere, "export-notebook", "Carried", archive)

    (tmp_path / "app").mkdir()
    with chromium() as browser, streamlit_server(tmp_path / "app") as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs = Dialogs()
        dialogs.watch(page)
        page.goto(server.url)
        page.get_by_text("Create a notebook in the sidebar to begin.").wait_for(timeout=60_000)
        page.get_by_text("Move or back up").click()
        page.get_by_text("Import a notebook archive").click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(archive))
        expect(page.get_by_text("carried.knownote")).to_be_visible(timeout=60_000)
        settle(page)  # the upload's run has finished: the button sees the file
        page.get_by_role("button", name="Import notebook").click()
        expect(page.get_by_text("Imported the notebook “Carried”")).to_be_visible(timeout=60_000)
        shot(page, "archive-imported")
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        link = page.locator(".kn-answer a.kn-cite").first
        expect(link).to_be_visible(timeout=60_000)
        target = follow_citation(page, link)
        shot(page, "archive-citation")
        document_id = int(target.get_attribute("data-document"))
        start, end = int(target.get_attribute("data-start")), int(target.get_attribute("data-end"))
        marked = target.locator("mark:not(.kn-span)").text_content()
        assert dialogs.messages == []
        server.stop()
    store = Store.open(server.home / "knownote.duckdb")
    try:
        assert marked == store.document_text(document_id)[start:end]
    finally:
        store.close()
