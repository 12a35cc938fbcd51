"""How long a highlighted page takes to render, measured in one run.

    .venv/bin/python benchmarks/pages.py [--zoom 2] [PDF ...]

For each PDF (default: a few from ../shared/corpus: two-column papers, a three-column register,
vertical Japanese, a 50-page form with tables) and each of its first 12 pages, renders the page
with its first 300 characters highlighted, exactly as the app does (`pdf_page.render_page`):
once cold (glyph map, rendering and the PNG of the crop around the highlight, caches cleared) and
once warm (the glyph map and the rendered page come from the cache; only the highlight and the
crop's PNG are made). The whole page is encoded only when the user asks for it, as in the app.
Prints the median and the slowest cold and warm times per PDF (target: well under a second).

With --check-all it also counts, over every page of every PDF in ../shared/corpus/docs/pdf, the
pages whose glyph map spells exactly the page's stored text (`pdf_page_text`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf

from knownote.errors import PageMismatch
from knownote.read.extract import pdf_page_text
from knownote.show import pdf_page

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
DEFAULT = [
    "paper_dpr_2004.04906_2col.pdf",
    "paper_tracemonkey_pldi09_2col.pdf",
    "gov_federal_register_3col.pdf",
    "cjk_ja_official_gazette_vertical.pdf",
    "cjk_ko_card_terms_tables.pdf",
    "gov_irs_i1040nr_2007_50p_tables.pdf",
]
PAGES = 12


def timed_ms(run) -> float:
    t = time.perf_counter()
    run()
    return (time.perf_counter() - t) * 1000


def measure(path: Path, zoom: float) -> tuple[list[float], list[float]]:
    cold, warm = [], []
    with pymupdf.open(path) as doc:
        for index in range(min(PAGES, doc.page_count)):
            stored = pdf_page_text(doc[index])
            if not stored.strip():
                continue

            def render(stored: str = stored, number: int = index + 1) -> None:
                pdf_page.render_page(doc, path.name, number, stored, 0, 300, zoom, whole_page=False)

            pdf_page.clear_caches()
            cold.append(timed_ms(render))
            warm.append(timed_ms(render))
    return cold, warm


PASSWORDS = {"enc_password_openpassword.pdf": "openpassword", "enc_password_test_4p.pdf": "test"}


def check_all() -> None:
    exact, pages, failed = 0, 0, []
    for path in sorted(PDF_DIR.glob("*.pdf")):
        try:
            doc = pymupdf.open(path)
        except (pymupdf.FileDataError, pymupdf.EmptyFileError):
            continue
        with doc:
            if doc.needs_pass:
                doc.authenticate(PASSWORDS.get(path.name, ""))
            for index in range(doc.page_count):
                try:
                    page = doc.load_page(index)
                    stored = pdf_page_text(page)
                except pymupdf.mupdf.FzErrorBase:
                    continue  # a damaged page: the import skips it too
                pages += 1
                try:
                    ok = pdf_page.page_glyphs(page).text == stored
                except PageMismatch:
                    ok = False
                exact += ok
                if not ok:
                    failed.append(f"{path.name} p. {index + 1}")
    print(f"glyph map spells the stored text on {exact} of {pages} corpus pages")
    for name in failed[:20]:
        print(f"  not exact: {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--zoom", type=float, default=pdf_page.DEFAULT_ZOOM)
    parser.add_argument("--check-all", action="store_true", help="check every corpus page too")
    args = parser.parse_args()
    paths = args.pdfs or [PDF_DIR / name for name in DEFAULT]
    print(f"zoom {args.zoom:g}; ms per page: median (slowest)")
    print(f"{'pdf':<42} {'pages':>5} {'cold':>16} {'warm':>16}")
    every_cold = []
    for path in paths:
        if not path.exists():
            print(f"{path.name:<42} missing (needs ../shared/corpus)")
            continue
        cold, warm = measure(path, args.zoom)
        every_cold += cold
        print(
            f"{path.name[:42]:<42} {len(cold):>5} "
            f"{statistics.median(cold):>8.0f} ({max(cold):>5.0f}) "
            f"{statistics.median(warm):>8.0f} ({max(warm):>5.0f})"
        )
    if every_cold:
        print(
            f"all {len(every_cold)} pages cold: median {statistics.median(every_cold):.0f} ms, "
            f"slowest {max(every_cold):.0f} ms"
        )
    if args.check_all:
        check_all()


if __name__ == "__main__":
    main()
