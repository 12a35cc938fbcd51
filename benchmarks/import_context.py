"""Import time with titles, sections and stemming against the way before, in one run.

    .venv/bin/python benchmarks/import_context.py [FILE] [--rounds N]

Imports a long document (the free-culture book by default) into fresh databases, alternating the
way before (the passage alone embedded, plain words) and the way now (title and section path
before each passage, stemmed terms with a heading field), each round back to back. Prints the
median of each and their ratio (target: at most 1.05), and the tokens the embedding model reads
per passage both ways.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.context import BEFORE, CURRENT, IndexRecipe
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store

BOOK = (
    Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf/book_free_culture_lessig_352p.pdf"
)


def timed_import(data: bytes, name: str, recipe: IndexRecipe) -> tuple[float, int, str]:
    """(seconds, passages, how the terms were made) of one import into a fresh database."""
    embedder = get_embedder()
    with tempfile.TemporaryDirectory() as home:
        settings = Settings().with_(home=Path(home))
        store = Store.open(settings.db_path)
        try:
            notebook = store.create_notebook("bench", embedder.name, embedder.dim)
            t = time.perf_counter()
            result = import_file(
                store, notebook, name, data, settings=settings, embedder=embedder, recipe=recipe
            )
            seconds = time.perf_counter() - t
            assert result.status == "imported", result.error
            terms_as = store.document(result.document_id).terms_as
        finally:
            store.close()
    return seconds, result.passages, terms_as


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=BOOK)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = args.file.read_bytes()
    get_embedder().embed_passages(["warm up the model"] * 64)
    times: dict[str, list[float]] = {"before": [], "now": []}
    for round_no in range(1, args.rounds + 1):
        for name, recipe in (("before", BEFORE), ("now", CURRENT)):
            seconds, passages, terms_as = timed_import(data, args.file.name, recipe)
            times[name].append(seconds)
            print(f"round {round_no}: {name:<6} {seconds:7.2f} s  ({passages:,} passages, "
                  f"terms {terms_as})")  # fmt: skip
    before, now = statistics.median(times["before"]), statistics.median(times["now"])
    print(f"{args.file.name}: median import before {before:.2f} s, now {now:.2f} s; "
          f"now / before {now / before:.3f} (target <= 1.05); "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
