"""Reading order of the corpus's table pages, before and after tables are read row by row.

    nice .venv/bin/python benchmarks/reading_order.py [--no-ocr] [--engine auto] [--dpi 200]

For each table page of ../shared/corpus (the NICS table, IRS instruction tables, DPR's result
tables, the Korean card terms, the Chinese credits grid, the scanned auditor letter's page 1, the
LaTeX table and XYLayoutLM's tables), in one run:

- the text layer's reading before (MuPDF's plain text, cleaned: what `pdf_page_text` gave) and
  after (`pdf_page_text` now, `knownote.read.table_rows` applied);
- the page read by OCR (rendered at --dpi, `ocr.read_page` as an import reads it) before and
  after the same regrouping (one OCR run: the regrouping is applied to its reading);
- a reference row-order reading: the text layer's words (MuPDF's word list, not its lines or
  blocks) put in visual lines by geometry alone (a word joins a line when its vertical middle
  lies within the line's height), each line left to right. On a table this reads each row
  across the page; on text in two columns beside a table it interleaves the columns, which
  costs every reading that keeps columns apart alike (the DPR and XYLayoutLM pages).

Similarity is difflib's SequenceMatcher ratio (2 * matches / total length, autojunk off) on
NFKC text with spaces and the cell separator " · " removed and line breaks kept (one between two
lines), so it measures the order of the characters and which of them share a line (a name torn
over two lines, a row over ten), not spacing; the characters' count is printed beside it.
Columns: layer vs reference, before -> after; OCR vs the text layer (before vs before, after vs
after); OCR vs reference, before -> after.
"""

from __future__ import annotations

import argparse
import sys
import time
import unicodedata
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pymupdf

from knownote.read import ocr
from knownote.read.canonical import clean_text
from knownote.read.pdf import PDF_TEXT_FLAGS, pdf_page_text
from knownote.read.table_rows import CELL_SEPARATOR

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
PAGES = [
    ("table_nics_background_checks.pdf", 1),
    ("gov_irs_i1040nr_2007_50p_tables.pdf", 34),
    ("gov_irs_i1040nr_2007_50p_tables.pdf", 35),
    ("gov_irs_i1040nr_2007_50p_tables.pdf", 36),
    ("gov_irs_i1040nr_2007_50p_tables.pdf", 37),
    ("paper_dpr_2004.04906_2col.pdf", 4),
    ("paper_dpr_2004.04906_2col.pdf", 5),
    ("paper_dpr_2004.04906_2col.pdf", 6),
    ("paper_xylayoutlm_2203.06947_2col.pdf", 6),
    ("paper_xylayoutlm_2203.06947_2col.pdf", 7),
    ("latex_multicolumn_lorem.pdf", 3),
    ("cjk_ko_card_terms_tables.pdf", 1),
    ("cjk_zh_textbook_credits.pdf", 1),
    ("cjk_zh_scanned_ocr_auditor_letter.pdf", 1),
]


def normal(text: str) -> str:
    """NFKC; each line's spaces and cell separators removed, its line breaks kept (one)."""
    text = unicodedata.normalize("NFKC", text.replace(CELL_SEPARATOR, " "))
    lines = ("".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, normal(a), normal(b), autojunk=False).ratio()


def reference(page: pymupdf.Page) -> str:
    """The page's words in visual lines by geometry alone, each line left to right."""
    words = sorted(
        page.get_text("words", flags=PDF_TEXT_FLAGS), key=lambda w: ((w[1] + w[3]) / 2, w[0])
    )
    lines: list[list[tuple]] = []
    for word in words:
        middle = (word[1] + word[3]) / 2
        if lines and lines[-1][0][1] <= middle <= max(w[3] for w in lines[-1]):
            lines[-1].append(word)
        else:
            lines.append([word])
    return "\n".join(" ".join(w[4] for w in sorted(line, key=lambda w: w[0])) for line in lines)


def ocr_readings(page: pymupdf.Page, engine: str, dpi: int) -> tuple[str, str]:
    """The page read by OCR before and after its table rows are regrouped."""
    zoom = dpi / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False, colorspace="rgb")
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    raw = ocr._read_page(image, engine, ocr.DEFAULT_LANGUAGES, dpi, 2)
    return raw.text, ocr.table_rows(raw).text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-ocr", action="store_true", help="text layers only")
    parser.add_argument("--engine", default="auto", choices=ocr.ENGINES)
    parser.add_argument("--dpi", type=int, default=200)
    args = parser.parse_args()
    header = f"{'page':<42} {'chars':>6}  {'layer→ref':>13}"
    if not args.no_ocr:
        header += f"  {'OCR→layer':>13}  {'OCR→ref':>13}  {'s':>4}"
    print(header)
    sums = np.zeros(6)
    for name, number in PAGES:
        path = PDF_DIR / name
        if not path.exists():
            print(f"{name} p{number}: not in the corpus, skipped")
            continue
        page = pymupdf.open(path)[number - 1]
        before = clean_text(page.get_text("text", flags=PDF_TEXT_FLAGS))
        after = pdf_page_text(page)
        ref = reference(page)
        row = [similarity(before, ref), similarity(after, ref)]
        line = f"{name[:36] + f' p{number}':<42} {len(normal(after).replace(chr(10), '')):>6}  "
        line += f"{row[0]:.3f}→{row[1]:.3f}"
        if not args.no_ocr:
            started = time.monotonic()
            ocr_before, ocr_after = ocr_readings(page, args.engine, args.dpi)
            row += [similarity(ocr_before, before), similarity(ocr_after, after)]
            row += [similarity(ocr_before, ref), similarity(ocr_after, ref)]
            line += f"  {row[2]:.3f}→{row[3]:.3f}  {row[4]:.3f}→{row[5]:.3f}"
            line += f"  {time.monotonic() - started:>4.0f}"
        sums[: len(row)] += row
        print(line, flush=True)
    mean = sums / len(PAGES)
    line = f"{'mean':<42} {'':>6}  {mean[0]:.3f}→{mean[1]:.3f}"
    if not args.no_ocr:
        line += f"  {mean[2]:.3f}→{mean[3]:.3f}  {mean[4]:.3f}→{mean[5]:.3f}"
    print(line)


if __name__ == "__main__":
    main()
