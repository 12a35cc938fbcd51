"""A notebook of a million passages: size, build and open time, search latency, memory.

The passages and vectors are made as `benchmarks/search.py` makes them: real corpus passages
(xquad.en and CMRC 2018, split like an import) embedded once by the model, each stored vector a
mix of two of them plus noise, each passage's text its first one's; the queries are real
questions embedded by the model. Nothing embeds a million passages.

Prints the database size per passage, the build time (imports of 1,000-passage documents, then
the keyword rows sorted once as imports do when enough arrived), the time `Store.open` takes on
the built file, the p50/p95 of `retrieve.vector_scores` against numpy brute force (a normalised
matrix product and top-k over the same vectors in memory) in the same run with how often the top
10 equals exact search, the p50/p95 of a whole hybrid `search()` (query embedding included) and
the resident memory of the process after opening and searching (before numpy's matrix is
loaded; the build's peak is reset first).

    nice .venv/bin/python benchmarks/scale.py [--size N] [--queries 100] [--keep DIR [--reuse]]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search import STEPS, against_numpy, build, corpus_passages, hybrid_steps, synthetic

from knownote.index.embedders import get_embedder
from knownote.search.retrieve import Scope, search
from knownote.store.db import Store


def memory() -> dict[str, int]:
    """VmRSS and VmHWM (peak) of this process, in MB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024
    return out


def p50_p95(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), float(np.percentile(values, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--base", type=int, default=1500, help="real passages embedded")
    parser.add_argument("--build-memory", default="4GB", help="DuckDB's memory limit to build")
    parser.add_argument("--reuse", action="store_true", help="search the --keep database again")
    parser.add_argument("--keep", type=Path, help="build the database in this folder and keep it")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    embedder = get_embedder()
    texts, questions = corpus_passages(args.base)
    base = embedder.embed_passages(texts)
    questions = questions[: args.queries]
    queries = np.stack([embedder.embed_query(q) for q in questions])
    print(f"{args.size:,} passages from {len(texts)} real ones; {len(questions)} real questions")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="knownote-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"scale-{args.size}.duckdb"
    if args.reuse and path.exists():
        print(f"reusing {path} (built by an earlier run)")
    else:
        path.unlink(missing_ok=True)
        vectors, origin = synthetic(base, args.size, rng)
        t0 = time.perf_counter()
        store, _ = build(path, vectors, origin, texts, 384, args.build_memory, embedder.name)
        built = time.perf_counter() - t0
        store.close()
        print(f"built in {built:.0f} s (keyword rows sorted included)")
        del vectors
    size = path.stat().st_size
    print(f"database {size / 1e9:.2f} GB, {size / args.size:,.0f} bytes a passage")
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    before = memory()["VmRSS"]
    t0 = time.perf_counter()
    store = Store.open(path)
    opened = time.perf_counter() - t0
    print(f"Store.open: {opened * 1000:.0f} ms")
    (notebook,) = store.notebooks()
    t0 = time.perf_counter()
    search(store, embedder, notebook.id, questions[0], k=8)
    print(f"first search (reads the notebook's search codes and keyword lists into memory): "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms")  # fmt: skip
    for question in questions[:5]:  # warm up
        search(store, embedder, notebook.id, question, k=8)
    hybrid_ms = []
    for question in questions:
        t = time.perf_counter()
        search(store, embedder, notebook.id, question, k=8)
        hybrid_ms.append((time.perf_counter() - t) * 1000)
    rss = memory()
    p50, p95 = p50_p95(hybrid_ms)
    print(f"hybrid search (query embedding included): p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    print(f"resident memory after opening and searching: {rss['VmRSS']:,} MB "
          f"(peak {rss['VmHWM']:,} MB; {before:,} MB before opening)")  # fmt: skip
    steps = [hybrid_steps(store, embedder, notebook.id, q) for q in questions]
    print(
        "where a hybrid search's time goes (median ms): "
        + ", ".join(f"{s} {statistics.median(t[s] for t in steps):.1f}" for s in STEPS)
    )

    vectors, _ = synthetic(base, args.size, np.random.default_rng(0))
    ids = np.array(
        [r[0] for r in store.db.execute("SELECT id FROM passages ORDER BY id").fetchall()]
    )
    scope = Scope(notebook.id)
    numpy_ms, ours_ms, same = against_numpy(store, scope, vectors, ids, queries, questions)
    (n50, n95), (o50, o95) = p50_p95(numpy_ms), p50_p95(ours_ms)
    print(f"numpy brute force:  p50 {n50:.1f} ms, p95 {n95:.1f} ms")
    print(
        f"knownote vector:    p50 {o50:.1f} ms, p95 {o95:.1f} ms ({o50 / n50:.2f}x numpy at "
        f"p50); same top 10 as exact: {same}/{len(queries)}"
    )
    keyword = statistics.median(t["keyword"] for t in steps)
    print(f"keyword p50 {keyword:.1f} ms ({keyword / n50:.2f}x numpy at p50), hybrid p50 "
          f"{p50:.1f} ms ({p50 / n50:.2f}x numpy at p50)")  # fmt: skip
    print(f"peak resident memory of the run (numpy's matrix included): {memory()['VmHWM']:,} MB")
    store.close()


if __name__ == "__main__":
    main()
