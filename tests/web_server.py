"""A small web server on 127.0.0.1 for tests: pages, redirects and error codes, changeable live."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Site:
    """What each path answers: (status, content type or redirect target, body)."""

    routes: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    base: str = ""
    hits: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)  # the Host header of each request

    def page(self, path: str, body: bytes, content_type: str = "text/html") -> str:
        self.routes[path] = (200, content_type, body)
        return self.base + path

    def redirect(self, path: str, target: str, status: int = 302) -> str:
        self.routes[path] = (status, target, b"")
        return self.base + path


@contextmanager
def serve() -> Iterator[Site]:
    site = Site()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.hits.append(self.path)
            site.hosts.append(self.headers.get("Host", ""))
            status, kind, body = site.routes.get(self.path, (404, "text/plain", b"not here"))
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", kind)
            else:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
