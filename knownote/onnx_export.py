"""Export a BERT-style sentence-transformers model's transformer to ONNX, once.

The only module that imports torch for the ONNX path; it runs when the cached graph is missing
(first use on a machine, or after the cache was deleted), never at search time.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import warnings
from pathlib import Path

from knownote.errors import ModelError

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def graph_path(model_folder: Path, cache: Path, name: str) -> Path:
    """Where the graph of the model in `model_folder` is cached: keyed by its weights and config."""
    digest = hashlib.sha256()
    for part in ("config.json", "tokenizer.json"):
        digest.update((model_folder / part).read_bytes())
    weights = model_folder / "model.safetensors"
    digest.update(str(weights.stat().st_size).encode())
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return cache / f"{safe}-{digest.hexdigest()[:16]}-fp32.onnx"


def ensure_graph(model_folder: Path, target: Path) -> Path:
    """Export the model to `target` unless it is there; safe when several processes race."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            export(model_folder, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def export(model_folder: Path, target: Path) -> None:
    """Trace the transformer (eager attention, dynamic batch and length) into one ONNX file."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as e:
        raise ModelError(
            f"Making the ONNX copy of the embedding model needs torch and transformers ({e})."
        ) from e

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_folder), attn_implementation="eager").eval()
    sample = torch.ones((2, 8), dtype=torch.int64)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    # The tracer warns about Python-level branches in the model code; they do not depend on the
    # batch or the length here, so the graph is the same for every input shape.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
