"""Embedding speed of the default (multilingual, int8 ONNX) path, the English model's paths, and
the import.

    .venv/bin/python benchmarks/import.py [PDF] [--rounds N]

On a long PDF (the free-culture book by default), in one run, each round back to back:
embedding every passage as an import gives it to the model (after its title and section path)
with the default path (multilingual-e5-small's int8 graph, target at least 100 passages/s), the
English model's int8 graph, its fp32 graph (what older notebooks use) and its
sentence-transformers torch path; and the whole import with the default path. Prints passages per
second of each path and their ratio to torch, the whole import against the default embedding
alone (target: at most 1.15), a query's time with the default model (target: at most 15 ms), the
cosine of the English graphs' vectors to torch's, peak memory, and the splitter's speed against
LangChain's splitter (500/50).
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
from knownote.settings import MULTILINGUAL, PACKAGED_INT8, PACKAGED_MODEL, Settings
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
    default = get_embedder(MULTILINGUAL)
    paths = {
        "default (multilingual int8)": default,
        "English int8 graph": get_embedder(PACKAGED_INT8),
        "English fp32 graph": packaged_onnx_embedder(PACKAGED_MODEL),
        "English torch path": SentenceTransformerEmbedder(PACKAGED_MODEL),
    }
    for embedder in paths.values():
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
        f"{len(texts):,} passages; rss after loading the models {peak_rss_mb():.0f} MB; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    times: dict[str, list[float]] = {name: [] for name in [*paths, "whole import"]}
    vectors: dict[str, np.ndarray] = {}
    for round_no in range(1, args.rounds + 1):
        for name, embedder in paths.items():
            t = time.perf_counter()
            vectors[name] = embedder.embed_passages(texts)
            times[name].append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as home:
            settings = Settings().with_(home=Path(home))
            store = Store.open(settings.db_path)
            notebook = store.create_notebook("bench", default.name, default.dim)
            t = time.perf_counter()
            result = import_file(
                store, notebook, args.pdf.name, data, settings=settings, embedder=default
            )
            times["whole import"].append(time.perf_counter() - t)
            store.close()
        assert result.status == "imported", result.error
        print(f"round {round_no}: " + ", ".join(f"{n} {t[-1]:.2f} s" for n, t in times.items()))

    median = {name: statistics.median(t) for name, t in times.items()}
    n = len(texts)
    torch_s = median["English torch path"]
    for name in paths:
        print(
            f"{name + ':':<29} {n / median[name]:6.1f} passages/s  ({median[name]:.2f} s, "
            f"{torch_s / median[name]:.2f}x torch)"
        )
    default_s = median["default (multilingual int8)"]
    print(f"default: target >= 100 passages/s: {n / default_s:.1f}")
    import_s = median["whole import"]
    rate = result.passages / import_s
    print(f"whole import (median):        {import_s:.2f} s  ({rate:.0f} passages/s)")
    print(f"import / default embedding:   {import_s / default_s:.3f}  (target <= 1.15)")
    questions = [t[:90] for t in texts[:: max(1, n // 50)]][:50]
    t = time.perf_counter()
    for question in questions:
        default.embed_query(question)
    query_ms = (time.perf_counter() - t) / len(questions) * 1000
    print(f"query with the default model: {query_ms:.1f} ms (target <= 15 ms)")
    for name in ("English int8 graph", "English fp32 graph"):
        cosines = (vectors[name] * vectors["English torch path"]).sum(axis=1)
        print(
            f"cosine {name} vs torch: mean {float(np.mean(cosines)):.6f}, "
            f"min {float(np.min(cosines)):.6f}"
        )
    print(f"peak memory (max RSS):        {peak_rss_mb():.0f} MB")
    print(f"load average at the end:      {os.getloadavg()[0]:.1f}")
    ratio = splitter_ratio(text)
    print(
        "splitter vs LangChain RecursiveCharacterTextSplitter(500, 50): "
        + ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in ratio.items()
        )
    )


if __name__ == "__main__":
    main()
