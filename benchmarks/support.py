"""Support spans: how long `support_spans` takes for typical and awkward answers, in one run.

    .venv/bin/python benchmarks/support.py

Eight passages of a real document (../shared/corpus: the DPR paper, its text as PyMuPDF gives
it, split as at import) are put in front of a made-up answer; the embedding model is loaded
first, as it is in the app when an answer is saved. Prints the median and worst of RUNS runs for
a 6-sentence answer (target: median ≤ 20 ms), a 200-sentence answer, an answer with no sentence
punctuation at all (Chinese, and a list) and an empty answer (targets: worst < 200 ms). The CPU
time is printed too: on a shared machine the wall-clock worst case is mostly waiting for a core.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from knownote.answer.cite import SourcePassage
from knownote.answer.support import sentence_pieces, support_spans
from knownote.index.embedders import get_embedder
from knownote.index.split import split

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus"
PDF = CORPUS / "docs/pdf/paper_dpr_2004.04906_2col.pdf"
CHINESE = CORPUS / "docs/web_text/md_zh_distributed_training_notes.md"
RUNS = 30


def passages() -> list[SourcePassage]:
    import pymupdf

    with pymupdf.open(PDF) as doc:
        text = "\n\n".join(page.get_text() for page in doc)
    spans = split(text, 500, 50)[10:18]
    return [
        SourcePassage(n, n, 1, "DPR", n, s.start, s.end, None, None, text[s.start : s.end], True)
        for n, s in enumerate(spans, start=1)
    ]


def answers(given: list[SourcePassage]) -> dict[str, str]:
    """Answers made of the passages' own sentences, shortened and marked, plus awkward ones."""
    sentences = []
    for p in given:
        for a, b in sentence_pieces(p.text):
            words = p.text[a:b].split()
            if len(words) >= 6:
                sentences.append(" ".join(words[: len(words) * 2 // 3]) + f" [{p.n}].")
    chinese = CHINESE.read_text(encoding="utf-8")
    no_punctuation = "".join(ch for ch in chinese if ch not in "。！？.!?\n")[:3000]
    return {
        "6 sentences": " ".join(sentences[:: max(1, len(sentences) // 6)][:6]),
        "200 sentences": " ".join((sentences * 20)[:200]),
        "no punctuation (Chinese)": no_punctuation + " [1]",
        "no punctuation (a list)": "\n".join(f"- {s.rstrip('.')}" for s in sentences[:40]),
        "empty": "",
    }


def timed(run: Callable[[], object]) -> tuple[float, float, float]:
    """Median and worst wall-clock ms, and median CPU ms (what a busy machine does not inflate)."""
    times, cpu = [], []
    for _ in range(RUNS):
        t, c = time.perf_counter(), time.process_time()
        run()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(times) * 1000, max(times) * 1000, statistics.median(cpu) * 1000


def main() -> None:
    if not PDF.exists() or not CHINESE.exists():
        sys.exit(f"needs the shared corpus ({PDF.parent} is absent)")
    get_embedder().embed_query("warm up")  # the model is loaded in the app when answers save
    given = passages()
    print(f"{len(given)} passages, {sum(len(p.text) for p in given):,} characters; {RUNS} runs")
    for name, text in answers(given).items():
        supports = support_spans(text, given)
        sentences = len(sentence_pieces(text, lines=True))
        median, worst, cpu = timed(lambda text=text: support_spans(text, given))
        print(
            f"{name:<26} {sentences:>4} sentences {len(supports):>4} spans  "
            f"median {median:6.2f} ms  worst {worst:6.2f} ms  (CPU median {cpu:6.2f} ms)"
        )


if __name__ == "__main__":
    main()
