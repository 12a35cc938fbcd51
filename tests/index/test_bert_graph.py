"""The BERT graph written from weights with numpy (no torch): the packaged English model's
weights under their short keys, and a graph ONNX accepts whose output is
sentence-transformers' (tests/index/test_embed_onnx.py compares the vectors)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from safetensors.numpy import load_file

from knownote.index.bert_graph import float_graph, shape_of, short_keys
from knownote.index.embed import model_location
from knownote.settings import PACKAGED_MODEL

FOLDER = Path(model_location(PACKAGED_MODEL))


def test_every_weight_of_the_packaged_model_gets_its_short_key():
    weights = load_file(str(FOLDER / "model.safetensors"))
    keys = short_keys(weights)
    parts = ("q", "k", "v", "ao", "aln", "fi", "fo", "oln")
    wanted = {f"l{i}.{p}.{e}" for i in range(6) for p in parts for e in ("w", "b")}
    wanted |= {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"}
    assert set(keys) == wanted
    assert keys["l5.fo.w"].shape == (384, 1536)  # [out, in], as torch keeps a Linear
    assert keys["emb.word"] is weights["embeddings.word_embeddings.weight"]


def test_the_graph_is_valid_onnx_and_pads_without_changing_a_token(tmp_path):
    config = json.loads((FOLDER / "config.json").read_text())
    model = float_graph(shape_of(config), short_keys(load_file(str(FOLDER / "model.safetensors"))),
                        "all-MiniLM-L6-v2")  # fmt: skip
    onnx.checker.check_model(model)
    assert model.graph.name == "all-MiniLM-L6-v2"
    path = tmp_path / "graph.onnx"
    onnx.save(model, str(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    ids = np.array([[101, 7592, 2088, 102, 0, 0]], np.int64)
    mask = np.array([[1, 1, 1, 1, 0, 0]], np.int64)
    padded = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                "token_type_ids": np.zeros_like(ids)})[0]  # fmt: skip
    alone = session.run(None, {"input_ids": ids[:, :4], "attention_mask": mask[:, :4],
                               "token_type_ids": np.zeros_like(ids[:, :4])})[0]  # fmt: skip
    assert padded.shape == (1, 6, 384)
    assert np.allclose(padded[:, :4], alone, atol=1e-5)
