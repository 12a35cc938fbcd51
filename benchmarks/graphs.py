"""Graphs of one model against the one KnowNote runs: their vectors and their CPU time a passage.

    .venv/bin/python benchmarks/graphs.py MODEL OTHER.onnx [OTHER.onnx ...] [--books en de zh]
        [--passages 134] [--rounds 3]

MODEL is an int8 model's name (multilingual-e5-small-int8, all-MiniLM-L6-v2-int8); each OTHER is
another graph file of it, say an older one copied out of the model cache. Every graph runs as
KnowNote runs the model's own (its session options: one thread, one passage a run) on each book's
first passages as an import gives them to the model (`benchmarks/import.py`'s books). Prints, per
book and graph: the largest difference from the model's own vectors and their mean and least
cosine; then the CPU time a passage of this thread, each passage going through every graph in
turn (the order rotating), so that other work on the machine weighs alike on all of them.
Wall-clock rates and the share of the machine's peak are `benchmarks/limit.py`'s.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embed_onnx import mean_pool
from knownote.index.embedders import get_embedder

books_of = importlib.import_module("benchmarks.import")  # "import" is a keyword


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("others", nargs="+", metavar="OTHER.onnx")
    parser.add_argument("--books", nargs="+", default=["en", "de", "zh"])
    parser.add_argument("--passages", type=int, default=134, help="per book, from its start")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import onnxruntime

    embedder = get_embedder(args.model)
    embedder.load()  # makes the model's own graph if need be
    tokenize = embedder._open_tokenizer()
    graphs = [embedder.graph, *map(Path, args.others)]
    sessions = [
        onnxruntime.InferenceSession(
            str(g), embedder._options(), providers=["CPUExecutionProvider"]
        )
        for g in graphs
    ]

    def vector(session, ids: list[int]) -> np.ndarray:
        x = np.array([ids], dtype=np.int64)
        mask = np.ones_like(x)
        (hidden,) = session.run(
            None, {"input_ids": x, "attention_mask": mask, "token_type_ids": 0 * x}
        )
        return mean_pool(hidden, mask)[0]

    print(f"load average at the start {os.getloadavg()[0]:.1f}; {args.model}: {graphs[0].name}")
    print("\n| book | graph | largest difference | mean cosine | least cosine | ms CPU a passage |")
    print("|---|---|---|---|---|---|")
    all_books = books_of.books()
    for code in args.books:
        texts = books_of.import_texts(all_books[code])[: args.passages]
        encodings = tokenize([embedder.passage_prefix + t.strip() for t in texts])
        vectors = [np.stack([vector(s, ids) for ids in encodings]) for s in sessions]
        seconds = np.zeros(len(sessions))
        for round_ in range(args.rounds):
            for i, ids in enumerate(encodings):
                first = (i + round_) % len(sessions)
                for j in [*range(first, len(sessions)), *range(first)]:
                    start = time.thread_time()
                    vector(sessions[j], ids)
                    seconds[j] += time.thread_time() - start
        per_passage = seconds / (args.rounds * len(encodings)) * 1000
        for j, graph in enumerate(graphs):
            cosines = (vectors[j] * vectors[0]).sum(axis=1)
            largest = float(np.abs(vectors[j] - vectors[0]).max())
            ratio = per_passage[j] / per_passage[0]
            print(
                f"| {code} | {graph.name} | {largest:.2e} | {cosines.mean():.6f} "
                f"| {cosines.min():.6f} | {per_passage[j]:.2f} ({ratio:.3f}×) |",
                flush=True,
            )
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
