"""The share of Overview quotes and cloze cards that are not body text, roles ignored and used.

    nice .venv/bin/python benchmarks/body_share.py [--sample 12]

Imports the corpus's papers (docs/pdf/paper_*.pdf), web pages (docs/web_text/*.html, *.md) and
office files (docs/office/*.docx) into a temporary notebook, each read with its roles. Then for
each source, once with its roles ignored (as before issue 36) and once with them: the Overview's
central sentences (3) and the cloze cards (up to 6). Each quote's or card's range is given the role
most of its characters have by the stored roles (a page header or footer it runs over left out);
prose is body text and lists. Prints the share that is not prose per kind of file, checks that
every range is an exact slice of the stored text, and prints a sample of the sentences with their
roles, to read by eye.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.overview import central_sentences
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.read.roles import PROSE, Roles
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.cloze import cloze_cards

DOCS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "docs"
KINDS = {
    "papers": sorted((DOCS / "pdf").glob("paper_*.pdf")),
    "web pages": sorted((DOCS / "web_text").glob("*.html"))
    + sorted((DOCS / "web_text").glob("*.md")),
    "office files": sorted((DOCS / "office").glob("*.docx")),
}


def role_of(roles: Roles, start: int, end: int, skipped: tuple[tuple[int, int], ...]) -> str:
    """The role most of `[start, end)`'s characters have, `skipped` ranges left out."""
    held: Counter[str] = Counter()
    for p in roles.pieces(start, end):
        if not any(a <= p.start and p.end <= b for a, b in skipped):
            held[p.role] += p.end - p.start
    return held.most_common(1)[0][0] if held else "body"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=12, help="sentences printed per run")
    args = parser.parse_args()
    if not DOCS.is_dir():
        sys.exit(f"needs the shared corpus ({DOCS} is absent)")
    embedder = get_embedder()
    folder = Path(tempfile.mkdtemp(prefix="knownote-body-"))
    settings = Settings().with_(home=folder)
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("body share", embedder.name, embedder.dim)
    sources: dict[str, list[int]] = {}
    for kind, paths in KINDS.items():
        for path in paths:
            result = import_file(
                store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
            )
            if result.status == "imported":
                sources.setdefault(kind, []).append(result.document_id)
            else:
                print(f"  {path.name}: {result.status} {result.error or ''}")
    none = Roles(())
    rows = {}
    samples: dict[str, list[tuple[str, str, str]]] = {"before": [], "after": []}
    wrong = 0
    for kind, ids in sources.items():
        counts = {"before": Counter(), "after": Counter()}
        for document_id in ids:
            text = store.document_text(document_id)
            roles = Roles(store.roles(document_id))
            title = store.document(document_id).title[:28]
            for run, given in (("before", none), ("after", None)):
                quotes = central_sentences(store, embedder, document_id, roles=given)
                cards = cloze_cards(store, embedder, document_id, roles=given)
                made = [("quote", q.start, q.end, q.skipped, q.shown) for q in quotes]
                made += [("card", c.start, c.end, (), c.back) for c in cards]
                wrong += sum(text[q.start : q.end] != q.text for q in quotes)
                wrong += sum(text[c.answer_start : c.answer_end] != c.answer for c in cards)
                for what, start, end, skipped, shown in made:
                    role = role_of(roles, start, end, skipped)
                    counts[run][what, role in PROSE] += 1
                    samples[run].append((title, role, f"{what}: {shown[:110]}"))
        rows[kind] = (counts, len(ids), sum(len(store.roles(i)) for i in ids))
    print(f"\n{'':14} {'sources':>7} {'roles':>6}   not body text: before  ->  after")
    totals = {"before": Counter(), "after": Counter()}
    for kind, (counts, n, ranges) in rows.items():
        line = f"{kind:14} {n:7d} {ranges:6d}  "
        for what in ("quote", "card"):
            shares = []
            for run in ("before", "after"):
                c = counts[run]
                totals[run].update(c)
                total = c[what, True] + c[what, False]
                shares.append(f"{c[what, False]}/{total} {c[what, False] / max(total, 1):5.1%}")
            line += f"  {what}s {shares[0]} -> {shares[1]}"
        print(line)
    for run in ("before", "after"):
        c = totals[run]
        bad, all_ = c["quote", False] + c["card", False], sum(c.values())
        print(f"all, {run}: {bad}/{all_} = {bad / max(all_, 1):.1%} not body text")
    print(f"ranges that are not exact slices: {wrong}")
    rng = random.Random(36)
    for run in ("before", "after"):
        print(f"\nsample, {run}:")
        for title, role, shown in rng.sample(samples[run], min(args.sample, len(samples[run]))):
            print(f"  [{role:>10}] {title:<28} {shown}")
    store.close()
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
