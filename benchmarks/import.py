"""Whole import of a long PDF against embedding the same passages alone, measured in one run.

    .venv/bin/python benchmarks/import.py [PDF] [--rounds N]

Prints the wall time of each, their ratio (target: at most 1.15), passages per second, peak
memory, and the splitter's speed against LangChain's RecursiveCharacterTextSplitter (500/50).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.split import splitter_ratio
from knownote.embed import get_embedder
from knownote.extract import extract
from knownote.ingest import import_file
from knownote.settings import Settings
from knownote.split import split
from knownote.store import Store

BOOK = (
    Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf/book_free_culture_lessig_352p.pdf"
)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf", nargs="?", type=Path, default=BOOK)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = args.pdf.read_bytes()
    embedder = get_embedder()
    embedder.embed_passages(["warm up the model"] * 64)
    text = extract(data, args.pdf.name).text
    texts = [text[s.start : s.end] for s in split(text)]
    print(
        f"{args.pdf.name}: {len(data) / 1e6:.1f} MB, {len(text):,} characters, "
        f"{len(texts):,} passages; rss after model load {peak_rss_mb():.0f} MB"
    )

    embed_times, import_times = [], []
    for round_no in range(1, args.rounds + 1):
        t = time.perf_counter()
        embedder.embed_passages(texts)
        embed_times.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as home:
            settings = Settings().with_(home=Path(home))
            store = Store.open(settings.db_path)
            notebook = store.create_notebook("bench", embedder.name, embedder.dim)
            t = time.perf_counter()
            result = import_file(store, notebook, args.pdf.name, data, settings=settings)
            import_times.append(time.perf_counter() - t)
            store.close()
        assert result.status == "imported", result.error
        print(
            f"round {round_no}: embedding alone {embed_times[-1]:.2f} s, "
            f"whole import {import_times[-1]:.2f} s"
        )

    embed_s, import_s = statistics.median(embed_times), statistics.median(import_times)
    print(f"embedding alone (median): {embed_s:.2f} s")
    print(
        f"whole import (median):    {import_s:.2f} s  ({result.passages / import_s:.0f} passages/s)"
    )
    print(f"import / embedding ratio: {import_s / embed_s:.3f}  (target <= 1.15)")
    print(f"peak memory (max RSS):    {peak_rss_mb():.0f} MB")
    ratio = splitter_ratio(text)
    print(
        "splitter vs LangChain RecursiveCharacterTextSplitter(500, 50): "
        + ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in ratio.items()
        )
    )


if __name__ == "__main__":
    main()
