"""A stand-in for an Ollama server, for tests only.

No Ollama server can be installed on the machines these tests run on, so the suite starts this
small HTTP server on 127.0.0.1 (a free port, in a thread) and points the real `ollama` client at
it. It follows Ollama's documented API for the calls KnowNote makes:

- `GET /api/tags`: `{"models": [{"name", "model", "modified_at", "size", "digest", "details"}]}`
- `POST /api/show`: `details`, `model_info` with `general.architecture` and
  `<arch>.context_length`, `parameters`, `template`, `capabilities`
- `POST /api/chat`: with `"stream": true` (the default) a chunked `application/x-ndjson` body,
  one `{"model", "created_at", "message": {"role": "assistant", "content"}, "done": false}` per
  piece and a last line with `"done": true`, `done_reason`, `eval_count` and timings; with
  `"stream": false` one JSON object
- unknown models: status 404 with `{"error": "model \"x\" not found, try pulling it first"}`

Failure modes for tests: `drop_after` closes the connection after that many pieces without
ending the chunked body (a dropped connection), `delay` sleeps before every piece (timeouts),
`error_after` sends an `{"error": ...}` line mid-stream, `done_reason` sets the last line's
reason, `stall_after` pauses `stall` seconds before that piece (0: before the first token, as a
model still loading does; later: a model that stops sending). It is not part of the product.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = str | Callable[[list[dict]], str]


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port nothing listens on, never one handed out before in this process: the app caches
    what a server address answered (a minute), so a new server on an old port would be taken
    for the old one."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def pieces(text: str) -> list[str]:
    """Split a reply the way a model streams it: a word (with its leading space) at a time."""
    return re.findall(r"\s*\S+|\s+$", text) or [text]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.open: set[socket.socket] = set()  # connections kept alive between requests

    def process_request(self, request: socket.socket, client_address: object) -> None:
        self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket) -> None:
        self.open.discard(request)
        super().shutdown_request(request)

    def hang_up(self) -> None:
        """Close every open connection, as a server process that goes down does."""
        for request in list(self.open):
            with contextlib.suppress(OSError):
                request.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up (a timeout, a test that stops early) is expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class OllamaStandIn:
    """Start with `with OllamaStandIn(models={...}, reply=...) as server:`; use `server.url`."""

    def __init__(
        self,
        models: dict[str, int] | None = None,
        reply: Reply = "",
        *,
        drop_after: int | None = None,
        error_after: int | None = None,
        delay: float = 0.0,
        done_reason: str = "stop",
        stall_after: int | None = None,
        stall: float = 0.0,
    ) -> None:
        self.models = {"llama3.2:latest": 131072} if models is None else models  # name -> context
        self.reply = reply
        self.drop_after = drop_after
        self.error_after = error_after
        self.delay = delay
        self.done_reason = done_reason
        self.stall_after = stall_after
        self.stall = stall
        self.requests: list[tuple[str, dict]] = []  # (path, JSON body) of every request
        self._server = _Server(("127.0.0.1", free_port()), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OllamaStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.hang_up()
        self._thread.join(timeout=5)

    def chats(self) -> list[dict]:
        """The bodies of the /api/chat requests received, in order."""
        return [body for path, body in self.requests if path == "/api/chat"]

    def _known(self, name: str) -> str | None:
        if name in self.models:
            return name
        if ":" not in name and f"{name}:latest" in self.models:
            return f"{name}:latest"
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
                pass

            def _body(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                return json.loads(raw) if raw else {}

            def _json(self, status: int, value: dict) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _not_found(self, name: str) -> None:
                self._json(404, {"error": f'model "{name}" not found, try pulling it first'})

            def do_GET(self) -> None:
                standin.requests.append((self.path, {}))
                if self.path != "/api/tags":
                    self._json(404, {"error": "not found"})
                    return
                self._json(200, {"models": [_tag(name) for name in standin.models]})

            def do_POST(self) -> None:
                body = self._body()
                standin.requests.append((self.path, body))
                name = standin._known(body.get("model", ""))
                if self.path == "/api/show":
                    if name is None:
                        self._not_found(body.get("model", ""))
                    else:
                        self._json(200, _show(standin.models[name]))
                elif self.path == "/api/chat":
                    if name is None:
                        self._not_found(body.get("model", ""))
                    else:
                        self._chat(name, body)
                else:
                    self._json(404, {"error": "not found"})

            def _chat(self, name: str, body: dict) -> None:
                reply = standin.reply
                text = reply(body.get("messages", [])) if callable(reply) else reply
                if body.get("stream") is False:
                    line = _line(name, text, done=True)
                    line.update(_final(standin.done_reason, len(pieces(text))))
                    self._json(200, line)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                parts = pieces(text)
                for i, piece in enumerate(parts):
                    if standin.drop_after is not None and i == standin.drop_after:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    if standin.error_after is not None and i == standin.error_after:
                        self._chunk({"error": "an error was encountered while running the model"})
                        self._end()
                        return
                    if standin.delay:
                        time.sleep(standin.delay)
                    if i == standin.stall_after:
                        time.sleep(standin.stall)
                    self._chunk(_line(name, piece, done=False))
                last = _line(name, "", done=True)
                last.update(_final(standin.done_reason, len(parts)))
                self._chunk(last)
                self._end()

            def _chunk(self, value: dict) -> None:
                data = (json.dumps(value) + "\n").encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _end(self) -> None:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _tag(name: str) -> dict:
    return {
        "name": name,
        "model": name,
        "modified_at": _now(),
        "size": 2019393189,
        "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "llama",
            "families": ["llama"],
            "parameter_size": "3.2B",
            "quantization_level": "Q4_K_M",
        },
    }


def _show(context_length: int) -> dict:
    return {
        "modelfile": "FROM stand-in",
        "parameters": 'stop "<|eot_id|>"',
        "template": "{{ .Prompt }}",
        "details": _tag("x")["details"],
        "model_info": {
            "general.architecture": "llama",
            "general.parameter_count": 3212749888,
            "llama.context_length": context_length,
            "llama.embedding_length": 3072,
        },
        "capabilities": ["completion", "tools"],
        "modified_at": _now(),
    }


def _line(model: str, content: str, *, done: bool) -> dict:
    return {
        "model": model,
        "created_at": _now(),
        "message": {"role": "assistant", "content": content},
        "done": done,
    }


def _final(done_reason: str, eval_count: int) -> dict:
    return {
        "done_reason": done_reason,
        "total_duration": 4_883_583_458,
        "load_duration": 1_334_875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342_546_000,
        "eval_count": eval_count,
        "eval_duration": 4_535_599_000,
    }
