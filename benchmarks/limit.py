"""How close embedding comes to this machine's limit: the matrix kernels' peak, the model's cost.

    .venv/bin/python benchmarks/limit.py [--books en de zh] [--passages 300] [--rounds 2]
        [--seconds 1.5] [--against MODEL=GRAPH.onnx ...]

In one run:
1. The peak. One-node ONNX graphs, run by ONNX Runtime as KnowNote runs its graphs: a
   MatMulInteger (uint8 activations with a zero point, int8 weights with one zero point a
   column: the kernel of the int8 graphs' products) and an fp32 MatMul, at each weight shape of
   the model's graph and the books' median passage length in tokens. Measured with both cores:
   two runs side by side on one thread each (how KnowNote runs its int8 graphs), and one run on
   two threads. Prints GOP/s (one multiply-add is 2 operations) per shape and over the model's
   mix of shapes.
2. The cost. Read from the graph: every matrix product with a weight (MatMulInteger, MatMul and
   QAttention's input projection) costs 2·K·N operations a token; each attention layer
   (QAttention, or ONNX's Attention after its projection) also multiplies queries by keys and
   weights by values, 4·L·H a token for L tokens and width H.
3. The share. Each model embeds each book's first passages as an import gives them to it (title and
   section path first); tokens/s and passages/s are measured, and the share of the peak is the
   time the same operations would take at the peak (products at the int8 peak, attention at the
   fp32 peak) over the time they took. The peak is that of the best layout, measured again just
   before and just after each embedding (their mean), since other work on the cores moves it.
   With `--against MODEL=GRAPH.onnx` (an older graph of the model, say from the model cache), the
   rounds alternate between the model as KnowNote runs it and that graph, run the same way (the
   same session options), each printed in its own row.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from knownote.settings import MULTILINGUAL, PACKAGED_INT8

books_of = importlib.import_module("benchmarks.import")  # "import" is a keyword
MODELS = (MULTILINGUAL, PACKAGED_INT8)


@dataclass(frozen=True)
class GraphCost:
    """Operations a token of the graph's weighted products, and its attention layers' shape."""

    products: dict[tuple[int, int], int]  # (K, N) -> how many products of that shape (int8)
    fp32_products: dict[tuple[int, int], int]
    attention_layers: int
    width: int

    def per_passage(self, tokens: int) -> tuple[float, float]:
        """(int8 operations, fp32 operations) to embed one passage of `tokens` tokens."""
        int8 = sum(2 * k * n * count for (k, n), count in self.products.items()) * tokens
        fp32 = sum(2 * k * n * count for (k, n), count in self.fp32_products.items()) * tokens
        fp32 += self.attention_layers * 4 * tokens * tokens * self.width
        return float(int8), float(fp32)


def graph_cost(graph: Path) -> GraphCost:
    """The products and attention layers of an ONNX graph, counted from its weights' shapes."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    weights = {w.name: tuple(w.dims) for w in model.graph.initializer}
    products: dict[tuple[int, int], int] = {}
    fp32_products: dict[tuple[int, int], int] = {}
    layers = width = 0
    for node in model.graph.node:
        if node.op_type == "Attention" and node.domain in ("", "ai.onnx"):
            layers += 1  # ONNX's own, on the activations: its projection is a product below
            continue
        shape = weights.get(node.input[1]) if len(node.input) > 1 else None
        if shape is None or len(shape) != 2:
            continue
        if node.op_type in ("MatMulInteger", "QAttention"):
            products[shape] = products.get(shape, 0) + 1
        elif node.op_type == "MatMul":
            fp32_products[shape] = fp32_products.get(shape, 0) + 1
        if node.op_type in ("QAttention", "Attention"):  # contrib: the projection is input 1
            layers += 1
        if shape[1] == 3 * shape[0]:  # the Q, K and V projection: [H, 3H]
            width = shape[0]
    return GraphCost(products, fp32_products, layers, width)


def product_graph(k: int, n: int, int8: bool) -> bytes:
    """One product with a fixed random weight [k, n]: MatMulInteger (as the int8 graphs quantise
    it) or fp32 MatMul. Input x: [tokens, k]."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    if int8:
        weight = rng.integers(-127, 128, (k, n), dtype=np.int8)
        zero = rng.integers(-3, 4, n, dtype=np.int8)
        inputs = [helper.make_tensor_value_info("x", TensorProto.UINT8, ["t", k])]
        inits = [
            numpy_helper.from_array(weight, "w"),
            numpy_helper.from_array(zero, "wz"),
            numpy_helper.from_array(np.array(128, dtype=np.uint8), "xz"),
        ]
        node = helper.make_node("MatMulInteger", ["x", "w", "xz", "wz"], ["y"])
        out = TensorProto.INT32
    else:
        weight = rng.standard_normal((k, n)).astype(np.float32)
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["t", k])]
        inits = [numpy_helper.from_array(weight, "w")]
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        out = TensorProto.FLOAT
    graph = helper.make_graph(
        [node], "product", inputs, [helper.make_tensor_value_info("y", out, ["t", n])], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def session(model: bytes, threads: int):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def kernel_rate(k: int, n: int, tokens: int, int8: bool, seconds: float) -> dict[str, float]:
    """GOP/s of one product shape on both cores: side by side on one thread each, and one run on
    two threads."""
    model = product_graph(k, n, int8)
    rng = np.random.default_rng(1)
    x = (
        rng.integers(0, 256, (tokens, k), dtype=np.uint8)
        if int8
        else rng.standard_normal((tokens, k)).astype(np.float32)
    )
    ops = 2.0 * tokens * k * n

    def runs(s, until: float) -> int:
        done = 0
        while time.perf_counter() < until:
            s.run(None, {"x": x})
            done += 1
        return done

    one = session(model, 1)
    two = session(model, 2)
    for s in (one, two):
        runs(s, time.perf_counter() + 0.1)
    rates = {}
    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(lambda _: runs(one, start + seconds), range(2)))
    rates["2 runs x 1 thread"] = sum(counts) * ops / (time.perf_counter() - start) / 1e9
    start = time.perf_counter()
    done = runs(two, start + seconds)
    rates["1 run x 2 threads"] = done * ops / (time.perf_counter() - start) / 1e9
    return rates


def layout_rates(graph: Path, encodings: list[list[int]], seconds: float) -> dict[str, float]:
    """Passages a second of the whole graph, one passage a run, in each thread layout on both
    cores: two runs side by side on one thread each, and one run on two threads."""
    import onnxruntime

    def open_session(threads: int):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    feeds = []
    for ids in encodings:
        x = np.array([ids], dtype=np.int64)
        feeds.append({"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": 0 * x})

    def runs(s, until: float, offset: int) -> int:
        done = 0
        while time.perf_counter() < until:
            s.run(None, feeds[(offset + done) % len(feeds)])
            done += 1
        return done

    rates = {}
    one, two = open_session(1), open_session(2)
    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(lambda i: runs(one, start + seconds, i * 7), range(2)))
    rates["2 runs x 1 thread"] = sum(counts) / (time.perf_counter() - start)
    start = time.perf_counter()
    rates["1 run x 2 threads"] = runs(two, start + seconds, 0) / (time.perf_counter() - start)
    return rates


def peaks(cost: GraphCost, tokens: int, seconds: float) -> tuple[float, float]:
    """GOP/s now at the best layout: int8 over the graph's mix of product shapes, and fp32 (the
    attention's rate) as the median over those shapes."""
    int8, fp32 = {}, {}
    for k, n in cost.products:
        int8[k, n] = max(kernel_rate(k, n, tokens, True, seconds).values())
        fp32[k, n] = max(kernel_rate(k, n, tokens, False, seconds).values())
    return mix_rate(cost.products, int8), statistics.median(fp32.values())


def mix_rate(shapes: dict[tuple[int, int], int], rates: dict[tuple[int, int], float]) -> float:
    """GOP/s over a graph's mix of shapes: its operations over the time they take at each rate."""
    ops = {(k, n): 2 * k * n * count for (k, n), count in shapes.items()}
    return sum(ops.values()) / sum(ops[s] / rates[s] for s in ops)


def as_before(embedder, graph: Path):
    """The same embedder, with its session options, running another graph file of its model;
    loaded on first use."""
    other = copy.copy(embedder)
    other._start(embedder.name, graph, embedder.max_batch, embedder.max_seq_length, embedder.dim)
    return other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", nargs="+", default=["en", "de", "zh"])
    parser.add_argument("--passages", type=int, default=300, help="per book, from its start")
    parser.add_argument("--rounds", type=int, default=2, help="embedding rounds per book")
    parser.add_argument("--seconds", type=float, default=1.5, help="per kernel measurement")
    parser.add_argument(
        "--against",
        nargs="*",
        default=[],
        metavar="MODEL=GRAPH",
        help="another graph of a model, embedded in turn with the model's own",
    )
    args = parser.parse_args()
    print(f"load average at the start {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    embedders = {name: get_embedder(name) for name in MODELS}
    variants = {name: {f"after: {e.graph.name}": e} for name, e in embedders.items()}
    for name, graph in (a.split("=", 1) for a in args.against):
        variants[name][f"before: {Path(graph).name}"] = as_before(embedders[name], Path(graph))
    all_books = books_of.books()
    texts = {code: books_of.import_texts(all_books[code])[: args.passages] for code in args.books}
    tokens: dict[tuple[str, str], list[int]] = {}
    for name, embedder in embedders.items():
        embedder.embed_passages(["warm up the model"] * 8)
        tokenize = embedder._open_tokenizer()
        for code, passages in texts.items():
            ids = tokenize([embedder.passage_prefix + t for t in passages])
            tokens[name, code] = [len(i) for i in ids]
    median_tokens = int(statistics.median(n for ns in tokens.values() for n in ns))

    costs = {name: graph_cost(e.graph) for name, e in embedders.items()}
    shapes = sorted({s for c in costs.values() for s in (*c.products, *c.fp32_products)})
    print(f"\nKernels at {median_tokens} tokens (the books' median passage), GOP/s:")
    print(
        "| product [K, N] | int8 2 runs x 1 thread | int8 1 run x 2 threads "
        "| fp32 2 runs x 1 thread | fp32 1 run x 2 threads |"
    )
    print("|---|---|---|---|---|")
    for k, n in shapes:
        i8 = kernel_rate(k, n, median_tokens, True, args.seconds)
        f32 = kernel_rate(k, n, median_tokens, False, args.seconds)
        cells = [f"{v:.0f}" for v in (*i8.values(), *f32.values())]
        print(f"| [{k}, {n}] | " + " | ".join(cells) + " |", flush=True)

    print("\nThe whole graph, one passage a run (the first book's passages), passages/s:")
    print("| model | 2 runs x 1 thread | 1 run x 2 threads |")
    print("|---|---|---|")
    first = args.books[0]
    for name, embedder in embedders.items():
        tokenize = embedder._open_tokenizer()
        encodings = tokenize([embedder.passage_prefix + t for t in texts[first][:64]])
        rates = layout_rates(embedder.graph, encodings, 4 * args.seconds)
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in rates.values()) + " |", flush=True)

    print(
        "\n| model | book | passages | tokens | tokens/s | passages/s | GOP/s "
        "| int8 peak GOP/s (before, after) | share of peak |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in embedders:
        cost = costs[name]
        for code, passages in texts.items():
            # The peak is measured just before and just after the embedding it is compared with:
            # on cores shared with other work it moves by 1.5x within minutes.
            before = peaks(cost, median_tokens, args.seconds / 3)
            seconds: dict[str, list[float]] = {graph: [] for graph in variants[name]}
            for _ in range(args.rounds):
                for graph, variant in variants[name].items():  # in turn: the load moves
                    variant.embed_passages(passages[:8])  # loaded and warm
                    t = time.perf_counter()
                    variant.embed_passages(passages)
                    seconds[graph].append(time.perf_counter() - t)
            after = peaks(cost, median_tokens, args.seconds / 3)
            peak8 = statistics.mean([before[0], after[0]])
            peak32 = statistics.mean([before[1], after[1]])
            ops = [cost.per_passage(n) for n in tokens[name, code]]
            int8_ops = sum(o[0] for o in ops)
            fp32_ops = sum(o[1] for o in ops)
            at_peak = int8_ops / (peak8 * 1e9) + fp32_ops / (peak32 * 1e9)
            n_tokens = sum(tokens[name, code])
            for graph, took_all in seconds.items():
                took = statistics.median(took_all)
                label = name if len(seconds) == 1 else f"{name} ({graph})"
                print(
                    f"| {label} | {code} | {len(passages):,} | {n_tokens:,} "
                    f"| {n_tokens / took:,.0f} | {len(passages) / took:.1f} "
                    f"| {(int8_ops + fp32_ops) / took / 1e9:.0f} "
                    f"| {peak8:.0f} ({before[0]:.0f}, {after[0]:.0f}) | {at_peak / took:.0%} |",
                    flush=True,
                )
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
