"""Retrieval in every language of the corpus, for the English model and the multilingual default,
in one run: recall@5 and MRR@10 per mode (as `knownote eval --mode all` prints them).

    .venv/bin/python benchmarks/languages.py [--questions 1500] [--skip 0] [--json FILE]
        [--sets ...] [--models ...] [--compare]

The sets: xquad.en (English), cmrc2018 (Chinese), JSQuAD (Japanese), the six cross-language
sets of ../shared/corpus/qa_cross (German, Spanish and Russian questions over English contexts,
and English questions over German, Spanish and Russian contexts) and the three mixed notebooks of
qa_mixed (German, Spanish and Russian questions over English contexts beside distractor articles
in English and in the question's language; each also searched over its English contexts alone,
as "… en only"). `--skip N` leaves out each set's first N questions: the fusion weights are
chosen on questions the reported figures do not use (held out). `--compare` searches each
notebook twice, as before issue 35 (no fairness across languages) and now, in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from knownote.measure.retrieval import Dataset, ScratchIndex, load_squad
from knownote.search.retrieve import MODES, tuned_for
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
    **{f"{q}+en mixed": f"qa_mixed/xquad.{q}-q.en-ctx.mixed.json" for q in ("de", "es", "ru")},
}
MIXED = " mixed"
MODELS = (PACKAGED_INT8, MULTILINGUAL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1500, help="questions per set at most")
    parser.add_argument("--skip", type=int, default=0, help="leave out each set's first N")
    parser.add_argument("--sets", nargs="*", choices=list(SETS), default=list(SETS))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--compare", action="store_true", help="also search as before issue 35")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args()
    figures: dict[str, dict[str, dict]] = {}
    for name in args.sets:
        dataset = load_squad(CORPUS / SETS[name], args.questions, skip=args.skip)
        variants = [(name, dataset)]
        if name.endswith(MIXED):
            variants.append((name.replace(MIXED, " en only"), asked_only(dataset)))
        for label, data in variants:
            for model in args.models:
                measure(label, data, model, args.compare, figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


def measure(name: str, dataset: Dataset, model: str, compare: bool, figures: dict) -> None:
    """Import the set once, search it in every mode (before and now with `compare`), print."""
    started = time.perf_counter()
    now = tuned_for(model)
    tunings = {"before": dataclasses.replace(now, fair=False), "now": now} if compare else {"": now}
    embedder = get_embedder(model)
    with ScratchIndex(dataset, embedder) as index:
        for label, tuning in tunings.items():
            modes = {mode: index.score(mode, 10, tuning) for mode in MODES}
            figures.setdefault(name, {})[f"{model} {label}".strip()] = modes
            row = "  ".join(
                f"{mode} R@5 {m['recall@5']:.3f} MRR {m['mrr@10']:.3f}" for mode, m in modes.items()
            )
            print(
                f"{name:<15} {model:<27} {label:<6} {len(dataset.questions):>5} q  {row}  "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )


def asked_only(dataset: Dataset) -> Dataset:
    """The set without the contexts that hold no question (its distractors)."""
    used = sorted({q.context for q in dataset.questions})
    place = {old: new for new, old in enumerate(used)}
    return Dataset(
        [dataset.contexts[i] for i in used],
        [dataclasses.replace(q, context=place[q.context]) for q in dataset.questions],
        dataset.skipped,
    )


if __name__ == "__main__":
    sys.exit(main())
