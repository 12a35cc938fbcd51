"""`knownote mcp` over stdio while the app holds the database: relayed to the app's MCP server.

A desktop client starts `knownote mcp` whether or not the app runs. When the app has the database
open (DuckDB lets one process do so), the app serves MCP over HTTP itself
(knownote.serve.background), and this relays the client's JSON-RPC messages to it unchanged, and
its answers back, through the SDK's stdio server and streamable-HTTP client transports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.jsonrpc import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from knownote.errors import DatabaseInUse, KnowNoteError
from knownote.serve import PATH
from knownote.serve.bearer import DATABASE_PATH

CHECK_SECONDS = 5.0
# Answers can take minutes (a written answer on a CPU); the app's server streams nothing before.
READ_SECONDS = 600.0


def app_serving(url: str, password: str | None, database: Path, in_use: DatabaseInUse) -> None:
    """Check that the app's MCP server at `url` answers, takes the password and serves the
    database `database`; raise KnowNoteError saying what to do when it does not."""
    where = url.removesuffix(PATH) + DATABASE_PATH
    try:
        response = httpx2.get(where, headers=bearer(password), timeout=CHECK_SECONDS)
    except httpx2.TransportError:
        raise KnowNoteError(
            f"{in_use} The KnowNote app serves MCP itself, but nothing answers at {url}: if the "
            "app is running, open it in the browser once (it starts serving then) and check that "
            "KNOWNOTE_MCP_PORT is the same for the app and here; otherwise stop the other "
            "knownote command."
        ) from None
    if response.status_code in (401, 429):
        raise KnowNoteError(
            f"The KnowNote app holds the database and serves MCP at {url}, but refused the "
            f"password: {response.json().get('error_description', response.status_code)} Give "
            "this command the app's password (KNOWNOTE_PASSWORD, or .streamlit/secrets.toml)."
        )
    try:
        served = response.json()["database"]
    except (ValueError, KeyError, TypeError):
        raise KnowNoteError(
            f"{in_use} Something that is not KnowNote answers at {url}: set KNOWNOTE_MCP_PORT "
            "to the port the app serves MCP on."
        ) from None
    if served is None or Path(served) != database.resolve():
        raise KnowNoteError(
            f"{in_use} The KnowNote app at {url} serves another database ({served}), so its "
            "notebooks are not these: give --db that database, or open this one in the app."
        )


def bearer(password: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {password}"} if password else {}


def relay_stdio(url: str, password: str | None) -> None:
    """Relay this process's stdio MCP session to the server at `url` until either side closes."""
    notice = f"knownote: the app holds the database; relaying to its MCP server at {url}"
    print(notice, file=sys.stderr, flush=True)
    anyio.run(_relay, url, password)


class Stamp:
    """The HTTP headers streamable HTTP wants on each message, which the SDK's client session
    would set: the protocol version (negotiated by `initialize`, or carried by each request of
    the stateless protocol), the method and the name a request is about."""

    def __init__(self) -> None:
        self.negotiated: str | None = None
        self.initialize_id: object = None

    def outgoing(self, message: SessionMessage) -> SessionMessage:
        inner = message.message
        headers: dict[str, str] = {}
        if isinstance(inner, JSONRPCRequest | JSONRPCNotification):
            params = inner.params or {}
            meta = params.get("_meta")
            version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
            if isinstance(version, str):
                headers[MCP_PROTOCOL_VERSION_HEADER] = version
                headers[MCP_METHOD_HEADER] = inner.method
                named = params.get(NAME_BEARING_METHODS.get(inner.method, ""))
                if isinstance(named, str):
                    headers[MCP_NAME_HEADER] = encode_header_value(named)
            elif inner.method == "initialize" and isinstance(inner, JSONRPCRequest):
                self.initialize_id = inner.id
            elif self.negotiated:
                headers[MCP_PROTOCOL_VERSION_HEADER] = self.negotiated
        elif self.negotiated:
            headers[MCP_PROTOCOL_VERSION_HEADER] = self.negotiated
        if not headers:
            return message
        return SessionMessage(inner, metadata=ClientMessageMetadata(headers=headers))

    def incoming(self, message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, JSONRPCResponse) and inner.id == self.initialize_id:
            version = inner.result.get("protocolVersion")
            self.negotiated = version if isinstance(version, str) else None


def _problem(error: Exception) -> None:
    print(f"knownote: relay: {error}", file=sys.stderr, flush=True)


async def _relay(url: str, password: str | None) -> None:
    stamp = Stamp()
    timeout = httpx2.Timeout(30.0, read=READ_SECONDS)
    http = httpx2.AsyncClient(headers=bearer(password), timeout=timeout)
    async with (
        http,
        stdio_server() as (from_client, to_client),
        streamable_http_client(url, http_client=http) as (from_app, to_app),
        anyio.create_task_group() as relaying,
    ):

        async def upstream() -> None:
            async for item in from_client:
                if isinstance(item, Exception):
                    _problem(item)
                    continue
                await to_app.send(stamp.outgoing(item))
            relaying.cancel_scope.cancel()  # the client hung up

        async def downstream() -> None:
            async for item in from_app:
                if isinstance(item, Exception):
                    _problem(item)
                    continue
                stamp.incoming(item)
                await to_client.send(item)
            relaying.cancel_scope.cancel()

        relaying.start_soon(upstream)
        relaying.start_soon(downstream)
