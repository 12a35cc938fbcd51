"""Embeddings from a server: Ollama's `/api/embed` or an OpenAI-compatible `/v1/embeddings`.

A notebook names such a model `ollama:NAME` or `openai:NAME` (for example `ollama:bge-m3`, a
multilingual embedder); the name is recorded with the notebook like any other model. The server
addresses come from the settings (OLLAMA_HOST, KNOWNOTE_OPENAI_BASE_URL). While the server is
down, embedding raises `EmbeddingUnavailable`, and a search falls back to keywords.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import httpx
import numpy as np

from knownote.errors import EmbeddingUnavailable, ModelError, error_text
from knownote.settings import Settings

# `openai` is imported by the methods that use it: 0.7 s that the app's start need not pay.
PREFIXES = ("ollama:", "openai:")
BATCH = 32
_TIMEOUT = 60.0

Progress = Callable[[int, int], None]


def is_server_model(name: str) -> bool:
    return name.startswith(PREFIXES)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def _pooled(vector: list) -> np.ndarray:
    """One vector per text. llama-cpp-python's server returns one per token for a model without
    a pooling layer (a chat model's GGUF); those are averaged."""
    array = np.asarray(vector, dtype=np.float32)
    return array.mean(axis=0) if array.ndim == 2 else array


class ServerEmbedder:
    """Normalised float32 embeddings from an embedding model on a server."""

    def __init__(self, name: str, settings: Settings | None = None) -> None:
        import openai

        if not is_server_model(name):
            raise ModelError(f"“{name}” is not a server model; name it ollama:NAME or openai:NAME.")
        settings = settings or Settings()
        self.name = name
        self.kind, self.model = name.split(":", 1)
        if self.kind == "ollama":
            self.host = settings.ollama_host.rstrip("/")
            self._http = httpx.Client(timeout=httpx.Timeout(_TIMEOUT, connect=5.0))
        else:
            self.host = settings.openai_base_url.rstrip("/")
            if not self.host:
                raise ModelError(
                    f"The embedding model {name} needs an OpenAI-compatible server: set "
                    "KNOWNOTE_OPENAI_BASE_URL to its address, ending in /v1."
                )
            self._client = openai.OpenAI(
                base_url=self.host,
                api_key=settings.openai_api_key or "none",
                timeout=openai.Timeout(_TIMEOUT, connect=5.0),  # httpx2's, under openai 3
                max_retries=0,
            )
        self._dim: int | None = None
        self._lock = threading.Lock()

    def _down(self) -> EmbeddingUnavailable:
        server = "Ollama server" if self.kind == "ollama" else "OpenAI-compatible server"
        return EmbeddingUnavailable(
            f"The {server} at {self.host} that embeds this notebook ({self.name}) does not "
            "answer. Start it to search by meaning again."
        )

    def _embed(self, texts: list[str]) -> np.ndarray:
        import openai

        if self.kind == "ollama":
            try:
                reply = self._http.post(
                    f"{self.host}/api/embed", json={"model": self.model, "input": texts}
                )
            except httpx.TransportError as e:
                raise self._down() from e
            if reply.status_code != 200:
                try:
                    said = reply.json().get("error", reply.text)
                except ValueError:
                    said = reply.text
                raise ModelError(
                    f"The Ollama server at {self.host} could not embed with {self.model} "
                    f"({reply.status_code}: {str(said)[:300]}). Install it with "
                    f"`ollama pull {self.model}`."
                )
            try:
                vectors = reply.json()["embeddings"]
            except (ValueError, KeyError, TypeError) as e:
                raise self._down() from e
        else:
            try:
                reply = self._client.embeddings.create(model=self.model, input=texts)
            except openai.APIConnectionError as e:
                raise self._down() from e
            except openai.APIStatusError as e:
                raise ModelError(
                    f"The server at {self.host} could not embed with {self.model} "
                    f"({e.status_code}: {error_text(e)})."
                ) from e
            vectors = [item.embedding for item in sorted(reply.data, key=lambda d: d.index)]
        try:
            array = np.stack([_pooled(v) for v in vectors]) if vectors else np.zeros((0, 0))
        except ValueError as e:  # vectors of different lengths
            raise ModelError(f"The server at {self.host} returned uneven embeddings ({e}).") from e
        if array.ndim != 2 or len(array) != len(texts):
            raise ModelError(
                f"The server at {self.host} returned {len(array)} embeddings for {len(texts)} "
                f"texts with {self.name}."
            )
        with self._lock:
            self._dim = array.shape[1]
        return _unit(array)

    @property
    def dim(self) -> int:
        with self._lock:
            if self._dim is not None:
                return self._dim
        return int(self._embed(["dimension"]).shape[1])

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        parts = []
        for i in range(0, len(texts), BATCH):
            parts.append(self._embed(list(texts[i : i + BATCH])))
            if progress:
                progress(min(i + BATCH, len(texts)), len(texts))
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]
