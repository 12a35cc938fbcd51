"""The CPU time of reading the PDFs of `benchmarks/import.py`, as the reader server's child reads
them in a cold import (`extract` with layouts left for later), in this tree and in another.

    .venv/bin/python benchmarks/reading_cpu.py [--against DIR] [--books papers en] [--rounds 5]

Each tree runs in a process of its own (this file, with that tree first on the path), the two
alternated round by round, so a slower minute counts in both. Prints per book the median CPU
seconds of the process (its OCR threads included; Tesseract runs in processes of its own, not
counted) and this tree's over the other's. Reading shares the machine's two cores with the
embedding in a cold import: what it saves there is what the embedding gets back.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "docs" / "pdf"
BOOKS = {
    "papers": sorted(CORPUS.glob("paper_*.pdf")),
    "en": [CORPUS / "book_free_culture_lessig_352p.pdf"],
}


def read_once(book: str) -> float:
    """CPU seconds of reading the book's files once, in this process (warmed up first)."""
    from knownote.read.extract import extract

    files = [(p.name, p.read_bytes()) for p in BOOKS[book]]
    extract(files[0][1], files[0][0], layout=False)
    start = time.process_time()
    for name, data in files:
        extract(data, name, layout=False)
    return time.process_time() - start


def in_tree(tree: Path, book: str) -> float:
    """`read_once` in a new process that imports `tree`'s knownote."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--one", book]
    done = subprocess.run(command, env=env, cwd=tree, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="the other tree (a `git worktree`)")
    parser.add_argument("--books", nargs="+", default=list(BOOKS), choices=BOOKS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--one", choices=BOOKS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(f"{read_once(args.one):.4f}")
        return
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS}")
    trees = {"this tree": ROOT, **({"other": args.against.resolve()} if args.against else {})}
    ratio_column = " | this / other" if args.against else ""
    print("| book | " + " | ".join(f"{name}: CPU s" for name in trees) + ratio_column + " |")
    print("|---|" + "---|" * (len(trees) + bool(args.against)))
    for book in args.books:
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                seconds[name].append(in_tree(tree, book))
        medians = {name: statistics.median(s) for name, s in seconds.items()}
        cells = [f"{medians[n]:.3f} ({min(s):.3f}-{max(s):.3f})" for n, s in seconds.items()]
        if args.against:
            cells.append(f"{medians['this tree'] / medians['other']:.3f}")
        print(f"| {book} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
