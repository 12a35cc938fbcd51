"""Embedding speed of the default (int8 ONNX) path against sentence-transformers, and the import.

    .venv/bin/python benchmarks/import.py [PDF] [--rounds N]

On a long PDF (the free-culture book by default), in one run, each round back to back:
embedding every passage as an import gives it to the model (after its title and section path)
with the default path (the int8 graph in ONNX Runtime, no torch), with the fp32 graph (what
notebooks made before it use) and with the sentence-transformers torch path, and the whole import
with the default path. Prints passages per second of each path and their ratio to torch (target
for the default: at least 3), the whole import against the default embedding alone (target: at
most 1.15), the mean and minimum cosine of each path's vectors to the torch path's, peak memory,
and the splitter's speed against LangChain's splitter (500/50).
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

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.split import splitter_ratio
from knownote.index.context import embedding_text
from knownote.index.embed import SentenceTransformerEmbedder
from knownote.index.embed_onnx import packaged_onnx_embedder
from knownote.index.embedders import get_embedder
from knownote.index.split import split
from knownote.pipeline.ingest import import_file
from knownote.read.extract import extract
from knownote.read.sections import section_paths
from knownote.settings import PACKAGED_MODEL, Settings
from knownote.store.db import Store

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
    default = get_embedder()
    fp32 = packaged_onnx_embedder(PACKAGED_MODEL)
    torch_path = SentenceTransformerEmbedder(PACKAGED_MODEL)
    for embedder in (default, fp32, torch_path):
        embedder.embed_passages(["warm up the model"] * 64)
    # What an import gives the model: each passage after its document title and section path.
    extracted = extract(data, args.pdf.name)
    text = extracted.text
    spans = split(text)
    sections = section_paths(text, extracted.headings, [s.start for s in spans])
    title = extracted.title or args.pdf.name
    texts = [
        embedding_text(title, section, text[s.start : s.end])
        for s, section in zip(spans, sections, strict=True)
    ]
    print(
        f"{args.pdf.name}: {len(data) / 1e6:.1f} MB, {len(text):,} characters, "
        f"{len(texts):,} passages; default path {type(default).__name__}; "
        f"rss after loading the three {peak_rss_mb():.0f} MB; load average {os.getloadavg()[0]:.1f}"
    )

    default_times, fp32_times, torch_times, import_times = [], [], [], []
    for round_no in range(1, args.rounds + 1):
        t = time.perf_counter()
        ours = default.embed_passages(texts)
        default_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        exact = fp32.embed_passages(texts)
        fp32_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        theirs = torch_path.embed_passages(texts)
        torch_times.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as home:
            settings = Settings().with_(home=Path(home))
            store = Store.open(settings.db_path)
            notebook = store.create_notebook("bench", default.name, default.dim)
            t = time.perf_counter()
            result = import_file(
                store, notebook, args.pdf.name, data, settings=settings, embedder=default
            )
            import_times.append(time.perf_counter() - t)
            store.close()
        assert result.status == "imported", result.error
        print(
            f"round {round_no}: default embedding {default_times[-1]:.2f} s, fp32 graph "
            f"{fp32_times[-1]:.2f} s, torch {torch_times[-1]:.2f} s, "
            f"whole import {import_times[-1]:.2f} s"
        )

    default_s = statistics.median(default_times)
    fp32_s = statistics.median(fp32_times)
    torch_s = statistics.median(torch_times)
    import_s = statistics.median(import_times)
    n = len(texts)
    print(f"default path ({default.name}): {n / default_s:6.1f} passages/s  ({default_s:.2f} s)")
    print(f"fp32 graph (ONNX Runtime):     {n / fp32_s:6.1f} passages/s  ({fp32_s:.2f} s)")
    print(f"torch path (sentence-transf.): {n / torch_s:6.1f} passages/s  ({torch_s:.2f} s)")
    print(f"default / torch speed ratio:   {torch_s / default_s:.2f}x  (target >= 3)")
    print(f"fp32 graph / torch speed ratio: {torch_s / fp32_s:.2f}x")
    print(
        f"whole import (median):         {import_s:.2f} s  ({result.passages / import_s:.0f} "
        "passages/s)"
    )
    print(f"import / default embedding:    {import_s / default_s:.3f}  (target <= 1.15)")
    for label, vectors in (("default", ours), ("fp32 graph", exact)):
        cosines = (vectors * theirs).sum(axis=1)
        print(
            f"cosine {label} vs torch:{' ' * (14 - len(label))} mean "
            f"{float(np.mean(cosines)):.6f}, min {float(np.min(cosines)):.6f}"
        )
    print(f"peak memory (max RSS):         {peak_rss_mb():.0f} MB")
    print(f"load average at the end:       {os.getloadavg()[0]:.1f}")
    ratio = splitter_ratio(text)
    print(
        "splitter vs LangChain RecursiveCharacterTextSplitter(500, 50): "
        + ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in ratio.items()
        )
    )


if __name__ == "__main__":
    main()
