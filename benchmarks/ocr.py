"""OCR accuracy and speed against born-digital pages, both engines side by side, in one run.

    nice .venv/bin/python benchmarks/ocr.py [--pages 1] [--dpi 150 300] [--speed-dpi 200]
        [--engines rapidocr tesseract auto] [--sets en zh-typeset ...]

Born-digital pages of ../shared/corpus (English papers, the Chinese, Japanese and Korean PDFs)
and pages typeset here (Chinese from cmrc2018 contexts, Japanese and Korean from the text layers
of the corpus's Japanese and Korean PDFs, set horizontally: the corpus's Japanese pages are
vertical, its Chinese page is a credits list and its Korean page a table, whose reading order
is a table's) are rendered to images at each resolution and read by each OCR engine exactly as
an import reads PDF pages without a text layer (`scans.ocr_pdf_pages`: `ocr.read_page`, pages
read by up to --threads Tesseract processes at once); the result is compared with the page's
own text layer (`extract.pdf_page_text`). Character error rate (CER) is the edit distance over
the length of the reference, on NFKC text with all whitespace removed (line breaks and reading
order of a text layer are not the engine's to reproduce); "words" keeps single spaces between
words, so it also counts word spaces the engine dropped or added. Speed is measured at
--speed-dpi over all pages: pages per second of wall clock (a busy machine deflates it, so the
load average is printed) and CPU seconds per page of this process and the Tesseract processes
it ran (which load does not inflate), with peak resident memory of this process and of the
largest Tesseract process.

Engines: rapidocr, tesseract (with --languages; its script detection picks the page's ones),
auto (the default setting: Tesseract, but RapidOCR for pages whose script is Han) and, to see
what that detection buys, tesseract-all (every one of --languages on every page, no detection).

Not used as a reference: paper_tam_review_sprouts.pdf, whose text layer maps most glyphs to
control characters and symbols (OCR reads its pages far better than the layer does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import sys
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pymupdf

from knownote.read import tesseract
from knownote.read.extract import OcrLimits, pdf_page_text
from knownote.read.ocr import DEFAULT_LANGUAGES
from knownote.read.scans import ocr_pdf_pages

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
SETS = {
    "en": [
        "paper_dpr_2004.04906_2col.pdf",
        "paper_tracemonkey_pldi09_2col.pdf",
        "paper_naacl06_shinyama_2col.pdf",
    ],
    "zh-typeset": [],  # the first contexts of qa_zh/cmrc2018_dev.json typeset by PyMuPDF
    "zh": ["cjk_zh_textbook_credits.pdf"],
    "ja-typeset": [],  # the text layers of the "ja" PDFs' pages, typeset horizontally
    "ja": ["cjk_ja_miyazawa_preface_vertical.pdf", "cjk_ja_official_gazette_vertical.pdf"],
    "ko-typeset": [],  # the text layer of the "ko" PDF's page, typeset horizontally
    "ko": ["cjk_ko_card_terms_tables.pdf"],
}
FONTS = {"zh": "china-s", "ja": "japan", "ko": "korea"}


def typeset(texts: list[str], lang: str) -> list[pymupdf.Page]:
    """Born-digital pages: each text set in PyMuPDF's built-in CJK font for `lang`, cut to
    what fits on an A4 page."""
    doc = pymupdf.open()
    for text in texts:
        page = doc.new_page(width=595, height=842)
        while text:
            rect = pymupdf.Rect(56, 56, 539, 786)
            if page.insert_textbox(rect, text, fontsize=11, fontname=FONTS[lang]) >= 0:
                break
            text = text[: int(len(text) * 0.9)]
    return list(doc)


def typeset_cmrc(count: int) -> list[pymupdf.Page]:
    """Born-digital Chinese pages: cmrc2018 contexts set in PyMuPDF's built-in CJK font."""
    data = json.loads((PDF_DIR.parents[1] / "qa_zh/cmrc2018_dev.json").read_text("utf-8"))
    contexts = [p["context"] for a in data["data"] for p in a["paragraphs"]][:count]
    return typeset(contexts, "zh")


def typeset_layers(names: list[str], count: int, lang: str) -> list[pymupdf.Page]:
    """The text layers of the first pages of `names`, typeset horizontally (a vertical page's
    layer has a character a line: its line breaks are dropped)."""
    texts = []
    for name in names:
        doc = pymupdf.open(PDF_DIR / name)
        for i in range(min(count, doc.page_count)):
            text = pdf_page_text(doc[i])
            joined = text.replace("\n", "") if lang == "ja" else text
            texts.append(joined)
    return typeset(texts, lang)


def pages_of(name: str, count: int) -> list[pymupdf.Page]:
    if name == "zh-typeset":
        return typeset_cmrc(count)
    if name.endswith("-typeset"):
        lang = name.removesuffix("-typeset")
        return typeset_layers(SETS[lang], count, lang)
    pages = []
    for pdf in SETS[name]:
        doc = pymupdf.open(PDF_DIR / pdf)
        pages += [doc[i] for i in range(min(count, doc.page_count))]
    return pages


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one row at a time with numpy (insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    prev = np.arange(len(b) + 1, dtype=np.int64)
    cols = np.arange(len(b) + 1, dtype=np.int64)
    for i, ch in enumerate(a, 1):
        cost = (bb != ord(ch)).astype(np.int64)
        row = np.empty_like(prev)
        row[0] = i
        row[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        row = np.minimum.accumulate(row - cols) + cols  # row[j] = min(row[j], row[j-1] + 1)
        prev = row
    return int(prev[-1])


def normal(text: str, keep_spaces: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", " ", text).strip() if keep_spaces else re.sub(r"\s+", "", text)


def pixels(page: pymupdf.Page, dpi: int) -> np.ndarray:
    pix = page.get_pixmap(dpi=dpi, alpha=False, colorspace="rgb")
    return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)


class ChildPeak(threading.Thread):
    """The largest peak RSS (VmHWM) of this process's tesseract children, sampled every 50 ms
    from /proc (getrusage's figure for children counts the parent's memory before exec)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kb = 0

    def run(self) -> None:
        me = str(os.getpid())
        while True:
            for status in Path("/proc").glob("[0-9]*/status"):
                try:
                    fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
                except (OSError, ValueError):
                    continue
                if (
                    fields.get("PPid", "").strip() == me
                    and fields.get("Name", "").strip() == "tesseract"
                    and "VmHWM" in fields
                ):
                    self.peak_kb = max(self.peak_kb, int(fields["VmHWM"].split()[0]))
            time.sleep(0.05)


@contextmanager
def no_script_detection(active: bool) -> Iterator[None]:
    """Within: Tesseract reads every page with all the languages it is given."""
    if not active:
        yield
        return
    original = tesseract.mixed
    tesseract.mixed = lambda languages: False
    try:
        yield
    finally:
        tesseract.mixed = original


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1, help="first pages of each PDF")
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--speed-dpi", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--engines",
        nargs="+",
        default=["rapidocr", "tesseract", "auto"],
        choices=["rapidocr", "tesseract", "auto", "tesseract-all"],
    )
    parser.add_argument("--languages", default=DEFAULT_LANGUAGES, help="Tesseract's")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    args = parser.parse_args()
    children = ChildPeak()
    children.start()
    cer: dict[tuple[str, int, str], tuple[float, float]] = {}
    sizes: dict[tuple[str, int], tuple[int, int]] = {}
    speed = {engine: [0, 0.0, 0.0] for engine in args.engines}  # pages, wall, CPU seconds
    dpis = sorted(set(args.dpi) | {args.speed_dpi})
    for name in args.sets:
        pages = pages_of(name, args.pages)
        references = [pdf_page_text(page) for page in pages]
        for dpi in dpis:
            for engine in args.engines:
                limits = OcrLimits(
                    dpi=dpi,
                    threads=args.threads,
                    engine=engine.removesuffix("-all"),
                    languages=args.languages,
                )
                started, started_cpu = time.perf_counter(), cpu_seconds()
                with no_script_detection(engine.endswith("-all")):
                    reads = list(ocr_pdf_pages(pages, limits, name))
                seconds, cpu = time.perf_counter() - started, cpu_seconds() - started_cpu
                errors = {False: 0, True: 0}
                lengths = {False: 0, True: 0}
                for reference, read in zip(references, reads, strict=True):
                    assert not isinstance(read, Exception), read
                    for spaces in (False, True):
                        ref, hyp = normal(reference, spaces), normal(read[0], spaces)
                        errors[spaces] += edit_distance(ref, hyp)
                        lengths[spaces] += len(ref)
                cer[name, dpi, engine] = (
                    errors[False] / max(lengths[False], 1),
                    errors[True] / max(lengths[True], 1),
                )
                sizes[name, dpi] = (len(pages), lengths[False])
                if dpi == args.speed_dpi:
                    speed[engine][0] += len(pages)
                    speed[engine][1] += seconds
                    speed[engine][2] += cpu
                print(f"  {name} at {dpi} dpi by {engine} done", file=sys.stderr, flush=True)
    header = f"{'pages':<11}{'dpi':>5}{'n':>4}{'chars':>7}"
    header += "".join(f"{e + ' CER':>19}{'words':>8}" for e in args.engines)
    print(header)
    for name in args.sets:
        for dpi in args.dpi:
            n, chars = sizes[name, dpi]
            row = f"{name:<11}{dpi:>5}{n:>4}{chars:>7}"
            for engine in args.engines:
                plain, words = cer[name, dpi, engine]
                row += f"{plain:>19.2%}{words:>8.2%}"
            print(row)
    load = os.getloadavg()[0]
    for engine, (n, seconds, cpu) in speed.items():
        print(
            f"{engine} at {args.speed_dpi} dpi: {n / seconds:.2f} pages/s over {n} pages "
            f"({args.threads} threads, load average {load:.1f}); CPU {cpu / n:.1f} s a page"
        )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = children.peak_kb / 1024
    print(f"peak RSS: {own:.0f} MB this process, {child:.0f} MB the largest Tesseract process")


if __name__ == "__main__":
    main()
