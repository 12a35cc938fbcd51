"""How well a PDF's headings are found from its type alone, against its outline, in one run.

    .venv/bin/python benchmarks/headings.py [PDF ...]

For each PDF (default: every PDF in ../shared/corpus/docs/pdf whose outline is usable, that is
at least half of its entries are found on the page they point to), the outline's entries located
in the canonical text are the truth; the headings found with the outline switched off (font size
and weight, numbering) are the guess. A guess is right when its range overlaps a true heading's.
Prints per PDF and overall: precision (right guesses / guesses), recall (true headings overlapped
/ true headings), and the time the headings add to reading the text (outline and type both).

Then the whole import of one long PDF (--import, default the free-culture book; --import none
skips it) into a fresh notebook with the default model, and how much of it the headings took
(reading every page's lines again and finding the headings: an upper bound, since the import
reads the lines from the text page it already has). Target: at most 5% of the import.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf

from knownote.read.canonical import join_pages
from knownote.read.pdf import pdf_headings_of, pdf_lines, pdf_page_text
from knownote.read.pdf_headings import outline_headings
from knownote.read.sections import Heading

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
BOOK = PDF_DIR / "book_free_culture_lessig_352p.pdf"


def overlaps(a: Heading, b: Heading) -> bool:
    return a.start < b.end and b.start < a.end


def measure(path: Path) -> tuple[int, int, int, int, float, float] | None:
    """(guesses, right guesses, true headings, found true headings, text s, headings s)."""
    try:
        doc = pymupdf.open(path)
    except (pymupdf.FileDataError, pymupdf.EmptyFileError):
        return None  # the corpus's broken files
    with doc:
        if doc.needs_pass or doc.page_count == 0:
            return None
        began = time.perf_counter()
        texts = [pdf_page_text(page) for page in doc]
        text_seconds = time.perf_counter() - began
        if outline_headings(doc, texts) is None:
            return None
        _, pages = join_pages(texts)
        began = time.perf_counter()
        lines = pdf_lines(doc, texts, set())
        truth = pdf_headings_of(doc, pages, texts, lines)
        heading_seconds = time.perf_counter() - began
        guess = pdf_headings_of(doc, pages, texts, lines, outline=False)
    right = sum(any(overlaps(g, t) for t in truth) for g in guess)
    found = sum(any(overlaps(t, g) for g in guess) for t in truth)
    return len(guess), right, len(truth), found, text_seconds, heading_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--import", dest="imported", default=str(BOOK), help="a long PDF, or none")
    args = parser.parse_args()
    paths = args.pdfs or sorted(PDF_DIR.glob("*.pdf"))
    if not paths:
        sys.exit(f"No PDFs: {PDF_DIR} is missing. Pass PDFs with an outline.")
    totals = [0, 0, 0, 0, 0.0, 0.0]
    print(f"{'pdf':45} {'guesses':>7} {'true':>5} {'precision':>9} {'recall':>6}")
    for path in paths:
        result = measure(path)
        if result is None:
            continue
        guesses, right, truth, found, *_ = result
        totals = [a + b for a, b in zip(totals, result, strict=True)]
        print(
            f"{path.name[:45]:45} {guesses:7} {truth:5} {right / max(guesses, 1):9.3f} "
            f"{found / max(truth, 1):6.3f}"
        )
    guesses, right, truth, found, text_s, heading_s = totals
    print(
        f"{'all':45} {guesses:7} {truth:5} {right / max(guesses, 1):9.3f} "
        f"{found / max(truth, 1):6.3f}"
    )
    print(f"headings time: {heading_s:.2f} s over {text_s:.2f} s of text extraction")
    if args.imported != "none":
        import_time(Path(args.imported))


def import_time(path: Path) -> None:
    from knownote.index.embedders import get_embedder
    from knownote.pipeline.ingest import import_file
    from knownote.settings import Settings
    from knownote.store.db import Store

    data = path.read_bytes()
    embedder = get_embedder()
    embedder.embed_passages(["warm up"])
    with tempfile.TemporaryDirectory() as home:
        settings = Settings().with_(home=Path(home))
        store = Store.open(settings.db_path)
        notebook = store.create_notebook("bench", embedder.name, embedder.dim)
        began = time.perf_counter()
        result = import_file(store, notebook, path.name, data, settings=settings, embedder=embedder)
        whole = time.perf_counter() - began
        headings = len(store.headings(result.document_id))
        store.close()
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        texts = [pdf_page_text(page) for page in doc]
        _, pages = join_pages(texts)
        began = time.perf_counter()
        pdf_headings_of(doc, pages, texts, pdf_lines(doc, texts, set()))
        part = time.perf_counter() - began
    print(
        f"import of {path.name}: {whole:.1f} s ({result.passages} passages, {headings} headings), "
        f"headings {part:.2f} s of it: +{100 * part / (whole - part):.1f}% over an import "
        "without them"
    )


if __name__ == "__main__":
    main()
