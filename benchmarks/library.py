"""Questions across the library: recall@5 of each question asked of its own notebook and of the
whole library, its notebooks embedded with different models.

    .venv/bin/python benchmarks/library.py [--questions N] [--mode hybrid|vector|keyword]

1. xquad.en's 48 articles in two halves: the first a notebook embedded with the English model
   (all-MiniLM-L6-v2-int8), the second with the multilingual one (multilingual-e5-small-int8).
   Every question is asked of its own notebook, then of both as one library, fused by score and
   by reciprocal rank. The goal: the library's recall@5 within 0.02 of the own notebook's.
2. Chinese questions (cmrc2018's first N) across a library of a Chinese notebook (its contexts,
   multilingual model) and an English one (all of xquad.en, English model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from knownote.measure.library import Part, evaluate_library, split_articles
from knownote.measure.retrieval import load_squad, stderr_progress
from knownote.settings import MULTILINGUAL, PACKAGED_INT8

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
XQUAD = CORPUS / "qa_en" / "xquad.en.json"
CMRC = CORPUS / "qa_zh" / "cmrc2018_dev.json"


def show(title: str, report: dict) -> None:
    own = report["own notebook"]["recall@5"]
    print(f"\n{title}: {report['questions']} questions, {report['mode']}")
    for part in report["notebooks"]:
        print(f"  notebook {part['name']}: {part['documents']} documents, {part['model']}, "
              f"{part['questions']} questions asked")  # fmt: skip
    print(f"  {'asked of':<26} {'recall@1':>9} {'recall@5':>9} {'mrr@10':>9} {'Δ recall@5':>11}")
    rows = [("own notebook", report["own notebook"])]
    rows += [(f"library, fused by {f}", m) for f, m in report["library"].items()]
    for name, m in rows:
        print(f"  {name:<26} {m['recall@1']:>9.3f} {m['recall@5']:>9.3f} {m['mrr@10']:>9.3f} "
              f"{m['recall@5'] - own:>+11.3f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, help="at most N questions per part")
    parser.add_argument("--chinese", type=int, default=300, help="cmrc2018 questions asked")
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "vector", "keyword"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    english, multilingual = get_embedder(PACKAGED_INT8), get_embedder(MULTILINGUAL)
    started = time.perf_counter()
    first, second = split_articles(XQUAD, 2, args.questions)
    halves = evaluate_library(
        [
            Part("xquad.en 1st half", first, english),
            Part("xquad.en 2nd half", second, multilingual),
        ],
        mode=args.mode,
        progress=stderr_progress,
    ).as_dict()
    chinese = evaluate_library(
        [
            Part("xquad.en", load_squad(XQUAD), english, asked=False),
            Part("cmrc2018", load_squad(CMRC, args.chinese), multilingual),
        ],
        mode=args.mode,
        progress=stderr_progress,
    ).as_dict()
    if args.json:
        print(json.dumps({"xquad.en halves": halves, "Chinese": chinese}, indent=2))
        return 0
    show("xquad.en in two notebooks (English model | multilingual model)", halves)
    show("Chinese questions across an English and a Chinese notebook", chinese)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
