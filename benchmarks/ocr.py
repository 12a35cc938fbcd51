"""OCR accuracy and speed against born-digital pages, measured in one run.

    nice .venv/bin/python benchmarks/ocr.py [--pages 2] [--dpi 150 300] [--speed-dpi 200]

Born-digital pages of ../shared/corpus (English papers, the Chinese and Japanese PDFs, and
Chinese pages typeset here from cmrc2018 contexts, as the corpus's one born-digital Chinese page
is a credits list whose reading order is a table's) are
rendered to images at each resolution and read by the OCR engine exactly as an import reads a
page without a text layer (`ocr.recognise` + `ocr.page_text`); the result is compared with the
page's own text layer (`extract.pdf_page_text`). Character error rate (CER) is the edit distance
over the length of the reference, on NFKC text with all whitespace removed (line breaks and
reading order of a text layer are not the engine's to reproduce); "CER words" keeps single spaces
between words, so it also counts word spaces the engine dropped or added. Pages per second are
measured at --speed-dpi (wall clock, and CPU time per page, which a busy machine does not
inflate), with the peak resident memory of this process. Prints one table.

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
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pymupdf

from knownote.extract import pdf_page_text
from knownote.ocr import page_text, recognise

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
SETS = {
    "en": [
        "paper_dpr_2004.04906_2col.pdf",
        "paper_tracemonkey_pldi09_2col.pdf",
        "paper_naacl06_shinyama_2col.pdf",
    ],
    "zh": ["cjk_zh_textbook_credits.pdf"],
    "zh-typeset": [],  # the first contexts of qa_zh/cmrc2018_dev.json typeset by PyMuPDF
    "ja": ["cjk_ja_miyazawa_preface_vertical.pdf", "cjk_ja_official_gazette_vertical.pdf"],
}


def typeset_cmrc(count: int) -> list[pymupdf.Page]:
    """Born-digital Chinese pages: cmrc2018 contexts set in PyMuPDF's built-in CJK font."""
    data = json.loads((PDF_DIR.parents[1] / "qa_zh/cmrc2018_dev.json").read_text("utf-8"))
    contexts = [p["context"] for a in data["data"] for p in a["paragraphs"]][:count]
    doc = pymupdf.open()
    for text in contexts:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(56, 56, 539, 786), text, fontsize=11, fontname="china-s")
    return list(doc)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2, help="first pages of each PDF")
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--speed-dpi", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--langs", nargs="+", default=list(SETS))
    args = parser.parse_args()
    rows = []
    speed_pages, speed_seconds, speed_cpu = 0, 0.0, 0.0
    for lang in args.langs:
        names = SETS[lang]
        pages = typeset_cmrc(args.pages) if lang == "zh-typeset" else []
        for name in names:
            doc = pymupdf.open(PDF_DIR / name)
            pages += [doc[i] for i in range(min(args.pages, doc.page_count))]
        for dpi in sorted(set(args.dpi) | {args.speed_dpi}):
            errors = {False: 0, True: 0}
            lengths = {False: 0, True: 0}
            seconds = cpu = 0.0
            for page in pages:
                reference = pdf_page_text(page)
                image = pixels(page, dpi)
                started, started_cpu = time.perf_counter(), time.process_time()
                read = page_text(recognise(image, args.threads)).text
                seconds += time.perf_counter() - started
                cpu += time.process_time() - started_cpu
                for spaces in (False, True):
                    ref, hyp = normal(reference, spaces), normal(read, spaces)
                    errors[spaces] += edit_distance(ref, hyp)
                    lengths[spaces] += len(ref)
            if dpi == args.speed_dpi:
                speed_pages += len(pages)
                speed_seconds += seconds
                speed_cpu += cpu
            if dpi in args.dpi:
                rows.append(
                    (
                        lang,
                        dpi,
                        len(pages),
                        lengths[False],
                        errors[False] / max(lengths[False], 1),
                        errors[True] / max(lengths[True], 1),
                        len(pages) / seconds,
                    )
                )
            print(f"  {lang} at {dpi} dpi done", file=sys.stderr, flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{'lang':<11}{'dpi':>5}{'pages':>7}{'chars':>8}{'CER':>9}{'CER words':>11}{'pages/s':>9}"
    )
    for lang, dpi, n, chars, cer, cer_words, rate in rows:
        print(f"{lang:<11}{dpi:>5}{n:>7}{chars:>8}{cer:>9.2%}{cer_words:>11.2%}{rate:>9.2f}")
    print(
        f"speed at {args.speed_dpi} dpi: {speed_pages / speed_seconds:.2f} pages/s over "
        f"{speed_pages} pages ({args.threads} threads, load average {os.getloadavg()[0]:.1f}); "
        f"CPU {speed_cpu / speed_pages:.1f} s a page, so at best "
        f"{args.threads * speed_pages / speed_cpu:.2f} pages/s on {args.threads} idle cores; "
        f"peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
