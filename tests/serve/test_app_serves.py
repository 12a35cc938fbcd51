"""The app serves MCP itself while it holds the database, and `knownote mcp` over stdio relays
to it: a real `streamlit run app.py` (opened once in Chromium, which starts it serving) and the
official MCP client over HTTP and over stdio, every range checked against the stored text."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from knownote.serve.background import serve_in_background
from knownote.settings import Settings
from knownote.store.db import Store
from tests.browser.harness import chromium, streamlit_server
from tests.mcp_library import (
    APP_URL,
    NOTEBOOK,
    ROOT,
    Library,
    assert_resolves,
    mcp_command,
    server_env,
)
from tests.ollama_standin import free_port
from tests.serve.test_server import stdio

PASSWORD = "correct horse battery"
START_TIMEOUT = 120.0


@dataclass(frozen=True)
class RunningApp:
    db: Path
    port: int  # where the app serves MCP

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture(scope="module")
def app(library: Library, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """The app on a copy of the library, behind a password, serving MCP on its own port."""
    folder = tmp_path_factory.mktemp("app")
    db = library.copy(folder)  # folder/home, the app's data folder
    port = free_port()
    env = server_env(KNOWNOTE_PASSWORD=PASSWORD, KNOWNOTE_MCP_PORT=str(port))
    with streamlit_server(folder, **env) as server:
        with chromium() as browser:  # closed before the tests: its event loop is this thread's
            page = browser.new_page()
            page.goto(server.url)  # the first run opens the store and starts the MCP server
            wait_listening(port, server.log)
        yield RunningApp(db, port)


def wait_listening(port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"the app served no MCP in {START_TIMEOUT:g} s:\n{log.read_text()}")


@pytest.mark.browser
def test_the_app_serves_mcp_with_its_password_while_it_holds_the_database(
    app: RunningApp, library: Library
):
    refused = httpx.post(app.url, json={}, headers={"Accept": "application/json"})
    assert refused.status_code == 401

    async def session():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {PASSWORD}"}, timeout=120)
        async with http, Client(streamable_http_client(app.url, http_client=http)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool(
                "search", {"notebook": NOTEBOOK, "question": "gravity hill illusion", "k": 3}
            )
            return names, found.structured_content["hits"]

    names, hits = anyio.run(session)
    assert {"list_notebooks", "search", "ask", "read"} <= names and "add_source" not in names
    assert hits[0]["document_id"] == library.page_id
    for hit in hits:
        assert_resolves(hit, library.texts)
        assert hit["link"].startswith(APP_URL)


@pytest.mark.browser
def test_knownote_mcp_over_stdio_relays_to_the_app_and_its_ranges_resolve(
    app: RunningApp, library: Library
):
    env = {"KNOWNOTE_PASSWORD": PASSWORD, "KNOWNOTE_MCP_PORT": str(app.port)}

    async def session():
        async with stdio(app.db, **env) as client:
            found = await client.call_tool(
                "search", {"notebook": NOTEBOOK, "question": "unrestricted relation discovery"}
            )
            hits = found.structured_content["hits"]
            reads = []
            for hit in hits:
                read = await client.call_tool(
                    "read",
                    {
                        "notebook": NOTEBOOK,
                        "source": hit["document_id"],
                        "start": hit["start"],
                        "end": hit["end"],
                    },
                )
                reads.append(read.structured_content)
            asked = await client.call_tool(
                "ask", {"notebook": NOTEBOOK, "question": "What is preemptive IE?", "quoted": True}
            )
            return hits, reads, asked.structured_content

    hits, reads, answer = anyio.run(session)
    assert len(hits) == 8 and hits[0]["document_id"] == library.pdf_id
    for hit, read in zip(hits, reads, strict=True):
        assert_resolves(hit, library.texts)
        assert read["text"] == hit["text"]  # the app's stored text, read back through the relay
    assert answer["extractive"] and answer["notice"].startswith("Quoted, as asked")
    for record in answer["citations"] + answer["supports"]:
        assert_resolves(record, library.texts)


@pytest.mark.browser
def test_a_wrong_password_for_the_app_is_said_in_words(app: RunningApp):
    done = subprocess.run(
        mcp_command(app.db),
        env=server_env(KNOWNOTE_PASSWORD="guess", KNOWNOTE_MCP_PORT=str(app.port)),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "serves MCP at" in done.stderr and "refused the password" in done.stderr


def test_knownote_mcp_says_what_to_do_when_the_database_is_held_and_nothing_serves(
    library: Library, tmp_path
):
    db = library.copy(tmp_path)
    holder = Store.open(db)  # another KnowNote process, as far as `knownote mcp` can tell
    try:
        done = subprocess.run(
            mcp_command(db),
            env=server_env(KNOWNOTE_MCP_PORT=str(free_port())),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.close()
    assert done.returncode == 1
    assert "is in use by another KnowNote process" in done.stderr
    assert "open it in the browser once" in done.stderr and "Traceback" not in done.stderr


def test_a_taken_port_is_said_in_words_and_nothing_is_served(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        store = Store.open(tmp_path / "knownote.duckdb")
        try:
            serving = serve_in_background(store, Settings().with_(mcp_port=port), None)
        finally:
            store.close()
    assert serving.url is None
    assert f"port {port} on 127.0.0.1 is taken" in serving.problem
    assert "KNOWNOTE_MCP_PORT" in serving.problem
