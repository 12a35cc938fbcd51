"""How today's search of each upgraded past database compares with what its version found.

    .venv/bin/python benchmarks/upgrade_search.py

For each database in tests/store/past_versions (scripts/build_past_databases.py), opened and
upgraded by today's code in a temp folder, and each search mode: of the three questions, how
many give today the same top 5 in the same order, the same set, the same first passage as the
old version recorded; for meaning-only search, the largest difference of a score. The test
(tests/store/test_upgrades.py) asserts the set, the first and, by meaning, the order and scores.
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from knownote.search.retrieve import search
from knownote.store.db import Store

PAST = Path(__file__).resolve().parents[1] / "tests" / "store" / "past_versions"


def main() -> int:
    manifest = json.loads((PAST / "manifest.json").read_text())
    embedder = get_embedder("all-MiniLM-L6-v2")
    for level in manifest["levels"]:
        record = json.loads((PAST / level["record"]).read_text())
        if "search" not in record:
            print(f"{level['level']:2d} {level['commit']}: no search in that version")
            continue
        with tempfile.TemporaryDirectory() as folder:
            with tarfile.open(PAST / level["database"]) as tar:
                tar.extractall(folder, filter="data")
            store = Store.open(Path(folder) / manifest["database"])
            notebook = store.notebook_by_name(manifest["notebook"]).id
            said = []
            for mode, found in record["search"].items():
                order = same = first = 0
                worst = 0.0
                for question, hits in zip(record["questions"], found, strict=True):
                    today = search(store, embedder, notebook, question, k=5, mode=mode)
                    old = [(h["document_id"], h["start"], h["end"]) for h in hits]
                    new = [(h.document_id, h.start, h.end) for h in today]
                    order += old == new
                    same += set(old) == set(new)
                    first += old[:1] == new[:1]
                    if mode == "vector" and old == new:
                        gaps = [abs(h["score"] - t.score) for h, t in zip(hits, today, strict=True)]
                        worst = max(worst, *gaps)
                n = len(found)
                gap = f", largest score difference {worst:.2g}" if mode == "vector" else ""
                said.append(f"{mode}: order {order}/{n}, set {same}/{n}, first {first}/{n}{gap}")
            store.close()
        print(f"{level['level']:2d} {level['commit']}: " + "; ".join(said))
    return 0


if __name__ == "__main__":
    sys.exit(main())
