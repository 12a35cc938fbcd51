"""The app's own MCP server: streamable HTTP on a thread of the app's process, over its store.

DuckDB lets one process open a database file read-write, so while the app runs no `knownote mcp`
can open it; the app serves MCP itself instead, sharing its open store (whose lock makes it safe
across threads), and `knownote mcp` over stdio relays to it (knownote.serve.relay). No Streamlit
here: the app calls `serve_in_background` once per process and shows what it returns.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from knownote.serve import PATH
from knownote.settings import Settings
from knownote.store.db import Store

HOST = "127.0.0.1"
# The server starts this long after the app's first run: the MCP SDK takes ~1.4 s of CPU to
# import, which would otherwise delay the first page the app paints.
START_DELAY = 5.0


@dataclass(frozen=True)
class Serving:
    """Where the app serves MCP (`url`), or why it does not (`problem`, in words; None when
    it was turned off)."""

    url: str | None
    problem: str | None = None
    writes: bool = False
    password: bool = False


def mcp_url(port: int, host: str = HOST) -> str:
    return f"http://{host}:{port}{PATH}"


def serve_in_background(store: Store, settings: Settings, password: str | None) -> Serving:
    """Serve MCP at http://127.0.0.1:PORT/mcp (settings.mcp_port) on a daemon thread until the
    process ends, with the password as the bearer token when one is set. A port that is taken
    is a `problem`, not an error: the app keeps working without MCP."""
    port = settings.mcp_port
    if port == 0:  # turned off: nothing to say
        return Serving(None)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((HOST, port))
    except OSError as e:
        listening.close()
        return Serving(
            None,
            f"The app serves no MCP: port {port} on {HOST} is taken ({e.strerror or e}), "
            "perhaps by `knownote mcp --http` or another copy of the app. Stop that, or set "
            "KNOWNOTE_MCP_PORT to a free port, and restart the app.",
        )
    listening.listen()  # clients that come early wait for the server in the backlog

    def run() -> None:
        time.sleep(START_DELAY)
        import uvicorn

        from knownote.serve.bearer import http_app
        from knownote.serve.server import build_server

        server = build_server(store, settings, allow_writes=settings.mcp_allow_writes)
        app = http_app(server, host=HOST, password=password, database=store.path)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        uvicorn.Server(config).run(sockets=[listening])

    threading.Thread(target=run, name="knownote-mcp", daemon=True).start()
    return Serving(mcp_url(port), writes=settings.mcp_allow_writes, password=password is not None)
