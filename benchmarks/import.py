"""Import speed against the embedding model's own speed, on books in three languages.

    .venv/bin/python benchmarks/import.py [--books en de zh papers] [--rounds N] [--cold] [--paths]

The books: the free-culture PDF (English, 352 pages); the German XQuAD articles and the first
200,000 characters of CMRC 2018's Chinese articles, each written as one Markdown book (a heading per
article); and "papers", the corpus's six research papers (8-14 pages each) imported together as a
small library, by one `knownote import` when cold. For each book, in each round back to back: the
default model (multilingual-e5-small's int8 graph), loaded and warm, embedding every passage as an
import gives it to the model (after its title and section path); with `--cold` a `knownote import`
in a new process (interpreter, readers and model loaded from nothing); and the whole import of the
book into a fresh data folder with that same loaded model. Prints medians: passages and tokens per
second of the embedding alone, the whole import's time and its ratio to the embedding alone
(target: at most 1.2); with `--cold`, also each round's cold import over that round's embedding
alone, run one after the other, so a minute when the machine is slower counts in both. `--paths`
also compares, on the first book, the English model's int8 and fp32 graphs and its
sentence-transformers torch path, with the cosines of their vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.context import embedding_text
from knownote.index.embedders import get_embedder
from knownote.index.split import split
from knownote.pipeline.ingest import import_file
from knownote.read.extract import extract
from knownote.read.sections import section_paths
from knownote.settings import MULTILINGUAL, Settings
from knownote.store.db import Store

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
BOOK = CORPUS / "docs/pdf/book_free_culture_lessig_352p.pdf"
PAPERS = sorted((CORPUS / "docs/pdf").glob("paper_*.pdf"))
ZH_CHARS = 200_000


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def squad_book(path: Path, max_chars: int | None = None) -> bytes:
    """A question set's articles as one Markdown book: a heading per article, its paragraphs."""
    parts: list[str] = []
    size = 0
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        title = str(article.get("title") or "").replace("_", " ")
        parts.append(f"# {title}")
        for paragraph in article["paragraphs"]:
            parts.append(paragraph["context"].strip())
            size += len(parts[-1])
        if max_chars and size >= max_chars:
            break
    return "\n\n".join(parts).encode("utf-8")


def books() -> dict[str, list[tuple[str, bytes]]]:
    """Book -> its files (name, bytes): a language code's book, or "papers", the corpus's six
    English research papers as one library."""
    return {
        "en": [(BOOK.name, BOOK.read_bytes())],
        "de": [("xquad_de_articles.md", squad_book(CORPUS / "qa_xx/xquad.de.json"))],
        "zh": [("cmrc2018_articles.md", squad_book(CORPUS / "qa_zh/cmrc2018_dev.json", ZH_CHARS))],
        "papers": [(p.name, p.read_bytes()) for p in PAPERS],
    }


def import_texts(files: list[tuple[str, bytes]]) -> list[str]:
    """What an import gives the model: each passage after its document title and section path."""
    texts = []
    for name, data in files:
        extracted = extract(data, name)
        text = extracted.text
        spans = split(text)
        sections = section_paths(text, extracted.headings, [s.start for s in spans])
        title = extracted.title or name
        texts += [
            embedding_text(title, section, text[s.start : s.end])
            for s, section in zip(spans, sections, strict=True)
        ]
    return texts


def whole_import(files: list[tuple[str, bytes]], embedder) -> tuple[float, int]:
    """Seconds to import the files into a fresh data folder with a loaded model; passages."""
    with tempfile.TemporaryDirectory() as home:
        settings = Settings().with_(home=Path(home))
        store = Store.open(settings.db_path)
        notebook = store.create_notebook("bench", embedder.name, embedder.dim)
        t = time.perf_counter()
        results = [
            import_file(store, notebook, name, data, settings=settings, embedder=embedder)
            for name, data in files
        ]
        seconds = time.perf_counter() - t
        store.close()
    assert all(r.status == "imported" for r in results), [r.error for r in results]
    return seconds, sum(r.passages for r in results)


def cold_import(files: list[tuple[str, bytes]]) -> float:
    """Seconds of one `knownote import` of the files in a new process, from nothing to the
    last committed document."""
    with tempfile.TemporaryDirectory() as home:
        paths = [Path(home) / name for name, _ in files]
        for path, (_, data) in zip(paths, files, strict=True):
            path.write_bytes(data)
        env = {
            **os.environ,
            "KNOWNOTE_HOME": str(Path(home) / "data"),
            "KNOWNOTE_EMBEDDING_MODEL": MULTILINGUAL,
            # The graphs this machine made once are shared, as a user's data folder keeps them.
            "KNOWNOTE_MODEL_CACHE": str(Settings().model_cache),
        }
        command = [sys.executable, "-m", "knownote.cli", "import", "bench", *map(str, paths)]
        t = time.perf_counter()
        subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True)
        return time.perf_counter() - t


def token_count(embedder, texts: list[str]) -> int:
    """Tokens the model reads for these passages (its prefix and special tokens included)."""
    tokenize = embedder._open_tokenizer()
    return sum(len(ids) for ids in tokenize([embedder.passage_prefix + t for t in texts]))


def compare_paths(texts: list[str], default, rounds: int) -> None:
    """The English model's int8 and fp32 graphs and torch path beside the default, on `texts`."""
    from knownote.index.embed import SentenceTransformerEmbedder
    from knownote.index.embed_onnx import packaged_onnx_embedder
    from knownote.settings import PACKAGED_INT8, PACKAGED_MODEL

    paths = {
        "default (multilingual int8)": default,
        "English int8 graph": get_embedder(PACKAGED_INT8),
        "English fp32 graph": packaged_onnx_embedder(PACKAGED_MODEL),
        "English torch path": SentenceTransformerEmbedder(PACKAGED_MODEL),
    }
    for embedder in paths.values():
        embedder.embed_passages(["warm up the model"] * 64)
    times: dict[str, list[float]] = {name: [] for name in paths}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, embedder in paths.items():
            t = time.perf_counter()
            vectors[name] = embedder.embed_passages(texts)
            times[name].append(time.perf_counter() - t)
    torch_s = statistics.median(times["English torch path"])
    for name, seconds in times.items():
        s = statistics.median(seconds)
        print(f"  {name + ':':<29} {len(texts) / s:6.1f} passages/s ({torch_s / s:.2f}x torch)")
    for name in ("English int8 graph", "English fp32 graph"):
        cosines = (vectors[name] * vectors["English torch path"]).sum(axis=1)
        print(f"  cosine {name} vs torch: mean {cosines.mean():.6f}, min {cosines.min():.6f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", nargs="+", default=["en", "de", "zh", "papers"], choices=books())
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="also a `knownote import` process")
    parser.add_argument("--paths", action="store_true", help="also the English model's paths")
    args = parser.parse_args()
    default = get_embedder(MULTILINGUAL)
    default.embed_passages(["warm up the model"] * 16)
    print(f"code: {ROOT}; load average {os.getloadavg()[0]:.1f}")
    all_books = books()
    rows = []
    for code in args.books:
        files = all_books[code]
        name = files[0][0] if len(files) == 1 else f"{len(files)} files"
        texts = import_texts(files)
        tokens = token_count(default, texts)
        times: dict[str, list[float]] = {"embed": [], "import": [], "cold": []}
        for round_no in range(1, args.rounds + 1):
            t = time.perf_counter()
            default.embed_passages(texts)
            times["embed"].append(time.perf_counter() - t)
            if args.cold:  # beside the embedding alone: the machine's pace drifts by the minute
                times["cold"].append(cold_import(files))
            seconds, passages = whole_import(files, default)
            times["import"].append(seconds)
            print(
                f"{code} round {round_no}: "
                + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if v)
                + f"; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        assert passages == len(texts), (passages, len(texts))
        median = {k: statistics.median(v) for k, v in times.items() if v}
        rows.append((code, name, len(texts), tokens, median))
        if args.cold:
            ratios = sorted(c / e for c, e in zip(times["cold"], times["embed"], strict=True))
            print(
                f"{code}: cold / embedding, round by round: "
                + ", ".join(f"{r:.3f}" for r in ratios)
                + f"; median {statistics.median(ratios):.3f}",
                flush=True,
            )
        if args.paths and code == args.books[0]:
            compare_paths(texts, default, args.rounds)
    print()
    print(
        "| book | passages | tokens | embedding alone | passages/s | tokens/s | whole import "
        "| import / embedding | cold import | cold / embedding |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for code, name, n, tokens, median in rows:
        embed = median["embed"]
        cold = median.get("cold")
        cold_cells = f"{cold:.2f} s | {cold / embed:.3f}" if cold else "– | –"
        print(
            f"| {code} ({name}) | {n:,} | {tokens:,} | {embed:.2f} s | {n / embed:.1f} "
            f"| {tokens / embed:,.0f} | {median['import']:.2f} s | {median['import'] / embed:.3f} "
            f"| {cold_cells} |"
        )
    print(f"peak memory (max RSS) {peak_rss_mb():.0f} MB; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
