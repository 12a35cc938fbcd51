"""A stand-in for an OpenAI-compatible server, for the failures a real one will not stage.

The real engine of the suite (llama-cpp-python's server, tests/llama_server.py) answers
properly; a connection that drops mid-answer, an HTTP error with a body, an error event inside
the stream or a server that reports its context at /props cannot be asked of it. This small HTTP
server on 127.0.0.1 follows the OpenAI API for the calls KnowNote makes:

- `GET /v1/models`: `{"object": "list", "data": [{"id", "object": "model", "created",
  "owned_by"}]}`
- `POST /v1/chat/completions` with `"stream": true`: `text/event-stream`, one
  `data: {"choices": [{"index": 0, "delta": {"content"}, "finish_reason": null}]}` per piece,
  a last chunk with `finish_reason`, then `data: [DONE]`; without streaming one JSON object
- `GET /props` (llama.cpp's llama-server only): `{"default_generation_settings": {"n_ctx"}}`

Failure modes: `drop_after` closes the connection after that many pieces, `status` and `body`
answer every chat with that HTTP error, `error_after` sends an error event mid-stream,
`finish_reason` sets the last chunk's reason, `models_delay` keeps the model list waiting (as
llama-cpp-python's server does while it answers someone else). It is not part of the product.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler

from tests.ollama_standin import _Server, free_port, pieces


class OpenAIStandIn:
    """Start with `with OpenAIStandIn(reply=...) as server:`; use `server.url` (ends in /v1)."""

    def __init__(
        self,
        reply: str = "",
        *,
        models: tuple[str, ...] = ("tiny",),
        n_ctx: int | None = None,
        drop_after: int | None = None,
        error_after: int | None = None,
        status: int | None = None,
        body: object = None,
        finish_reason: str = "stop",
        models_delay: float = 0.0,
    ) -> None:
        self.reply = reply
        self.models = models
        self.n_ctx = n_ctx
        self.drop_after = drop_after
        self.error_after = error_after
        self.status = status
        self.body = body
        self.finish_reason = finish_reason
        self.models_delay = models_delay
        self.requests: list[tuple[str, dict, dict]] = []  # (path, JSON body, headers)
        self._server = _Server(("127.0.0.1", free_port()), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> OpenAIStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _json(self, status: int, value: object) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                standin.requests.append((self.path, {}, dict(self.headers)))
                if self.path == "/v1/models":
                    time.sleep(standin.models_delay)
                    data = [
                        {"id": m, "object": "model", "created": 0, "owned_by": "me"}
                        for m in standin.models
                    ]
                    self._json(200, {"object": "list", "data": data})
                elif self.path == "/props" and standin.n_ctx:
                    self._json(200, {"default_generation_settings": {"n_ctx": standin.n_ctx}})
                else:
                    self._json(404, {"error": {"message": "not found", "code": 404}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                standin.requests.append((self.path, body, dict(self.headers)))
                if standin.status:
                    self._json(standin.status, standin.body)
                    return
                if body.get("model") not in standin.models:
                    message = f"The model `{body.get('model')}` does not exist."
                    self._json(404, {"error": {"message": message, "code": "model_not_found"}})
                    return
                if not body.get("stream"):
                    message = {"role": "assistant", "content": standin.reply}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    self._json(200, {"id": "x", "object": "chat.completion", "created": 0,
                                     "model": body["model"], "choices": [choice]})  # fmt: skip
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for i, piece in enumerate(pieces(standin.reply)):
                    if i == standin.drop_after:
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    if i == standin.error_after:
                        self._event({"error": {"message": "the model crashed"}})
                        return
                    self._event(self._chunk(body, {"content": piece}, None))
                self._event(self._chunk(body, {}, standin.finish_reason))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _chunk(self, body: dict, delta: dict, finish: str | None) -> dict:
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
                return {"id": "x", "object": "chat.completion.chunk", "created": 0,
                        "model": body["model"], "choices": [choice]}  # fmt: skip

            def _event(self, value: dict) -> None:
                self.wfile.write(f"data: {json.dumps(value)}\n\n".encode())
                self.wfile.flush()

        return Handler
