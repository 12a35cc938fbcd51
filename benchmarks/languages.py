"""Retrieval in every language of the corpus, for the English model and the multilingual default,
in one run: recall@5 and MRR@10 per mode (as `knownote eval --mode all` prints them).

    .venv/bin/python benchmarks/languages.py [--questions 1500] [--skip 0] [--json FILE]

The sets: xquad.en (English), cmrc2018 (Chinese), JSQuAD (Japanese), and the six cross-language
sets of ../shared/corpus/qa_cross (German, Spanish and Russian questions over English contexts,
and English questions over German, Spanish and Russian contexts). `--skip N` leaves out each
set's first N questions: the fusion weights are chosen on questions the reported figures do not
use (held out).
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
from knownote.measure.retrieval import evaluate, load_squad
from knownote.search.retrieve import MODES
from knownote.settings import MULTILINGUAL, PACKAGED_INT8

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SETS = {
    "xquad.en": "qa_en/xquad.en.json",
    "cmrc2018": "qa_zh/cmrc2018_dev.json",
    "JSQuAD": "qa_ja/jsquad-valid-v1.3.json",
    **{
        f"{q}→{c}": f"qa_cross/xquad.{q}-q.{c}-ctx.json"
        for q, c in (
            ("de", "en"),
            ("es", "en"),
            ("ru", "en"),
            ("en", "de"),
            ("en", "es"),
            ("en", "ru"),
        )
    },
}
MODELS = (PACKAGED_INT8, MULTILINGUAL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1500, help="questions per set at most")
    parser.add_argument("--skip", type=int, default=0, help="leave out each set's first N")
    parser.add_argument("--sets", nargs="*", choices=list(SETS), default=list(SETS))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args()
    figures: dict[str, dict[str, dict]] = {}
    for name in args.sets:
        dataset = load_squad(CORPUS / SETS[name], args.questions, skip=args.skip)
        for model in args.models:
            started = time.perf_counter()
            report = evaluate(dataset, get_embedder(model), MODES, k=10)
            figures.setdefault(name, {})[model] = report.as_dict()
            row = "  ".join(
                f"{mode} R@5 {m['recall@5']:.3f} MRR {m['mrr@10']:.3f}"
                for mode, m in report.modes.items()
            )
            print(
                f"{name:<9} {model:<27} {report.questions:>5} q  {row}  "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
