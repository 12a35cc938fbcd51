"""The timeline's dated sentences on the corpus's Wikipedia pages and the Free Culture book.

    .venv/bin/python benchmarks/timeline.py [--sample N] [--dateparser FOLDER] [--limit N]

Each document is read as an import reads it (its text and roles), its body-text sentences are
split, and `knownote.study.reports.dated_sentences` finds the dated ones. Prints, per document:
body sentences, dated sentences, the time the dates took (the reading apart), and checks that
every quote is an exact slice of the text. `--sample N` prints N entries drawn at random (seed
38) across the documents, to be checked by eye: the date found, what it was read from, and the
sentence.

`--dateparser FOLDER` runs dateparser's `search_dates` (`pip install --target FOLDER
dateparser`) over the same sentences (the first `--limit` of each document, as it is slow),
and prints its dated sentences, its time per sentence and a sample of what it calls a date that
we do not, to judge its precision the same way.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.sentences import sentences
from knownote.read.extract import extract
from knownote.read.roles import PROSE, Roles, document_roles
from knownote.study.reports import dated_sentences, notes_sections

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
DOCUMENTS = [
    "web_text/html_wikipedia_tardigrades.html",
    "web_text/txt_actually_html_wikipedia_bates.txt",
    "web_text/md_wikipedia_gravity_hill.md",
    "web_text/txt_wikipedia_norwich_city_mojibake.txt",
    "pdf/book_free_culture_lessig_352p.pdf",
]


def read(relative: str) -> tuple[str, list]:
    """The document's text and its body-text sentences, as an import would read them."""
    path = CORPUS / relative
    extracted = extract(path.read_bytes(), path.name)
    roles = Roles(document_roles(extracted.text, extracted.headings, extracted.roles))
    notes = notes_sections(extracted.text, extracted.headings)
    prose = [
        s
        for s in sentences(extracted.text, roles=roles)
        if s.role in PROSE and not any(a <= s.start < b for a, b in notes)
    ]
    return extracted.text, prose


def shown(text: str, limit: int = 220) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--dateparser", type=Path)
    parser.add_argument("--limit", type=int, default=400)
    args = parser.parse_args()
    entries = []
    read_docs = {}
    print(f"{'document':52} {'body sents':>10} {'dated':>6} {'ms':>8}  exact")
    total_found = total_ms = 0.0
    for relative in DOCUMENTS:
        if not (CORPUS / relative).exists():
            print(f"{relative}: absent, skipped")
            continue
        text, prose = read(relative)
        read_docs[relative] = (text, prose)
        began = time.perf_counter()
        found = dated_sentences(text, prose)
        ms = (time.perf_counter() - began) * 1000
        exact = all(text[s.start : s.end] == text[s.start : s.end].strip() for s, _ in found)
        exact = exact and all(s.start <= d.start < d.end <= s.end for s, d in found)
        print(f"{relative:52} {len(prose):>10} {len(found):>6} {ms:>8.0f}  {exact}")
        total_found += len(found)
        total_ms += ms
        entries += [(relative, text, s, d) for s, d in found]
    print(f"{'all':52} {'':>10} {int(total_found):>6} {total_ms:>8.0f}")
    if args.sample:
        print(f"\n{args.sample} entries drawn at random (seed 38):")
        for i, (relative, text, s, d) in enumerate(
            sorted(random.Random(38).sample(entries, args.sample), key=lambda e: e[0]), 1
        ):
            name = Path(relative).stem[:18]
            quote = shown(text[s.start : s.end])
            print(f"{i:>2}. {d.date:>10} «{text[d.start : d.end]}» [{name}] {quote}")
    if args.dateparser:
        compare(args.dateparser, read_docs, args.limit)


def compare(folder: Path, read_docs: dict, limit: int) -> None:
    sys.path.insert(0, str(folder))
    from dateparser.search import search_dates

    print(f"\ndateparser.search.search_dates on the first {limit} body sentences of each:")
    theirs_only = []
    for relative, (text, prose) in read_docs.items():
        some = prose[:limit]
        ours = {s.start for s, _ in dated_sentences(text, some)}
        search_dates("warm up", languages=["en"])
        began = time.perf_counter()
        found = {}
        for s in some:
            hits = search_dates(text[s.start : s.end], languages=["en"])
            if hits:
                found[s.start] = (s, hits)
        seconds = time.perf_counter() - began
        both = len(ours & found.keys())
        print(
            f"{relative:52} dated: ours {len(ours):>4}, dateparser {len(found):>4}, both "
            f"{both:>4}; {seconds / max(len(some), 1) * 1000:.1f} ms a sentence"
        )
        theirs_only += [(relative, text, *found[k]) for k in found.keys() - ours]
    print("\n20 sentences dateparser calls dated and we do not (what it read as a date):")
    for relative, text, s, hits in random.Random(38).sample(theirs_only, min(20, len(theirs_only))):
        said = "; ".join(f"«{h[0]}»→{h[1]:%Y-%m-%d}" for h in hits[:3])
        print(f"- [{Path(relative).stem[:18]}] {said} | {shown(text[s.start : s.end], 150)}")


if __name__ == "__main__":
    main()
