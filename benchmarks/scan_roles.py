"""Do pages read by OCR get the roles of their born-digital originals from the page image?

Pages of the corpus's born-digital PDFs are rendered and read by OCR as scans are (200 dpi, the
default engine); their roles are found twice: by today's rules for pages read by OCR (text alone:
repeated first and last lines, page numbers, captions, contents) and by PyMuPDF's layout model
over the page with its OCR lines written in as an invisible layer (knownote.read.scan_roles). The
reference is the born-digital page's roles (layout model on every page). Each OCR line is matched
to the born-digital line under its centre; per role, the lines the reference gives it, the lines
each way gives it, and those both agree on. Then the corpus's scans (no reference): regions found
per role, and the seconds the model took a page against the OCR's.

    .venv/bin/python benchmarks/scan_roles.py [--engine auto]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["KNOWNOTE_PDF_LAYOUT"] = "all"

from knownote.read.extracted import OcrLimits  # noqa: E402
from knownote.read.pdf import extract_pdf, join_pages, pdf_lines  # noqa: E402
from knownote.read.pdf_roles import FROM_MODEL, find_roles  # noqa: E402
from knownote.read.roles import BODY, Roles, normalise  # noqa: E402
from knownote.read.scan_roles import ocr_lines  # noqa: E402
from knownote.read.scans import ocr_pdf_page  # noqa: E402

PDF = ROOT.parent / "shared" / "corpus" / "docs" / "pdf"
BORN_DIGITAL = {
    "paper_dpr_2004.04906_2col.pdf": [0, 3, 8],
    "paper_molecular_explanations_preprint.pdf": [0, 1],
    "paper_xylayoutlm_2203.06947_2col.pdf": [0, 4],
    "paper_naacl06_shinyama_2col.pdf": [0, 3],
    "paper_tracemonkey_pldi09_2col.pdf": [0, 5],
    "gov_federal_register_3col.pdf": [0],
    "cjk_zh_textbook_credits.pdf": [0],
    "book_free_culture_lessig_352p.pdf": [30, 31],
}
SCANS = {"scan_book_page_image_only.pdf": [0], "cjk_zh_scanned_ocr_auditor_letter.pdf": [0, 1]}
SCORED = [*sorted(FROM_MODEL), BODY]


def subset(path: Path, pages: list[int]) -> bytes:
    with pymupdf.open(path) as doc:
        doc.select(pages)
        return doc.tobytes()


def read_by_ocr(doc: pymupdf.Document, limits: OcrLimits, name: str):
    texts, ocr_pages, seconds = [], [], 0.0
    for page in doc:
        started = time.perf_counter()
        text, ocr_page = ocr_pdf_page(page, limits, name)
        seconds += time.perf_counter() - started
        texts.append(text)
        ocr_pages.append(ocr_page)
    return texts, ocr_pages, seconds


def ways(doc, texts, ocr_pages):
    """(pages, today's roles, the roles with the model's, the seconds they took more) over the
    OCR text."""
    text, pages = join_pages(texts)
    n = len(texts)
    rules = find_roles(doc, pages, texts, [[]] * n, set(range(n)), "0")
    started = time.perf_counter()
    model = find_roles(
        doc, pages, texts, [[]] * n, set(range(n)), "all", ocr_pages=ocr_pages
    ).chosen
    took = time.perf_counter() - started
    return (
        pages,
        Roles(normalise(rules.chosen, len(text))),
        Roles(normalise(model, len(text))),
        took,
    )


def scored(role: str) -> str:
    return role if role in FROM_MODEL else BODY


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="auto")
    args = parser.parse_args()
    limits = OcrLimits(engine=args.engine)
    ref_n, found, agree = (
        Counter(),
        {w: Counter() for w in ("rules", "model")},
        {w: Counter() for w in ("rules", "model")},
    )
    right = Counter()
    lines_n = 0
    ocr_s = model_s = 0.0
    pages_n = 0
    for name, wanted in BORN_DIGITAL.items():
        data = subset(PDF / name, wanted)
        born = extract_pdf(data, name, None, 10**7, 1000, OcrLimits(max_pages=0), None)
        born_roles = Roles(born.roles)
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            born_texts = [born.text[p.start : p.end] for p in born.pages]
            born_lines = pdf_lines(doc, born_texts, set())
            texts, ocr_pages, seconds = read_by_ocr(doc, limits, name)
            pages, rules, model, took = ways(doc, texts, ocr_pages)
        ocr_s, model_s, pages_n = ocr_s + seconds, model_s + took, pages_n + len(texts)
        for index, (page, ocr_page) in enumerate(zip(pages, ocr_pages, strict=True)):
            for line in ocr_lines(texts[index], ocr_page):
                x = (line.box[0] + line.box[2]) / 2
                y = (line.box[1] + line.box[3]) / 2
                under = [
                    b
                    for b in born_lines[index]
                    if b.box[0] - 1 <= x <= b.box[2] + 1 and b.box[1] - 1 <= y <= b.box[3] + 1
                ]
                if not under:
                    continue
                b = under[0]
                reference = scored(born_roles.at(born.pages[index].start + (b.start + b.end) // 2))
                middle = page.start + (line.start + line.end) // 2
                lines_n += 1
                ref_n[reference] += 1
                for way, roles in (("rules", rules), ("model", model)):
                    got = scored(roles.at(middle))
                    found[way][got] += 1
                    agree[way][got] += got == reference
                    right[way] += got == reference
        print(f"{name}: {len(texts)} pages", file=sys.stderr)
    print(f"{lines_n} OCR lines matched to a born-digital line, {pages_n} pages")
    print(f"{'role':>12} {'reference':>9} {'rules':>11} {'model':>11}   (found / agreeing)")
    for role in SCORED:
        print(
            f"{role:>12} {ref_n[role]:>9} {found['rules'][role]:>5} / {agree['rules'][role]:<3} "
            f"{found['model'][role]:>5} / {agree['model'][role]:<3}"
        )
    for way in ("rules", "model"):
        print(f"{way}: {right[way] / max(lines_n, 1):.3f} of the lines agree")
    print(f"OCR {ocr_s / pages_n:.2f} s a page, the model {model_s / pages_n:.2f} s a page")
    for name, wanted in SCANS.items():
        with pymupdf.open(stream=subset(PDF / name, wanted), filetype="pdf") as doc:
            texts, ocr_pages, _ = read_by_ocr(doc, limits, name)
            _, rules, model, took = ways(doc, texts, ocr_pages)
        for way, roles in (("rules", rules), ("model", model)):
            counts = Counter(r.role for r in roles.ranges)
            print(f"{name} {way}: {dict(sorted(counts.items()))} ({took:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
