"""Choose the fusion weights for an embedding model on held-out questions: hybrid MRR@10 and
recall@5 for a grid of weights, each set indexed once.

    .venv/bin/python benchmarks/fusion.py [--model NAME] [--questions N]

The held-out questions: the first 400 of xquad.en and of the German→English and English→German
sets (`benchmarks/languages.py --skip 400` reports on the other 790), cmrc2018's and JSQuAD's
1,501-3,000 (the reported ones are the first 1,500). Each question is searched once and its two
rankings fused with every weight. Prints one line per set and weights, then the weights by their
mean MRR@10 over the sets, with each set's recall@5.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from knownote.measure.retrieval import ScratchIndex, load_squad
from knownote.search.retrieve import TUNED
from knownote.settings import MULTILINGUAL

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# (set, file, questions skipped, questions used)
HELD_OUT = [
    ("xquad.en", "qa_en/xquad.en.json", 0, 400),
    ("de→en", "qa_cross/xquad.de-q.en-ctx.json", 0, 400),
    ("en→de", "qa_cross/xquad.en-q.de-ctx.json", 0, 400),
    ("cmrc2018", "qa_zh/cmrc2018_dev.json", 1500, 1500),
    ("JSQuAD", "qa_ja/jsquad-valid-v1.3.json", 1500, 1500),
]
GRID = {
    "dense_weight": (1.0, 2.0, 3.0, 4.0, 6.0),
    "dense_floor": (0.0, 1.0, 2.0),
    "dense_weight_cjk": (0.5, 1.0, 2.0, 3.0),
    "coverage_power": (0.0, 1.0, 2.0, 3.0, 4.0),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MULTILINGUAL)
    parser.add_argument("--questions", type=int, help="fewer questions per set (a quick look)")
    args = parser.parse_args()
    embedder = get_embedder(args.model)
    names = list(GRID)
    grid = [dict(zip(names, values, strict=True)) for values in itertools.product(*GRID.values())]
    table: dict[tuple, list[float]] = {}
    tunings = [dataclasses.replace(TUNED, **weights) for weights in grid]
    for name, path, skip, count in HELD_OUT:
        dataset = load_squad(CORPUS / path, min(args.questions or count, count), skip=skip)
        with ScratchIndex(dataset, embedder) as index:
            for weights, figures in zip(grid, index.score_fusions(tunings), strict=True):
                print(
                    f"{name:<9} {weights}  R@5 {figures['recall@5']:.4f}  "
                    f"MRR@10 {figures['mrr@10']:.4f}",
                    flush=True,
                )
                table.setdefault(tuple(weights.items()), []).append(figures)
    print("\nmean MRR@10 over the sets, best first (then each set's MRR@10 / R@5):")
    names = [name for name, *_ in HELD_OUT]
    for weights, sets in sorted(table.items(), key=lambda item: -_mean_mrr(item[1])):
        each = "  ".join(
            f"{n} {f['mrr@10']:.4f}/{f['recall@5']:.4f}" for n, f in zip(names, sets, strict=True)
        )
        print(f"{_mean_mrr(sets):.4f}  {dict(weights)}  {each}")
    return 0


def _mean_mrr(sets: list[dict[str, float]]) -> float:
    return statistics.mean(f["mrr@10"] for f in sets)


if __name__ == "__main__":
    sys.exit(main())
