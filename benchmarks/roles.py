"""Roles of the corpus's PDFs: how many regions of each role the rules, PyMuPDF's layout model and
the chosen mix find (knownote/read/pdf_roles.py), and what the model costs an import.

    .venv/bin/python benchmarks/roles.py [--speed] [--only NAME ...]

Per PDF and role: regions (runs of one role, settled as `roles.normalise` settles them) found by
the rules, by the model and chosen (with the headings and reference sections added). The model
reads every page of a PDF of at most 60 pages here (an import: see pdf_roles.ALL_PAGES), the pages
an import would give it on longer ones. Pages to be read by OCR are left unread (OCR off).
`--speed` times extracting the two books with the model off, as an import chooses, and says on
how many pages the model ran.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.errors import KnowNoteError
from knownote.read.extracted import OcrLimits
from knownote.read.pdf import extract_pdf, pdf_lines
from knownote.read.pdf_roles import MODEL_SWITCH, find_roles, settle
from knownote.read.roles import ROLES, RoleRange, normalise, reference_sections

PDFS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "docs" / "pdf"
BOOKS = ("book_mupdf_explored_285p.pdf", "book_free_culture_lessig_352p.pdf")
NO_OCR = OcrLimits(max_pages=0)
MODEL_ON_ALL = 60  # pages


def extract(path: Path, model: str | None = None):
    if model is None:
        os.environ.pop(MODEL_SWITCH, None)
    else:
        os.environ[MODEL_SWITCH] = model
    return extract_pdf(path.read_bytes(), path.name, None, 10**8, 10**4, NO_OCR, None)


def counts(ranges, length: int) -> Counter[str]:
    return Counter(r.role for r in normalise(ranges, length))


def regions(path: Path) -> None:
    extracted = extract(path, "0")
    text, pages = extracted.text, extracted.pages
    texts = [text[p.start : p.end] for p in pages]
    ocr = {p.number - 1 for p in extracted.ocr_pages}
    with pymupdf.open(path) as doc:
        lines = pdf_lines(doc, texts, ocr)
        model = "all" if len(pages) <= MODEL_ON_ALL else ""  # "": as an import chooses
        started = time.perf_counter()
        found = find_roles(doc, pages, texts, lines, ocr, model)
        seconds = time.perf_counter() - started
    references = reference_sections(text, extracted.headings)
    heads = [RoleRange(h.start, h.end, "heading") for h in extracted.headings]
    rules = counts([*found.rules, *heads, *references], len(text))
    by_model = counts(found.model, len(text))
    chosen = Counter(r.role for r in settle(found.chosen, extracted.headings, text))
    print(
        f"\n{path.name}: {len(pages)} pages, model on {len(found.model_pages)} "
        f"({seconds:.1f} s with the rules)"
    )
    print(f"  {'role':<13} {'rules':>6} {'model':>6} {'chosen':>6}")
    for role in ROLES[1:]:
        if rules[role] or by_model[role] or chosen[role]:
            print(f"  {role:<13} {rules[role]:>6} {by_model[role]:>6} {chosen[role]:>6}")


def speed() -> None:
    for name in BOOKS:
        path = PDFS / name
        times = {}
        for label, model in (("model off", "0"), ("as imported", None)):
            started = time.perf_counter()
            extracted = extract(path, model)
            times[label] = time.perf_counter() - started
        with pymupdf.open(path) as doc:
            texts = [extracted.text[p.start : p.end] for p in extracted.pages]
            lines = pdf_lines(doc, texts, set())
            found = find_roles(doc, extracted.pages, texts, lines, set(), "")
        print(
            f"{name}: extract {times['model off']:.1f} s with the model off, "
            f"{times['as imported']:.1f} s as imported (model on {len(found.model_pages)} of "
            f"{len(extracted.pages)} pages: {list(p + 1 for p in found.model_pages)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", action="store_true", help="time the two books")
    parser.add_argument("--only", nargs="+", help="these PDFs (file names) only")
    args = parser.parse_args()
    if args.speed:
        speed()
        return
    for path in sorted(PDFS.glob("*.pdf")):
        if args.only and path.name not in args.only:
            continue
        try:
            regions(path)
        except KnowNoteError as error:
            print(f"\n{path.name}: not read ({type(error).__name__})")


if __name__ == "__main__":
    main()
