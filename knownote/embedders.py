"""The process-wide embedder for a model name: the packaged model through ONNX Runtime (or torch
when a GPU is present), any other model through sentence-transformers, `ollama:`/`openai:` names
on a server. Each loads its model lazily on first use and is kept once per process and name.
"""

from __future__ import annotations

import threading
from pathlib import Path

from knownote.embed import PACKAGED, Embedder, SentenceTransformerEmbedder
from knownote.embed_onnx import packaged_onnx_embedder
from knownote.errors import ModelError
from knownote.settings import DEFAULT_EMBEDDING_MODEL, Settings


def use_onnx() -> bool:
    """Whether the packaged model runs through ONNX Runtime (see the embedding_backend setting)."""
    backend = Settings().embedding_backend
    if backend not in ("auto", "onnx", "torch"):
        raise ModelError(
            f"Unknown embedding backend “{backend}”; use auto, onnx or torch "
            "(KNOWNOTE_EMBEDDING_BACKEND)."
        )
    if backend == "auto":
        # Checked without importing torch: NVIDIA's driver shows itself under /proc.
        return not Path("/proc/driver/nvidia/gpus").is_dir()
    return backend == "onnx"


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def get_embedder(name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The process-wide embedder for `name` (the model itself loads on first use)."""
    with _cache_lock:
        if name not in _cache:
            if name.startswith(("ollama:", "openai:")):  # a model on a server
                # Imported here: the openai client takes ~0.25 s to import, needed only here.
                from knownote.embed_server import ServerEmbedder

                _cache[name] = ServerEmbedder(name)
            elif name in PACKAGED and use_onnx():
                _cache[name] = packaged_onnx_embedder(name)
            else:
                _cache[name] = SentenceTransformerEmbedder(name)
        return _cache[name]
