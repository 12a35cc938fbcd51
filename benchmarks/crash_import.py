"""SIGKILL the real `knownote import` of a long PDF at random moments; check the database each time.

    .venv/bin/python benchmarks/crash_import.py [PDF] [--kills 20] [--seed 7]

One database is used throughout. It first gets a notebook of small documents and a saved chat
(their row counts must never change), then one uncut import of the PDF times its stages (and is
deleted again). Each trial starts the import in a fresh process and kills it: two kills in three
at a uniformly random moment of the whole import (start-up, model load, extract, embed, store),
every third at a random moment between its "store" report and its result line (the kept file,
the one transaction and its commit). A trial whose import finishes before its moment is shown
and not counted. After every kill the database is opened and checked whole: every document
complete (passages, vectors, codes, keyword rows against a recount, pages, offsets, overlap), no
orphan rows, one kept file per document. A document that did commit is checked and deleted.
Last, the same PDF is imported again to the end. Prints one line per kill and the totals.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.settings import Settings
from knownote.store.db import Store
from tests.invariants import assert_store_consistent
from tests.killing import ROOT, counts, delete_imported, random_kill, run_trial, start_import

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
BOOK = CORPUS / "pdf/book_free_culture_lessig_352p.pdf"
KEEP = [CORPUS / "web_text/md_wikipedia_gravity_hill.md", CORPUS / "office/docx_en_rag_intro.docx"]


def cli(db: Path, *args: str) -> None:
    env = {**os.environ, "OLLAMA_HOST": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "knownote.cli", "--db", str(db), *args],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip


def full_import(db: Path, pdf: Path) -> dict[str, float]:
    """Import to the end; return when each stage was first reported (seconds after start)."""
    run = start_import(db, "Book", [pdf])
    run.process.wait()
    run.wait_for("exit", 10)
    run.wait_for("saved", 10)
    if run.process.returncode != 0:
        raise SystemExit(f"the uncut import failed: {''.join(run.out)}")
    first: dict[str, float] = {}
    for t, stage in run.stages:
        first.setdefault(stage, t)
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pdf", nargs="?", type=Path, default=BOOK)
    parser.add_argument("--kills", type=int, default=20, help="imports to kill (at least 20)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    settings = Settings()
    size, overlap = settings.passage_size, settings.passage_overlap
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "knownote.duckdb"
        cli(db, "import", "Keep", *map(str, KEEP))
        cli(db, "ask", "Keep", "What is a gravity hill?")
        stages = full_import(db, args.pdf)
        total = stages["exit"]
        store_seconds = stages["saved"] - stages["store"]  # from its report to the commit
        passages = delete_imported(db, "Book", args.pdf.name)
        baseline = counts(db)
        print(
            f"{args.pdf.name}: {passages} passages; uncut import {total:.1f}s, stages at "
            + ", ".join(f"{s} {t:.1f}s" for s, t in stages.items())
        )
        print(f"kept data: {baseline['documents']} documents, {baseline['passages']} passages, "
              f"{baseline['messages']} messages")  # fmt: skip
        rng = random.Random(args.seed)
        killed = finished = 0
        where: Counter[str] = Counter()
        while killed < args.kills:
            kill = random_kill(rng, killed, total, store_seconds)
            trial = run_trial(
                db, "Book", args.pdf, kill, size=size, overlap=overlap, timeout=total * 3
            )
            kept = delete_imported(db, "Book", args.pdf.name)
            assert kept in (0, passages), f"a committed import with {kept} of {passages} passages"
            assert counts(db) == baseline, "the kept data changed"
            if trial.killed_at is None:  # the import was quicker than the draw: draw again
                finished += 1
                print(f"        kill {kill.describe():<22} came after the import finished "
                      f"(not counted); {trial.documents} documents whole", flush=True)  # fmt: skip
                continue
            killed += 1
            where[trial.where] += 1
            print(
                f"kill {killed:>2}: {kill.describe():<22} landed at {trial.killed_at:6.2f}s in "
                f"{trial.where:<21} orphan files left {trial.orphan_files}, "
                f"{trial.documents} documents whole",
                flush=True,
            )
        stages = full_import(db, args.pdf)
        store = Store.open(db)
        try:
            documents = assert_store_consistent(store, size, overlap)
            book = store.notebook_by_name("Book")
            again = sum(d.passages for d in store.documents(book.id))
        finally:
            store.close()
        assert again == passages
    print(f"kills {killed}, database whole after {killed}; imports that finished before their "
          f"kill {finished}; where the kills landed: "
          + ", ".join(f"{w} {n}" for w, n in sorted(where.items())))  # fmt: skip
    print(f"re-import after the last kill: {again} passages ({documents} documents whole); "
          f"{time.monotonic() - started:.0f}s in all")  # fmt: skip


if __name__ == "__main__":
    main()
