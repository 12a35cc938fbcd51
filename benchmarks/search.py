"""Vector search latency in DuckDB against numpy brute force, measured in the same run.

Builds notebooks of 10k and 100k 384-dimension passages in a real DuckDB file (temp folder).
The vectors resemble real embeddings: each is a real corpus passage embedding mixed with another
one and perturbed (x = unit(e_a + 0.5 e_b + noise)); each passage's text is its e_a passage, so
keyword and hybrid search have real terms. Queries are real questions, embedded by the model.

For every query the two searches run back to back (the machine's load hits both alike):
numpy is a normalised matrix product plus top-k over an in-memory matrix; KnowNote's is
`retrieve.vector_scores` (pass over the compact codes, exact re-rank of the candidates).
Prints the median latencies, their ratio, how often the top 10 equals exact search, and the
medians of a whole hybrid `search()` and of its keyword search at the largest size (each also
as a ratio to numpy's vector search), query embedding included, against the
same search done as before the scope statistics were cached (computed for every query) with the
query embedded by sentence-transformers.

    .venv/bin/python benchmarks/search.py [--sizes 10000 100000] [--queries 200] [--languages]

With `--languages` each passage records its language (English or Chinese, as its text reads),
so the notebook holds two and is searched fairly across them (knownote.index.centring): the
vector scores are then those of vectors centred on their language's mean, and "the same top 10
as exact search" compares with those computed by numpy (timed, as before, is the plain product).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.analyze import heading_terms, text_terms
from knownote.index.context import NewPassage
from knownote.index.embed import SentenceTransformerEmbedder
from knownote.index.embedders import get_embedder
from knownote.index.split import split
from knownote.search import retrieve
from knownote.search.retrieve import Scope, search, vector_scores
from knownote.settings import PACKAGED_MODEL
from knownote.store.db import Store

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SETS = ["qa_en/xquad.en.json", "qa_zh/cmrc2018_dev.json"]
PER_DOCUMENT = 1000
ANALYZER = "stem:en"  # CJK text stays bigrams in every analyzer


def corpus_passages(limit: int) -> tuple[list[str], list[str]]:
    """Real passage texts (split like an import) and real questions from the question sets."""
    texts: list[str] = []
    questions: list[str] = []
    for name in SETS:
        data = json.loads((CORPUS / name).read_text(encoding="utf-8"))
        paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
        wanted = len(texts) + limit // len(SETS)
        for paragraph in paragraphs:
            if len(texts) >= wanted:
                break
            context = paragraph["context"]
            texts.extend(context[s.start : s.end] for s in split(context))
            questions.extend(qa["question"] for qa in paragraph["qas"][:1])
    return texts, questions


def synthetic(base: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, len(base), n)
    b = rng.integers(0, len(base), n)
    x = base[a] + 0.5 * base[b] + rng.normal(0, 0.02, (n, base.shape[1])).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), a


def build(
    path: Path,
    vectors: np.ndarray,
    origin: np.ndarray,
    texts: list[str],
    dim: int,
    memory_limit: str | None = None,
    model: str = "all-MiniLM-L6-v2",
    languages: tuple[str, ...] | None = None,
):
    store = Store.open(path)
    if memory_limit:  # DuckDB's default is 80% of the machine's memory
        store.db.execute(f"SET memory_limit = '{memory_limit}'")
    # The model's name: its search codes are taken around its centre (index/code_centers.py).
    notebook = store.create_notebook("bench", model, dim)
    # Keyword rows as an import makes them now: stemmed words and a heading field (the title).
    counted = [text_terms(t, ANALYZER) for t in texts]
    for i in range(0, len(vectors), PER_DOCUMENT):
        chunk = range(i, min(i + PER_DOCUMENT, len(vectors)))
        title = f"document {i // PER_DOCUMENT}"
        heading = heading_terms(title, ANALYZER)
        parts, passages, offset = [], [], 0
        for j in chunk:
            text = texts[origin[j]]
            terms, n_terms = counted[origin[j]]
            end = offset + len(text)
            passages.append(NewPassage(offset, end, None, None, {**terms, **heading}, "", n_terms))
            parts.append(text)
            offset += len(text) + 2
        store.add_document(
            notebook_id=notebook.id,
            title=title,
            filename=f"doc{i}.txt",
            kind="text",
            sha256=f"bench{i}",
            text="\n\n".join(parts),
            pages=[],
            passages=passages,
            vectors=vectors[chunk.start : chunk.stop],
            terms_as=ANALYZER,
            languages=languages,
        )
    store.sort_terms()  # as an import does once enough keyword rows arrived
    store.db.execute("CHECKPOINT")
    return store, notebook


def against_numpy(
    store: Store,
    scope: Scope,
    vectors: np.ndarray,
    ids: np.ndarray,
    queries: np.ndarray,
    questions: list[str],
) -> tuple[list[float], list[float], int]:
    """Each query's top 10 by numpy brute force and by `vector_scores`, back to back: their
    times (ms) and how many queries got exactly numpy's top 10."""
    numpy_ms, ours_ms, same = [], [], 0
    means = retrieve.language_means(store, scope.notebook_id)
    if means.mixed:
        languages = [row[0] for row in store.db.execute(
            "SELECT coalesce(language, '') FROM passages ORDER BY id"
        ).fetchall()]  # fmt: skip
        rows = means.rows(languages)
    for q, question in zip(queries, questions, strict=True):
        t = time.perf_counter()
        scores = vectors @ (q / np.linalg.norm(q))
        top = np.argpartition(-scores, 10)[:10]
        exact = ids[top[np.argsort(-scores[top])]]
        numpy_ms.append((time.perf_counter() - t) * 1000)
        if means.mixed:
            centred = means.query(q, question)
            exact = ids[np.argsort(-means.scores(vectors, rows, centred))[:10]]
        t = time.perf_counter()
        got = vector_scores(store, scope, q, 10, question=question)
        ours_ms.append((time.perf_counter() - t) * 1000)
        same += {pid for pid, _ in got} == set(exact.tolist())
    return numpy_ms, ours_ms, same


STEPS = ("query embedding", "scope", "vector", "vector distribution", "keyword", "fuse", "hits")


def hybrid_steps(store: Store, embedder, notebook_id: int, question: str) -> dict[str, float]:
    """One hybrid search as `retrieve.search` runs it, each step timed (ms)."""
    took: dict[str, float] = {}
    t = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal t
        now = time.perf_counter()
        took[step] = (now - t) * 1000
        t = now

    scope = Scope(notebook_id)
    vector = embedder.embed_query(question)
    lap("query embedding")
    depth = retrieve.FUSION_DEPTH
    seen = retrieve.look_up(store, scope)
    lap("scope")
    dense_hits = vector_scores(store, scope, vector, depth, seen, question)
    lap("vector")
    mean, std = retrieve.vector_distribution(store, scope, vector, seen, question)
    lap("vector distribution")
    sparse = retrieve.keyword_ranking(store, scope, question, depth, seen)
    lap("keyword")
    fused = retrieve.fuse(retrieve.Ranking(dense_hits, mean, std), sparse, depth)[:8]
    lap("fuse")
    retrieve.fetch_hits(store, fused)
    lap("hits")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--base", type=int, default=1500, help="real passages embedded")
    parser.add_argument("--languages", action="store_true", help="passages record a language")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    embedder = get_embedder()
    torch_path = SentenceTransformerEmbedder(PACKAGED_MODEL)
    torch_path.embed_query("load the model")
    t0 = time.perf_counter()
    texts, questions = corpus_passages(args.base)
    base = embedder.embed_passages(texts)
    questions = questions[: args.queries]
    queries = np.stack([embedder.embed_query(q) for q in questions])
    print(
        f"embedded {len(texts)} corpus passages and {len(questions)} questions "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    with tempfile.TemporaryDirectory(prefix="knownote-bench-") as folder:
        for size in args.sizes:
            vectors, origin = synthetic(base, size, rng)
            t0 = time.perf_counter()
            store, notebook = build(
                Path(folder) / f"{size}.duckdb",
                vectors,
                origin,
                texts,
                384,
                model=embedder.name,
                languages=("en", "zh") if args.languages else None,
            )
            held = store.passage_languages(notebook.id)
            print(
                f"\n{size:,} passages ({held or 'no languages recorded'}): "
                f"built in {time.perf_counter() - t0:.0f} s"
            )
            ids = np.array(
                [r[0] for r in store.db.execute("SELECT id FROM passages ORDER BY id").fetchall()]
            )
            scope = Scope(notebook.id)
            for q in queries[:5]:  # warm up caches
                vector_scores(store, scope, q, 10)
            numpy_ms, duck_ms, same = against_numpy(store, scope, vectors, ids, queries, questions)
            n_ms, d_ms = statistics.median(numpy_ms), statistics.median(duck_ms)
            print(f"  numpy brute force   median {n_ms:7.2f} ms")
            print(f"  knownote vector     median {d_ms:7.2f} ms  ratio {d_ms / n_ms:.2f}x numpy")
            print(f"  same top 10 as exact search: {same}/{len(queries)} queries")
            if size == max(args.sizes):
                hybrid_ms, before_ms = [], []
                for question in questions:
                    t = time.perf_counter()
                    search(store, embedder, notebook.id, question, k=8)
                    hybrid_ms.append((time.perf_counter() - t) * 1000)
                    # As before this change: the scope's statistics and sample computed for
                    # every query, and the query embedded by sentence-transformers.
                    retrieve._facts.clear()
                    t = time.perf_counter()
                    search(store, torch_path, notebook.id, question, k=8)
                    before_ms.append((time.perf_counter() - t) * 1000)
                now, before = statistics.median(hybrid_ms), statistics.median(before_ms)
                print(
                    f"  hybrid search (query embedding included) median {now:.1f} ms, "
                    f"ratio {now / n_ms:.2f}x numpy"
                )
                steps = [hybrid_steps(store, embedder, notebook.id, q) for q in questions]
                print(
                    "  where it goes (median ms): "
                    + ", ".join(f"{s} {statistics.median(t[s] for t in steps):.1f}" for s in STEPS)
                )
                keyword = statistics.median(t["keyword"] for t in steps)
                print(f"  keyword median {keyword:.2f} ms, ratio {keyword / n_ms:.2f}x numpy")
                print(
                    f"  the same, statistics per query and torch query embedding (before): "
                    f"median {before:.1f} ms; now {before / now:.1f}x faster"
                )
            store.close()


if __name__ == "__main__":
    main()
