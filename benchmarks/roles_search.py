"""Does hybrid search find a paper's text before the parts around it, and still find references?

A notebook of the corpus's papers (and its web page and Word file with reference lists) is
imported once; two question sets are made from it:
- section questions: each heading of three words or more outside the reference sections asks for
  its section ("Dense Passage Retriever"): a hit is a passage of that section after the one that
  holds the heading, and the share of
  the top 5 that is minor parts (references, front matter, page furniture) is counted;
- reference questions: a cited title from a reference list ("Reading Wikipedia to answer
  open-domain questions"): a hit is the passage holding the entry.
Recall@5 and MRR@10 are printed for each weight of `Tuning.minor_weight` (0 is the search before
roles) and each share of `Tuning.minor_named` (above 1: every minor part is weighed down, as
before it), on two halves of the questions: one to choose on, one to report. A question's half
is the parity of its text's CRC-32, so that a question's half stays when rules of roles add or
drop others (by its place in the list, one question less moved every later one to the other).

    .venv/bin/python benchmarks/roles_search.py [--keep DIR] [--weights 0 0.5 1 2 4] \
        [--named 0.8 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import re
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from knownote.index.embedders import get_embedder  # noqa: E402
from knownote.pipeline.ingest import get_or_create_notebook, import_file  # noqa: E402
from knownote.read.roles import MINOR, Roles  # noqa: E402
from knownote.read.sections import heading_text  # noqa: E402
from knownote.search.minor import NAMED_SHARE  # noqa: E402
from knownote.search.retrieve import Scope, rank, tuned_for  # noqa: E402
from knownote.settings import Settings  # noqa: E402
from knownote.store.db import Store  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "docs"
FILES = [
    *sorted((CORPUS / "pdf").glob("paper_*.pdf")),
    CORPUS / "web_text" / "html_wikipedia_tardigrades.html",
    CORPUS / "office" / "docx_wikipedia_bangalore_with_nav_junk.docx",
]
NUMBERING = re.compile(r"^[\dIVXA-H]+(\.\d+)*\.?\s+")


def notebook(keep: Path) -> tuple[Store, int]:
    keep.mkdir(parents=True, exist_ok=True)
    store = Store.open(keep / "roles.duckdb")
    settings = Settings()
    book = get_or_create_notebook(store, "papers", settings)
    for path in FILES:
        result = import_file(store, book, path.name, path.read_bytes(), settings=settings)
        print(f"{path.name}: {result.status} {result.error or ''}", file=sys.stderr)
    return store, book.id


def questions(store: Store, notebook_id: int) -> list[tuple[str, str, set[int]]]:
    """(kind, question, ids of the passages that answer it)."""
    found = []
    for document in store.documents(notebook_id):
        text = store.document_text(document.id)
        roles = Roles(store.roles(document.id))
        passages = store.passages(document.id)
        headings = sorted(store.headings(document.id), key=lambda h: h.start)
        for i, h in enumerate(headings):
            words = NUMBERING.sub("", heading_text(text, h))
            if len(words.split()) < 3 or roles.share(h.end, h.end + 1, MINOR):
                continue
            end = next((g.start for g in headings[i + 1 :] if g.level <= h.level), len(text))
            # the passages after the heading's own: its words do not find them by themselves
            gold = {p.id for p in passages if h.end <= p.start and (p.start + p.end) // 2 < end}
            if gold:
                found.append(("section", words, gold))
        for r in roles.ranges:
            if r.role != "reference":
                continue
            titles = 0
            for piece in re.finditer(r"[^.\n]+(?:\n[^.\n]+)*", text[r.start : r.end]):
                title = " ".join(piece.group().split())
                n = len(title.split())
                if 5 <= n <= 16 and not re.search(r"\d|,.*,|http|&", title) and titles < 8:
                    a, b = r.start + piece.start(), r.start + piece.end()
                    gold = {p.id for p in passages if p.start < b and a < p.end}
                    found.append(("reference", title, gold))
                    titles += 1
    return found


def measure(store, embedder, notebook_id, asked, weight, named) -> dict[str, dict[str, float]]:
    tuning = dataclasses.replace(tuned_for(embedder.name), minor_weight=weight, minor_named=named)
    minor = {}
    for document in store.documents(notebook_id):
        roles = Roles(store.roles(document.id))
        for p in store.passages(document.id):
            minor[p.id] = roles.share(p.start, p.end, MINOR)
    out: dict[str, dict[str, list[float]]] = {}
    for kind, question, gold, vector in asked:
        ranked = [pid for pid, _ in rank(store, embedder, Scope(notebook_id, None), question, 10,
                                          "hybrid", vector=vector, tuning=tuning)]  # fmt: skip
        first = next((i for i, pid in enumerate(ranked) if pid in gold), None)
        figures = out.setdefault(kind, {"r@5": [], "mrr@10": [], "minor@5": []})
        figures["r@5"].append(float(first is not None and first < 5))
        figures["mrr@10"].append(0.0 if first is None else 1.0 / (first + 1))
        figures["minor@5"].append(sum(minor.get(pid, 0.0) for pid in ranked[:5]) / 5)
    return {kind: {m: sum(v) / len(v) for m, v in f.items()} for kind, f in out.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the notebook here (reused if there)")
    parser.add_argument("--weights", type=float, nargs="+", default=[0, 0.5, 1, 2, 4])
    parser.add_argument("--named", type=float, nargs="+", default=[NAMED_SHARE])
    args = parser.parse_args()
    keep = args.keep or Path(tempfile.mkdtemp())
    if (keep / "roles.duckdb").exists():
        store = Store.open(keep / "roles.duckdb")
        notebook_id = store.notebooks()[0].id
    else:
        store, notebook_id = notebook(keep)
    embedder = get_embedder(store.notebook(notebook_id).embedding_model)
    found = questions(store, notebook_id)
    vectors = [embedder.embed_query(q) for _, q, _ in found]
    asked = [(*f, v) for f, v in zip(found, vectors, strict=True)]
    counts = {kind: sum(1 for f in found if f[0] == kind) for kind in ("section", "reference")}
    choose = [a for a in asked if zlib.crc32(a[1].encode()) % 2]
    report = [a for a in asked if not zlib.crc32(a[1].encode()) % 2]
    print(f"questions: {counts}, {len(choose)} to choose on, {len(report)} to report")
    print(f"{'weight':>6} {'named':>5} {'half':>6} {'kind':>10} {'r@5':>6} {'mrr@10':>7} "
          f"{'minor@5':>8}")  # fmt: skip
    for weight, named in itertools.product(args.weights, args.named):
        started = time.perf_counter()
        for half, part in (("choose", choose), ("report", report)):
            measured = measure(store, embedder, notebook_id, part, weight, named)
            for kind, f in sorted(measured.items()):
                print(f"{weight:>6} {named:>5} {half:>6} {kind:>10} {f['r@5']:>6.3f} "
                      f"{f['mrr@10']:>7.3f} {f['minor@5']:>8.3f}")  # fmt: skip
        print(f"       ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
