"""Make the packaged English model's ONNX graphs (fp32, and int8 from it), once per machine.

The graph is written from the packaged weights with numpy (`bert_graph`), no torch; this runs
when the cached graph is missing (first use on a machine, or after the cache was deleted), never
at search time.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from knownote.errors import ModelError
from knownote.index.bert_graph import write_float_graph

if TYPE_CHECKING:
    import onnx

# Names the way `int8_graph` makes the int8 graph, in its file name: a cached graph made another
# way is never taken for it. Change it with `int8_graph` or `quantize`. int8-3: plain layer norms;
# int8-4: ONNX's Attention in place of QAttention (the same vectors, faster).
QUANTIZED = "int8-4"


def graph_path(model_folder: Path, cache: Path, name: str, int8: bool = False) -> Path:
    """Where the graph of the model in `model_folder` is cached: keyed by its weights and config.

    The int8 graph's name ends in `-int8-4.onnx` (see QUANTIZED), its fp32 source's in
    `-fp32.onnx`.
    """
    digest = hashlib.sha256()
    for part in ("config.json", "tokenizer.json"):
        digest.update((model_folder / part).read_bytes())
    weights = model_folder / "model.safetensors"
    digest.update(str(weights.stat().st_size).encode())
    base = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return cache / f"{base}-{digest.hexdigest()[:16]}-{QUANTIZED if int8 else 'fp32'}.onnx"


def ensure_graph(model_folder: Path, target: Path) -> Path:
    """Make the graph `target` names unless it is there; safe when several processes race.

    An fp32 graph is exported from the model; an int8 graph is made from the fp32 one.
    """
    if target.exists():
        return target
    int8 = target.name.endswith(f"-{QUANTIZED}.onnx")
    source = target.with_name(target.name.removesuffix(f"-{QUANTIZED}.onnx") + "-fp32.onnx")
    if int8:
        ensure_graph(model_folder, source)
        config = json.loads((model_folder / "config.json").read_text())
        heads, hidden = int(config["num_attention_heads"]), int(config["hidden_size"])
        # Fused in Python only (opt_level 0): the runtime's own pass imports torch, which the app
        # does not install. Measured: the same fused operators, and the same mean cosine to
        # sentence-transformers' vectors (0.9926 on corpus passages) as with that pass.
        return make_once(target, lambda tmp: int8_graph(source, tmp, heads, hidden))
    return make_once(target, lambda tmp: write_float_graph(model_folder, tmp))


def int8_graph(
    source: Path, target: Path, num_heads: int, hidden_size: int, fused_attention: bool = False
) -> None:
    """The packaged model's int8 graph: `quantize`d, its skip-and-normalise nodes split again
    (`unfuse_skip_layer_norm`, as the multilingual graph's; measured with onnxruntime 1.32:
    ~22% less CPU time a passage, the same closeness to the fp32 graph, mean cosine 0.993), and
    its QAttention nodes split into their projection and ONNX's Attention (`unfuse_attention`:
    the same vectors). `fused_attention` keeps QAttention, as the graph int8-3 was made."""
    import onnx

    quantize(source, target, num_heads, hidden_size, opt_level=0)
    model = onnx.load(str(target))
    unfuse_skip_layer_norm(model)
    if not fused_attention:
        unfuse_attention(model)
    onnx.save(model, str(target))


def make_once(target: Path, make: Callable[[Path], None]) -> Path:
    """Run `make(tmp)` and move its file to `target`, unless `target` is there: one process
    makes it while the others wait, and nobody ever reads half a file."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            make(tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def quantize(
    source: Path,
    target: Path,
    num_heads: int,
    hidden_size: int,
    opt_level: int | None = None,
    every_product: bool = False,
) -> None:
    """The fp32 graph with its operators fused, then int8 weights on every matrix product but
    one: the first layer's feed-forward output, whose inputs have the widest range.

    Dynamic quantisation: int8 weights per output channel, activations quantised as they come.
    Of the variants measured (benchmarks/embed_variants.py, docs/benchmarks.md), this one keeps
    `knownote eval` within half a point of the fp32 model at over 3x the torch path's speed;
    quantising that product too cost 0.8 point of MRR@10 on xquad.en's vector search.
    `opt_level` 0 fuses in Python only (no torch is imported to check for a GPU).
    `every_product` quantises that product too (the multilingual graph keeps its recall so).
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    fused = target.with_name(target.name + ".fused")
    # quantize_dynamic advises, on the root logger, to pre-process the graph: the optimiser has.
    root = logging.getLogger()
    level = root.level
    try:
        optimize_model(
            str(source),
            model_type="bert",
            num_heads=num_heads,
            hidden_size=hidden_size,
            opt_level=opt_level,
        ).save_model_to_file(str(fused))
        nodes = onnx.load(str(fused)).graph.node
        kept = [n.name for n in nodes if "/layer.0/output/dense/" in n.name]
        if len(kept) != 1:
            raise ModelError(f"The ONNX graph {source} is not the BERT graph KnowNote exports.")
        if every_product:
            kept = []
        root.setLevel(logging.ERROR)
        quantize_dynamic(
            str(fused),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=[
                n.name for n in nodes if n.op_type in ("Attention", "MatMul") and n.name not in kept
            ],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        root.setLevel(level)
        fused.unlink(missing_ok=True)


def unfuse_attention(model: onnx.ModelProto) -> int:
    """Each QAttention of `model` (changed in place) becomes its input projection, written as
    the graph's other int8 products are (MatMulInteger, which the runtime runs as
    DynamicQuantizeMatMul), and ONNX's own Attention (opset 23: onnxruntime 1.23, the least the
    project asks for) on the projection's three thirds; how many there were.

    Measured with onnxruntime 1.32: the very same vectors (the attention core is the same fp32
    arithmetic) and 2-4% less CPU time a passage, since QAttention's own projection runs slower
    than DynamicQuantizeMatMul. The core reads no mask: the int8 graphs run one passage a run,
    unpadded, so every token is attended to (every caller gives a mask of ones; applying it
    cost 2-3.5%). The graph keeps its attention_mask input.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {w.name: w for w in graph.initializer}
    nodes, count = [], 0
    for node in graph.node:
        if node.op_type != "QAttention":
            nodes.append(node)
            continue
        x, w, bias, x_scale, w_scale, _, x_zero, w_zero = (list(node.input) + [""] * 8)[:8]
        heads = next(a.i for a in node.attribute if a.name == "num_heads")
        width = int(weights[w].dims[1]) // 3
        thirds = f"attention_thirds_{width}"
        if thirds not in weights:
            weights[thirds] = numpy_helper.from_array(np.array([width] * 3, np.int64), thirds)
            graph.initializer.append(weights[thirds])
        at = node.name
        q, k, v = f"{at}/q", f"{at}/k", f"{at}/v"
        nodes += [
            helper.make_node(
                "MatMulInteger", [x, w, x_zero, w_zero], [f"{at}/int"], name=f"{at}/MatMulInteger"
            ),
            helper.make_node(
                "Cast", [f"{at}/int"], [f"{at}/float"], name=f"{at}/Cast", to=TensorProto.FLOAT
            ),
            helper.make_node("Mul", [x_scale, w_scale], [f"{at}/scales"], name=f"{at}/Scales"),
            helper.make_node(
                "Mul", [f"{at}/float", f"{at}/scales"], [f"{at}/product"], name=f"{at}/Mul"
            ),
            helper.make_node("Add", [f"{at}/product", bias], [f"{at}/qkv"], name=f"{at}/Bias"),
            helper.make_node("Split", [f"{at}/qkv", thirds], [q, k, v], name=f"{at}/Split", axis=2),
            helper.make_node(
                "Attention",
                [q, k, v],
                list(node.output),
                name=f"{at}/Attention",
                q_num_heads=heads,
                kv_num_heads=heads,
            ),
        ]
        count += 1
    if not count:
        return 0
    outputs = {o.name for o in graph.output}
    while True:  # drop what only QAttention read: the mask's lengths
        used = {i for n in nodes for i in n.input} | outputs
        kept = [n for n in nodes if any(o in used for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    unused = [w for w in graph.initializer if w.name not in used]
    for w in unused:
        graph.initializer.remove(w)
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = max(opset.version, 23)
    model.ir_version = max(model.ir_version, 11)  # opset 23 came with IR version 11 (onnx 1.18)
    return count


def unfuse_skip_layer_norm(model: onnx.ModelProto) -> int:
    """Each SkipLayerNormalization of `model` (changed in place) becomes Sum -> LayerNormalization;
    how many there were.

    ONNX Runtime's CPU kernel for the fused node is a scalar loop, about 7x slower than the two
    it stands for (a quarter of the multilingual graph's time). Sum rather than Add: the runtime
    fuses Add -> LayerNormalization back when it loads the graph. LayerNormalization needs opset 17.
    """
    from onnx import helper

    nodes, count = [], 0
    for node in model.graph.node:
        if node.op_type != "SkipLayerNormalization":
            nodes.append(node)
            continue
        x, skip, gamma, beta, bias = (list(node.input) + [""] * 5)[:5]
        output, _, _, total = (list(node.output) + [""] * 4)[:4]
        epsilon = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-12)
        total = total or f"{node.name}/sum"
        terms = [name for name in (x, skip, bias) if name]
        nodes.append(helper.make_node("Sum", terms, [total], name=f"{node.name}/Sum"))
        nodes.append(
            helper.make_node(
                "LayerNormalization",
                [total, gamma] + ([beta] if beta else []),
                [output],
                name=f"{node.name}/LayerNorm",
                axis=-1,
                epsilon=epsilon,
            )
        )
        count += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return count
