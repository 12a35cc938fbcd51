"""Would a coarse partition (k-means cells, scan only the nearest cells) speed up the vector query?

Builds, in an in-memory DuckDB, the two tables the vector query reads (`passage_codes` with one
more column, the passage's cell, and a `FLOAT[384]` vectors table with its primary key) from
vectors made as `benchmarks/search.py` makes them, and times in one run, per real question:
numpy brute force; the shipped query's shape (Hamming pass over every code, exact re-rank of the
candidates) with 2,000 and 1,000 candidates; and the same pass restricted to the `--probes`
cells nearest the query (k-means over a sample, `--cells` cells). Prints medians, their ratio
to numpy and how often the top 10 equals exact search. The cells are not shipped: they did not
make the query faster (see the README).

    nice .venv/bin/python benchmarks/partition.py [--size 100000] [--cells 256] [--probes 32 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search import corpus_passages, synthetic

from knownote.index.codes import binary_codes
from knownote.index.embedders import get_embedder

HAMMING = " + ".join(f"bit_count(xor(c.c{i}, ?::BIGINT))::SMALLINT" for i in range(6))


def kmeans(x: np.ndarray, cells: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means over a sample of 40 vectors a cell; returns unit centroids."""
    sample = x[rng.choice(len(x), min(len(x), 40 * cells), replace=False)]
    centroids = sample[rng.choice(len(sample), cells, replace=False)].copy()
    for _ in range(15):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        for c in range(cells):
            members = sample[nearest == c]
            if len(members):
                centroids[c] = members.sum(0)
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    return centroids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--cells", type=int, default=256)
    parser.add_argument("--probes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embedder = get_embedder()
    texts, questions = corpus_passages(1500)
    base = embedder.embed_passages(texts)
    queries = np.stack([embedder.embed_query(q) for q in questions[: args.queries]])
    x, _ = synthetic(base, args.size, np.random.default_rng(0))
    centroids = kmeans(x, args.cells, np.random.default_rng(1))
    cell = np.concatenate(
        [np.argmax(x[i : i + 50_000] @ centroids.T, axis=1) for i in range(0, len(x), 50_000)]
    )
    db = duckdb.connect()
    codes = binary_codes(x)
    ids = np.arange(len(x), dtype=np.int64)
    code_rows = pa.table(
        {"passage_id": ids, "notebook_id": np.ones(len(x), np.int64), "document_id": ids // 1000,
         **{f"c{i}": codes[:, i] for i in range(6)}, "cell": cell.astype(np.int32)}
    )  # fmt: skip
    db.register("code_rows", code_rows)
    db.execute("CREATE TABLE passage_codes AS SELECT * FROM code_rows")
    vector_rows = pa.table(
        {
            "passage_id": ids,
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 384),
        }
    )
    db.execute("CREATE TABLE vectors (passage_id BIGINT PRIMARY KEY, embedding FLOAT[384])")
    db.register("vector_rows", vector_rows)
    db.execute("INSERT INTO vectors SELECT * FROM vector_rows")

    def query(q: np.ndarray, candidates: int, cells: list[int] | None = None) -> set[int]:
        where = "c.notebook_id = 1"
        if cells is not None:
            where += f" AND c.cell IN ({', '.join(map(str, cells))})"
        rows = db.execute(
            f"""
            WITH candidates AS (
                SELECT c.passage_id FROM passage_codes c WHERE {where} ORDER BY {HAMMING} LIMIT ?
            ),
            query AS (SELECT ?::FLOAT[384] AS embedding)
            SELECT v.passage_id, array_inner_product(v.embedding, query.embedding) AS score
            FROM vectors v, query WHERE v.passage_id IN (SELECT passage_id FROM candidates)
            ORDER BY score DESC, v.passage_id LIMIT 10
            """,
            [*map(int, binary_codes(q)[0]), candidates, q.tolist()],
        ).fetchall()
        return {pid for pid, _ in rows}

    variants = {"codes, 2,000 candidates": lambda q: query(q, 2000),
                "codes, 1,000 candidates": lambda q: query(q, 1000)}  # fmt: skip
    for p in args.probes:
        variants[f"{p}/{args.cells} cells, 2,000 candidates"] = lambda q, p=p: query(
            q, 2000, np.argsort(-(centroids @ q))[:p].tolist()
        )
    for run in variants.values():
        run(queries[0])
    took: dict[str, list[float]] = {name: [] for name in ["numpy", *variants]}
    same = dict.fromkeys(variants, 0)
    for q in queries:
        t = time.perf_counter()
        exact = set(np.argpartition(-(x @ q), 10)[:10].tolist())
        took["numpy"].append((time.perf_counter() - t) * 1000)
        for name, run in variants.items():
            t = time.perf_counter()
            got = run(q)
            took[name].append((time.perf_counter() - t) * 1000)
            same[name] += got == exact
    numpy_ms = statistics.median(took["numpy"])
    print(f"{args.size:,} passages, {args.cells} cells (largest {np.bincount(cell).max():,})")
    print(f"  numpy brute force {numpy_ms:.2f} ms")
    for name in variants:
        ms = statistics.median(took[name])
        print(f"  {name:32s} {ms:6.2f} ms {ms / numpy_ms:5.2f}x  same top 10 {same[name]}/"
              f"{len(queries)}")  # fmt: skip


if __name__ == "__main__":
    main()
