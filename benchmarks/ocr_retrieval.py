"""Retrieval through OCR against the same pages born-digital, measured in one run.

    nice .venv/bin/python benchmarks/ocr_retrieval.py [--en-contexts 240] [--zh-questions 300]

The contexts of qa_en/xquad.en.json and those of the first questions of qa_zh/cmrc2018_dev.json
are typeset into PDF pages with PyMuPDF (one context a page). Each set is imported twice through
the real import path (`ingest.import_file`): once as these born-digital PDFs (text layer), once
as image-only PDFs made by rasterising the same pages at --dpi (read by OCR). Every question is
then searched (hybrid, k = 5) and counts as found when a retrieved passage of its own document
overlaps its answer. The answer's place in each imported text is found by aligning the original
context with that text (difflib), so line breaks of the typesetting and OCR's errors move it
with the characters around it. Prints recall@5 of both imports and their difference.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pymupdf

from knownote.index.embedders import get_embedder
from knownote.measure.retrieval import Context, Dataset, load_squad
from knownote.pipeline.ingest import import_file
from knownote.search.retrieve import Scope, rank
from knownote.settings import Settings
from knownote.store.db import Store

QA = Path(__file__).resolve().parents[2] / "shared/corpus"
K = 5


def typeset(text: str, cjk: bool) -> bytes:
    """The context on one A4 page (the font shrinks until it fits)."""
    for size in (11, 10, 9, 8, 7, 6):
        doc = pymupdf.open()
        page = doc.new_page(width=595, height=842)
        left = page.insert_textbox(
            pymupdf.Rect(56, 56, 539, 786),
            text,
            fontsize=size,
            fontname="china-s" if cjk else "helv",
        )
        if left >= 0:
            return doc.tobytes()
    raise ValueError("context too long for one page")


def rasterised(pdf: bytes, dpi: int) -> bytes:
    """The same pages as images only: no text layer."""
    src = pymupdf.open(stream=pdf, filetype="pdf")
    out = pymupdf.open()
    for page in src:
        pix = page.get_pixmap(dpi=dpi, alpha=False, colorspace="gray")
        target = out.new_page(width=page.rect.width, height=page.rect.height)
        target.insert_image(target.rect, pixmap=pix)
    return out.tobytes(deflate=True)


def mapper(source: str, target: str):
    """Maps an offset in `source` to the corresponding offset in `target`."""
    blocks = difflib.SequenceMatcher(None, source, target, autojunk=False).get_matching_blocks()
    starts = [b.a for b in blocks]

    def to_target(offset: int) -> int:
        i = max(bisect.bisect_right(starts, offset) - 1, 0)
        a, b, size = blocks[i]
        return b + min(offset - a, size)

    return to_target


def run(dataset: Dataset, cjk: bool, dpi: int, label: str) -> dict[str, float]:
    embedder = get_embedder()
    out = {}
    for variant in ("born-digital", "ocr"):
        with tempfile.TemporaryDirectory() as home:
            settings = Settings().with_(home=Path(home))
            store = Store.open(settings.db_path)
            notebook = store.create_notebook(label, embedder.name, embedder.dim)
            ids, maps = [], []
            started = time.perf_counter()
            for i, context in enumerate(dataset.contexts):
                pdf = typeset(context.text, cjk)
                if variant == "ocr":
                    pdf = rasterised(pdf, dpi)
                result = import_file(
                    store, notebook, f"{label}-{i}.pdf", pdf, settings=settings, embedder=embedder
                )
                assert result.status == "imported", result.error
                ids.append(result.document_id)
                maps.append(mapper(context.text, store.document_text(result.document_id)))
                if (i + 1) % 20 == 0:
                    print(f"  {label} {variant}: {i + 1}/{len(dataset.contexts)}", file=sys.stderr)
            seconds = time.perf_counter() - started
            spans = {p.id: (p.document_id, p.start, p.end) for d in ids for p in store.passages(d)}
            found = 0
            for q in dataset.questions:
                doc, to_target = ids[q.context], maps[q.context]
                start, end = to_target(q.start), max(to_target(q.end), to_target(q.start) + 1)
                for pid, _ in rank(store, embedder, Scope(notebook.id), q.text, K, "hybrid"):
                    d, s, e = spans[pid]
                    if d == doc and s < end and start < e:
                        found += 1
                        break
            out[variant] = found / len(dataset.questions)
            out[f"{variant} s/page"] = seconds / len(dataset.contexts)
            store.close()
    return out


def first_contexts(dataset: Dataset, n: int) -> Dataset:
    questions = [q for q in dataset.questions if q.context < n]
    contexts: list[Context] = dataset.contexts[:n]
    return Dataset(contexts, questions, dataset.skipped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--en-contexts", type=int, default=240)
    parser.add_argument("--zh-questions", type=int, default=300)
    parser.add_argument("--dpi", type=int, default=200)
    args = parser.parse_args()
    en = first_contexts(load_squad(QA / "qa_en/xquad.en.json"), args.en_contexts)
    zh = load_squad(QA / "qa_zh/cmrc2018_dev.json", max_questions=args.zh_questions)
    print(f"{'set':<10}{'contexts':>9}{'questions':>10}{'born-digital':>14}{'OCR':>8}{'diff':>8}"
          f"{'OCR s/page':>12}")  # fmt: skip
    for label, dataset, cjk in (("xquad.en", en, False), ("cmrc2018", zh, True)):
        if not dataset.questions:  # --en-contexts 0 or --zh-questions 0: that set is left out
            continue
        r = run(dataset, cjk, args.dpi, label)
        print(
            f"{label:<10}{len(dataset.contexts):>9}{len(dataset.questions):>10}"
            f"{r['born-digital']:>14.1%}{r['ocr']:>8.1%}"
            f"{100 * (r['ocr'] - r['born-digital']):>+7.1f}p{r['ocr s/page']:>12.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
