"""Cheap speed-ups of RapidOCR tried on the same pages: CPU a page and CER of each variant.

    nice .venv/bin/python benchmarks/ocr_rapid_variants.py [--zh-pages 2] [--en-pages 1]

Typeset cmrc2018 pages and the first English paper of benchmarks/ocr.py, rendered at 200 dpi,
are read by RapidOCR built with each variant of its options (the angle classifier is off in all
of them, as in the product: upright pages): the product's (2 intra-op threads, recogniser batch
6, detector input up to 2000 pixels a side), a larger recogniser batch, a smaller detector
input, and 1 thread. onnxruntime's graph optimisation is already at its highest level in
RapidOCR. Prints the detector's and recogniser's wall time a page, the CPU time a page (which a
busy machine does not inflate) and the CER of the Chinese and English pages.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pymupdf
from rapidocr_onnxruntime import RapidOCR

from benchmarks.ocr import PDF_DIR, SETS, edit_distance, normal, pixels, typeset_cmrc
from knownote.read import ocr
from knownote.read.extract import pdf_page_text

VARIANTS = {
    "product (2 threads, batch 6, 2000 px)": {},
    "recogniser batch 16": {"rec_batch_num": 16},
    "detector input 1400 px": {"max_side_len": 1400},
    "1 thread": {"intra_op_num_threads": 1},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zh-pages", type=int, default=2)
    parser.add_argument("--en-pages", type=int, default=1)
    args = parser.parse_args()
    pages = [(page, "zh") for page in typeset_cmrc(args.zh_pages)]
    pages += [(pymupdf.open(PDF_DIR / name)[0], "en") for name in SETS["en"][: args.en_pages]]
    images = [(pixels(page, 200), normal(pdf_page_text(page), False), lang) for page, lang in pages]
    print(f"{'variant':<40}{'det s':>7}{'rec s':>7}{'CPU s':>7}{'CER zh':>8}{'CER en':>8}")
    for name, options in VARIANTS.items():
        engine = RapidOCR(
            **{
                "intra_op_num_threads": 2,
                "inter_op_num_threads": 1,
                "use_cls": False,
                "print_verbose": False,
                **options,
            }
        )
        ocr._engine = lambda threads, engine=engine: engine  # what ocr.recognise runs
        det = rec = cpu = 0.0
        errors = {"zh": [0, 0], "en": [0, 0]}
        for image, reference, lang in images:
            started = time.process_time()
            text = ocr.page_text(ocr.recognise(image, 2)).text
            cpu += time.process_time() - started
            _, elapsed = engine(np.ascontiguousarray(image[:, :, ::-1]), return_word_box=True)
            det, rec = det + elapsed[0], rec + elapsed[2]
            errors[lang][0] += edit_distance(reference, normal(text, False))
            errors[lang][1] += len(reference)
        n = len(images)
        zh, en = (errors[lang][0] / max(errors[lang][1], 1) for lang in ("zh", "en"))
        print(f"{name:<40}{det / n:>7.2f}{rec / n:>7.2f}{cpu / n:>7.2f}{zh:>8.2%}{en:>8.2%}")


if __name__ == "__main__":
    main()
