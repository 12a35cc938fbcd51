"""Choose the fusion weights for an embedding model on held-out questions: hybrid MRR@10 and
recall@5 for a grid of weights, each set indexed once.

    .venv/bin/python benchmarks/fusion.py [--model NAME] [--questions N]

The held-out questions: xquad.en's and the German→English set's first 400 (the figures reported
for them are on questions 401-1,190), cmrc2018's and JSQuAD's 1,501-3,000 (the reported ones are
the first 1,500). Prints one line per set and weights, then each weight's mean over the sets.
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
    ("cmrc2018", "qa_zh/cmrc2018_dev.json", 1500, 1500),
    ("JSQuAD", "qa_ja/jsquad-valid-v1.3.json", 1500, 1500),
]
GRID = {
    "dense_weight": (1.0, 2.0, 3.0, 4.0),
    "dense_floor": (0.0, 1.0, 2.0),
    "dense_weight_cjk": (0.5, 1.0, 2.0, 3.0),
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
    for name, path, skip, count in HELD_OUT:
        dataset = load_squad(CORPUS / path, args.questions or count, skip=skip)
        cjk = name in ("cmrc2018", "JSQuAD")
        with ScratchIndex(dataset, embedder) as index:
            seen: dict[tuple, dict] = {}
            for weights in grid:
                # A CJK question uses only dense_weight_cjk; other questions only dense_weight.
                used = tuple(
                    (k, v)
                    for k, v in weights.items()
                    if k == "dense_floor" or (k == "dense_weight_cjk") == cjk
                )
                if used not in seen:
                    tuning = dataclasses.replace(TUNED, **weights)
                    seen[used] = index.score("hybrid", 10, tuning)
                    figures = seen[used]
                    print(
                        f"{name:<9} {dict(used)}  R@5 {figures['recall@5']:.4f}  "
                        f"MRR@10 {figures['mrr@10']:.4f}",
                        flush=True,
                    )
                table.setdefault(tuple(weights.items()), []).append(seen[used]["mrr@10"])
    print("\nmean MRR@10 over the sets, best first:")
    for weights, mrrs in sorted(table.items(), key=lambda item: -statistics.mean(item[1])):
        print(
            f"{statistics.mean(mrrs):.4f}  {dict(weights)}  " + " ".join(f"{m:.4f}" for m in mrrs)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
