"""The centre of a model's passage vectors, which its search codes are taken around.

    .venv/bin/python benchmarks/code_centers.py [--model NAME] [--contexts 150]

A search code is the sign bits of a vector (knownote/index/codes.py). The multilingual model's
vectors all lie in a narrow cone (any two have a cosine of 0.7 or more), so nearly every sign
bit is the same for every passage and the codes hardly tell passages apart; taken around the
centre of the cone they do. The centre is the mean vector of passages in many languages (the
corpus's question sets: English, German, Spanish, Russian, Chinese, Japanese), printed as the
constant `knownote/index/code_centers.py` holds, with how well codes around it and around zero
keep the exact nearest passages of held-out questions.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.codes import binary_codes
from knownote.index.embedders import get_embedder
from knownote.index.split import split
from knownote.measure.retrieval import load_squad
from knownote.settings import MULTILINGUAL

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SETS = [
    "qa_en/xquad.en.json",
    "qa_xx/xquad.de.json",
    "qa_xx/xquad.es.json",
    "qa_xx/xquad.ru.json",
    "qa_zh/cmrc2018_dev.json",
    "qa_ja/jsquad-valid-v1.3.json",
]


def hamming_recall(passages: np.ndarray, queries: np.ndarray, center: np.ndarray | None) -> float:
    """Share of each query's exact top 10 found among its 200 nearest codes."""
    codes = binary_codes(passages, center).view(np.uint64)
    found = 0
    for q in queries:
        exact = set(np.argsort(-(passages @ q))[:10])
        code = binary_codes(q[None, :], center).view(np.uint64)[0]
        distance = np.bitwise_count(codes ^ code).sum(axis=1)
        found += len(exact & set(np.argsort(distance, kind="stable")[:200]))
    return found / (10 * len(queries))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MULTILINGUAL)
    parser.add_argument("--contexts", type=int, default=150, help="contexts read per set")
    args = parser.parse_args()
    embedder = get_embedder(args.model)
    texts, questions = [], []
    for path in SETS:
        data = load_squad(CORPUS / path, skip=1500 if "cmrc" in path or "jsquad" in path else 0)
        for context in data.contexts[: args.contexts]:
            texts += [context.text[s.start : s.end] for s in split(context.text, 500, 50)]
        questions += [q.text for q in data.questions[-50:]]  # held out from the centre
    vectors = embedder.embed_passages(texts)
    center = vectors.mean(axis=0)
    queries = np.stack([embedder.embed_query(q) for q in questions])
    print(f"{len(texts)} passages, {len(questions)} questions; mean cosine to the centre "
          f"{float(np.mean(vectors @ (center / np.linalg.norm(center)))):.3f}")  # fmt: skip
    print(f"exact top 10 among the 200 nearest codes: around zero "
          f"{hamming_recall(vectors, queries, None):.3f}, around the centre "
          f"{hamming_recall(vectors, queries, center):.3f}")  # fmt: skip
    print("CENTER = (")
    for i in range(0, len(center), 8):
        print("    " + " ".join(f"{v:.4f}," for v in center[i : i + 8]))
    print(")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
