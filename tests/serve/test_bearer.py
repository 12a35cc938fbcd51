"""`knownote mcp --http` behind the app's password: refused without it or with a wrong one, and
served to the official MCP client that sends it as a bearer token."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

from knownote.errors import KnowNoteError
from knownote.serve.bearer import DATABASE_PATH, http_app
from tests.mcp_library import NOTEBOOK, ROOT, Library, assert_resolves, mcp_command, server_env
from tests.ollama_standin import free_port

PASSWORD = "correct horse battery"
START_TIMEOUT = 60.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def url(library: Library, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("http")
    db = library.copy(folder)
    port = free_port()
    log = folder / "mcp.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            mcp_command(db, "--http", "--port", str(port)),
            env=server_env(KNOWNOTE_PASSWORD=PASSWORD),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_listening(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_listening(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"knownote mcp --http exited:\n{log.read_text()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"knownote mcp --http did not listen in {START_TIMEOUT:g} s")


def test_a_request_without_the_token_is_refused_in_words(url):
    response = httpx.post(url, json=INITIALIZE, headers=ACCEPT)
    assert response.status_code == 401
    assert "needs the app's password as a bearer token" in response.json()["error_description"]
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_which_database_is_served_is_said_behind_the_password(url):
    where = url.removesuffix("/mcp") + DATABASE_PATH
    assert httpx.get(where).status_code == 401
    served = httpx.get(where, headers={"Authorization": f"Bearer {PASSWORD}"}).json()
    assert served["database"].endswith("knownote.duckdb")


def test_a_wrong_token_is_refused(url):
    wrong = {**ACCEPT, "Authorization": "Bearer guess"}
    response = httpx.post(url, json=INITIALIZE, headers=wrong)
    assert response.status_code == 401
    assert "not the app's password" in response.json()["error_description"]


def test_the_official_client_with_the_password_searches_and_reads(url, library: Library):
    async def session():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {PASSWORD}"}, timeout=120)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool(
                "search", {"notebook": NOTEBOOK, "question": "gravity hill illusion", "k": 3}
            )
            hit = found.structured_content["hits"][0]
            read = await client.call_tool(
                "read",
                {"notebook": NOTEBOOK, "source": hit["document_id"], "start": 0, "end": 300},
            )
            return names, found.structured_content["hits"], read.structured_content

    names, hits, read = anyio.run(session)
    assert {"search", "ask", "read"} <= names and "add_source" not in names
    assert hits[0]["document_id"] == library.page_id
    for record in [*hits, read]:
        assert_resolves(record, library.texts)


def test_another_address_than_loopback_needs_a_password():
    with pytest.raises(KnowNoteError, match="without a password would let anyone"):
        http_app(MCPServer("test"), host="0.0.0.0", password=None, database=None)
