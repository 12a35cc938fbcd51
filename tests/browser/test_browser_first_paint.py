"""The first paint of a notebook of 20 sources in a real browser, in the server's CPU seconds
(the machine's load does not inflate them, unlike wall-clock time)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.browser.harness import chromium, settle, streamlit_server
from tests.ui.test_app_first_paint import FIRST_PAINT_CPU_SECONDS, twenty_sources


def cpu_seconds(pid: int) -> float:
    """User plus system time of a process and its threads so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_notebook_of_twenty_sources_paints_in_under_two_cpu_seconds(tmp_path: Path, embedder):
    from playwright.sync_api import expect

    twenty_sources(tmp_path / "home", embedder)
    with streamlit_server(tmp_path) as server, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        for visit in ("first visit", "second visit"):
            before = cpu_seconds(server.process.pid)
            page.goto(server.url)
            expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
            settle(page)
            spent = cpu_seconds(server.process.pid) - before
            print(f"{visit}: {spent:.2f} s of the server's CPU")
            assert spent < FIRST_PAINT_CPU_SECONDS, f"{visit}: {spent:.2f} s of CPU"
        before = cpu_seconds(server.process.pid)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()
        expect(page.get_by_text("source-19.txt", exact=True)).to_be_visible(timeout=60_000)
        settle(page)
        spent = cpu_seconds(server.process.pid) - before
        print(f"Sources view: {spent:.2f} s of the server's CPU")
        assert spent < FIRST_PAINT_CPU_SECONDS, f"Sources: {spent:.2f} s of CPU"
        for i in range(20):
            expect(page.get_by_text(f"source-{i:02}.txt", exact=True)).to_be_visible()
