"""The MCP server over streamable HTTP, behind the app's password as a bearer token.

Every HTTP request must carry `Authorization: Bearer PASSWORD` when the app has a password; wrong
guesses are slowed down per client address exactly as the app's sign-in does (access.GUESSES).
Without a password the server listens on the loopback address only.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from knownote.access import GUESSES, password_matches
from knownote.errors import KnowNoteError
from knownote.serve import PATH

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Says which database file a server serves, so `knownote mcp` relays only to the one it was given.
DATABASE_PATH = "/knownote/database"
NEEDS_TOKEN = (
    "KnowNote's MCP server needs the app's password as a bearer token: send the header "
    "Authorization: Bearer PASSWORD."
)
WRONG_TOKEN = "That bearer token is not the app's password."


class BearerGate:
    """An ASGI app that lets a request through to `app` only with the password as its token."""

    def __init__(self, app: App, password: str) -> None:
        self.app, self.password = app, password

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("unknown",))[0]
        waiting = GUESSES.wait(address)
        if waiting > 0:
            wait = math.ceil(waiting)
            message = f"Too many wrong passwords from your address: try again in {wait} s."
            await refuse(send, 429, message)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and password_matches(token.strip(), self.password):
            GUESSES.succeeded(address)
            await self.app(scope, receive, send)
            return
        if header:
            GUESSES.failed(address)
        await refuse(send, 401, WRONG_TOKEN if header else NEEDS_TOKEN)


async def refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": "unauthorized", "error_description": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="knownote"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class DatabaseRoute:
    """An ASGI app that answers GET DATABASE_PATH with the database file served, else `app`."""

    def __init__(self, app: App, database: Path | None) -> None:
        self.app = app
        served = str(database.resolve()) if database is not None else None
        self.body = json.dumps({"database": served}).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != DATABASE_PATH:
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(self.body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": self.body})


def http_app(server: MCPServer, *, host: str, password: str | None, database: Path | None) -> App:
    """The ASGI app serving MCP at PATH (and which database at DATABASE_PATH), behind the
    password when one is set. Raises KnowNoteError for a non-loopback address without one."""
    if password is None and host not in LOOPBACK:
        raise KnowNoteError(
            f"Serving on {host} without a password would let anyone who reaches this computer "
            "read your notebooks. Set a password (KNOWNOTE_PASSWORD, as for the app) or serve on "
            "127.0.0.1."
        )
    app: App = DatabaseRoute(
        server.streamable_http_app(streamable_http_path=PATH, host=host), database
    )
    return app if password is None else BearerGate(app, password)


def serve_http(
    server: MCPServer, *, host: str, port: int, password: str | None, database: Path | None
) -> None:
    """Serve MCP at http://HOST:PORT/mcp until stopped; the password, when set, as the token.
    Raises KnowNoteError for a non-loopback address without a password."""
    import uvicorn

    app = http_app(server, host=host, password=password, database=database)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"knownote: serving MCP at http://{shown}:{port}{PATH}"
        + (" (bearer token: the app's password)" if password else " (no password set)"),
        file=sys.stderr,
        flush=True,
    )
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
