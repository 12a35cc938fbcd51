"""The two OCR faults of issue 36, measured in one run: garbage OCR layers, and the reading order
of pages read by OCR.

    nice .venv/bin/python benchmarks/ocr_order.py [--layers-only] [--order-only] [--dpi 200]

Layers: every page of every PDF of ../shared/corpus is measured by `ocr.layer_noise` (the
share of symbols, of single letters and of case flipped inside words) as if it were an OCR
layer, and every PDF's import decision is listed (pages read by OCR because they have no layer
or a noisy one, and pages whose layer is judged against a fresh reading); then the text of a
few pages (English, Chinese, Korean, Japanese) is turned into garbage layers as scans outside
the corpus have them: symbol soup ("«POAH «3E*»CM"), a font cipher (every character another
one, as a font without a Unicode map gives), words broken by spaces, and mojibake (UTF-8 read
as cp1252, and as GBK). A generated layer is a hit when it is found garbled; "n/a" where the
garbage is nine tenths the text itself (ASCII English as mojibake, a Korean page's few Latin
letters ciphered) or breaks words of a script written without spaces (Chinese, Japanese).

Order: pages of corpus PDFs that have a text layer, and pages typeset here whose order is
known (two columns of English, three and four narrow columns of Chinese, a table in each), are
rendered at --dpi and read once by OCR as an import reads a page without a layer
(`ocr._read_page`, --engine auto: Tesseract, RapidOCR for Chinese); the reading's tables are
then regrouped by rows before (`ocr.KEEP_TEXT_COLUMNS` off: the old reading) and after. A
corpus page is compared with its text layer (`pdf_page_text`, tables read by rows) and with
the layer's lines in the order of PyMuPDF Layout's regions ("layout": MuPDF's own order puts
the Federal Register's footnotes first); a typeset page with its known order. Two measures:
"order", the share of the reading's lines found in the reference (by its middle 16 characters
found once in it, spaces removed) that come in its order (the longest increasing run
of their positions over those found: recognition errors only lose lines, they do not count
against the order), and "similarity", difflib's ratio of the two texts (NFKC, spaces removed,
line breaks kept), which counts recognition errors as well.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import unicodedata
from bisect import bisect_left
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pymupdf

from knownote.read import ocr
from knownote.read.extracted import OcrLimits
from knownote.read.pdf import PDF_TEXT_FLAGS, _read_layers, pdf_page_text
from knownote.read.scans import layers_to_judge

PDF_DIR = Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf"
PASSWORDS = {"enc_password_openpassword.pdf": "openpassword", "enc_password_test_4p.pdf": "test"}

# ---------------------------------------------------------------- garbage layers

SOUP = "«»*#%&@^~|<>{}[]\\/=+§¤°±ABCEHKMOPTXacehkmoptx0123456789"
CIPHER_FROM = [chr(c) for c in range(33, 127)] + list("«»°±§¤µ¶·¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß")


def symbol_soup(text: str, seed: int = 1) -> str:
    """Half the characters replaced by symbols, capitals and digits: "«POAH «3E*»CM"."""
    rng = random.Random(seed)
    return "".join(rng.choice(SOUP) if not c.isspace() and rng.random() < 0.5 else c for c in text)


def font_cipher(text: str, seed: int = 2) -> str:
    """Every printable Latin character another one: a font without a Unicode map."""
    targets = CIPHER_FROM[:]
    random.Random(seed).shuffle(targets)
    table = dict(zip(CIPHER_FROM, targets, strict=True))
    return "".join(table.get(c, c) for c in text)


def broken_words(text: str, seed: int = 3) -> str:
    """A space after a third of the letters: "T h e mem o ra ndum"."""
    rng = random.Random(seed)
    return "".join(c + " " if c.isalpha() and rng.random() < 0.35 else c for c in text)


def mojibake(text: str) -> str:
    """UTF-8 read as cp1252: "æˆªè‡³" for "截至"."""
    return text.encode("utf-8").decode("cp1252", "replace")


def mojibake_gbk(text: str) -> str:
    """UTF-8 read as GBK: "鎴�鑷�" for "截至" (Han characters, mostly, and replacements)."""
    return text.encode("utf-8").decode("gbk", "replace")


GARBAGE = {
    "soup": symbol_soup,
    "cipher": font_cipher,
    "broken": broken_words,
    "mojibake": mojibake,
    "mojibake-gbk": mojibake_gbk,
}
LAYER_PAGES = [
    ("paper_dpr_2004.04906_2col.pdf", 1),
    ("paper_naacl06_shinyama_2col.pdf", 2),
    ("gov_federal_register_3col.pdf", 1),
    ("table_nics_background_checks.pdf", 1),
    ("book_mupdf_explored_285p.pdf", 82),
    ("cjk_zh_textbook_credits.pdf", 1),
    ("cjk_zh_scanned_ocr_auditor_letter.pdf", 2),
    ("cjk_ko_card_terms_tables.pdf", 1),
    ("cjk_ja_miyazawa_preface_vertical.pdf", 1),
]


def open_pdf(path: Path) -> pymupdf.Document | None:
    try:
        doc = pymupdf.open(path)
    except pymupdf.FileDataError:  # the empty file
        return None
    if doc.needs_pass:
        doc.authenticate(PASSWORDS.get(path.name, ""))
    return doc


def _kana(text: str) -> bool:
    return sum("\u3040" <= c <= "\u30ff" for c in text) > 0.05 * len(text)


def layers() -> None:
    limits = OcrLimits()
    shares, flagged, decisions = [], [], []
    for path in sorted(PDF_DIR.glob("*.pdf")):
        doc = open_pdf(path)
        if doc is None:
            continue
        with doc:
            found = _read_layers(doc)
            judged = layers_to_judge(found.texts, found.layered, limits, found.to_read)
            decisions.append((path.name, found.to_read, found.layered, judged))
            for number, text in enumerate(found.texts, 1):
                if len("".join(text.split())) < 100:
                    continue
                noise = ocr.layer_noise(text)
                shares.append(noise.symbols)
                if noise.garbled:
                    flagged.append(f"{path.name} p{number}")
    print("Import decisions on the corpus (0-based pages): read by OCR / OCR layers / judged")
    for name, to_read, layered, judged in decisions:
        if to_read or layered or judged:
            print(f"  {name}: {to_read} / {layered} / {judged}")
    print("  every other PDF: no page read by OCR, no OCR layer, none judged")
    p = np.percentile(shares, [50, 95, 99])
    print(
        f"\nEvery corpus page of 100+ characters measured as if it were an OCR layer: "
        f"{len(shares)} pages; symbols median {p[0]:.3f}, 95th pct {p[1]:.3f}, 99th {p[2]:.3f}; "
        f"garbled: {len(flagged)} ({len(flagged) / len(shares):.1%}, none of them an OCR layer)"
    )
    for item in flagged:
        print(f"    {item}")
    print(f"\n{'page':<40} {'clean':>6} " + " ".join(f"{g:>13}" for g in GARBAGE))
    hits, total = 0, 0
    for name, number in LAYER_PAGES:
        doc = open_pdf(PDF_DIR / name)
        if doc is None:
            continue
        text = pdf_page_text(doc[number - 1])
        cells = [f"{'FLAG' if ocr.layer_noise(text).garbled else 'ok':>6}"]
        spaced = not ocr.is_chinese(text) and not _kana(text)
        for kind, make in GARBAGE.items():
            garbage = make(text)
            unchanged = SequenceMatcher(None, garbage, text).ratio() > 0.9
            if unchanged or (kind == "broken" and not spaced):
                cells.append(f"{'(n/a)':>13}")  # near the text itself, or no word spaces
                continue
            noise = ocr.layer_noise(garbage)
            hits, total = hits + noise.garbled, total + 1
            cells.append(f"{('hit ' if noise.garbled else 'MISS ') + f'{noise.symbols:.2f}':>13}")
        print(f"{name[:34] + f' p{number}':<40} " + " ".join(cells))
    print(f"generated garbage layers found garbled: {hits}/{total}")


# ---------------------------------------------------------------- reading order

ORDER_PAGES = [
    ("paper_dpr_2004.04906_2col.pdf", 2),
    ("gov_federal_register_3col.pdf", 2),
    ("table_nics_background_checks.pdf", 1),
    ("gov_irs_i1040nr_2007_50p_tables.pdf", 35),
    ("cjk_zh_textbook_credits.pdf", 1),
]

# ---------------------------------------------------------------- typeset pages of known order

WORDS = ["harbour", "tide", "river", "bridge", "market", "winter", "summer", "pilot", "channel",
         "survey", "storm", "north", "south", "village", "mountain", "letter", "garden", "station",
         "morning", "evening", "orchard", "ferry", "lantern", "meadow", "quarry", "mill", "beacon",
         "granary", "chapel", "harvest", "cottage"]  # fmt: skip
HAN = (
    "港口潮汐河流桥梁市场冬季夏季航道测量风暴北方南方村庄山脉花园车站早晨傍晚果园渡口灯塔"
    "草地采石磨坊粮仓教堂收获农舍"
)


def _line(rng: random.Random, chinese: bool, index: int, width: float) -> str:
    if chinese:  # 10-point characters, filling the column but for two
        return "".join(rng.choice(HAN) for _ in range(int(width / 10) - 3)) + "。"
    return " ".join(rng.choice(WORDS) for _ in range(5)) + f" {index}"


def typeset_columns(columns: int, chinese: bool) -> tuple[pymupdf.Page, str]:
    """A page of `columns` columns of 30 lines (sharing baselines across columns), and its
    text in reading order: each column top to bottom, one after the other."""
    rng = random.Random(columns)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    width = (595 - 100) / columns
    truth = []
    for c in range(columns):
        for i in range(30):
            text = _line(rng, chinese, i, width)
            page.insert_text(
                (50 + c * width, 80 + 22 * i), text, fontname="china-s" if chinese else "helv",
                fontsize=10,
            )  # fmt: skip
            truth.append(text)
    return page, "\n".join(truth)


def typeset_table(chinese: bool) -> tuple[pymupdf.Page, str]:
    """A page of a 20-row, 4-column table, and its text read by rows (" · " between cells)."""
    rng = random.Random(4)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    rows = []
    for r in range(20):
        cells = []
        for c in range(4):
            word = "".join(rng.choice(HAN) for _ in range(4)) if chinese else rng.choice(WORDS)
            cell = f"{word.capitalize()} {rng.randint(10, 999)}"
            page.insert_text(
                (50 + 130 * c, 80 + 24 * r), cell, fontname="china-s" if chinese else "helv",
                fontsize=10,
            )  # fmt: skip
            cells.append(cell)
        rows.append(" · ".join(cells))
    return page, "\n".join(rows)


def typeset_pages() -> list[tuple[str, pymupdf.Page, str]]:
    pages = [
        ("typeset 2 columns, English", *typeset_columns(2, False)),
        ("typeset 3 columns, Chinese", *typeset_columns(3, True)),
        ("typeset 4 columns, Chinese", *typeset_columns(4, True)),
        ("typeset table, English", *typeset_table(False)),
        ("typeset table, Chinese", *typeset_table(True)),
    ]
    return pages


def page_image(page: pymupdf.Page, dpi: int) -> np.ndarray:
    pix = page.get_pixmap(dpi=dpi, alpha=False, colorspace="rgb")
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)


def layout_reference(page: pymupdf.Page) -> str:
    """The text layer's lines in the order of the regions PyMuPDF Layout finds (columns one
    after the other): MuPDF's own order puts a page's footnotes first on the Federal Register."""
    import pymupdf.layout

    page.get_layout()
    regions = [pymupdf.Rect(b[:4]) for b in page.layout_information]
    keyed = []
    for block in page.get_text("dict", flags=PDF_TEXT_FLAGS)["blocks"]:
        for line in block.get("lines", ()):
            text = "".join(span["text"] for span in line["spans"]).strip()
            if not text:
                continue
            box = pymupdf.Rect(line["bbox"])
            middle = (box.tl + box.br) / 2
            region = min(
                range(len(regions)),
                key=lambda k: 0 if middle in regions[k] else 1 + abs(middle.y - regions[k].y0),
                default=0,
            )
            keyed.append((region, box.y0, box.x0, text))
    return "\n".join(item[3] for item in sorted(keyed))


def _squeeze(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def _lis(values: list[int]) -> int:
    tails: list[int] = []
    for v in values:
        i = bisect_left(tails, v)
        tails[i : i + 1] = [v]
    return len(tails)


PIECE = (8, 16)  # characters: lines shorter are left out, longer are found by their middle 16


def line_order(reading: str, reference: str) -> tuple[float, int, int]:
    """The share of the reading's lines found in the reference that come in its order, the
    lines found and the lines of PIECE[0] characters or more."""
    flat = _squeeze(reference.replace(" · ", " "))
    found, long = [], 0
    for line in reading.split("\n"):
        squeezed = _squeeze(line.replace(" · ", " "))
        if len(squeezed) < PIECE[0]:
            continue
        long += 1
        size = min(len(squeezed), PIECE[1])
        mid = (len(squeezed) - size) // 2
        piece = squeezed[mid : mid + size]
        at = flat.find(piece)
        if at >= 0 and flat.find(piece, at + 1) < 0:
            found.append(at)
    return (_lis(found) / len(found) if found else 0.0), len(found), long


def similarity(a: str, b: str) -> float:
    def normal(text: str) -> str:
        text = unicodedata.normalize("NFKC", text.replace(" · ", " "))
        return "\n".join(s for line in text.split("\n") if (s := "".join(line.split())))

    return SequenceMatcher(None, normal(a), normal(b), autojunk=False).ratio()


def order(dpi: int, engine: str) -> None:
    """Each page read by OCR once; its reading before (tables regrouped across text columns:
    `ocr.KEEP_TEXT_COLUMNS` off) and after, against its references."""
    print(
        f"\nReading order, engine {engine}, {dpi} dpi: order (share of lines in order) and "
        "similarity, before -> after"
    )
    print(f"{'page':<42} {'lines':>9} {'order vs ref':>14} {'similar':>14} {'s':>4}")
    pages = [(f"{n[:34]} p{k}", n, k) for n, k in ORDER_PAGES]
    items: list[tuple[str, pymupdf.Page, str, str]] = []
    for label, name, number in pages:
        doc = open_pdf(PDF_DIR / name)
        if doc is None:
            print(f"{name}: not in the corpus, skipped")
            continue
        page = doc[number - 1]
        items.append((label + " (layer)", page, pdf_page_text(page), ""))
        items.append((label + " (layout)", page, layout_reference(page), "same"))
    items += [(label, page, truth, "") for label, page, truth in typeset_pages()]
    sums, count, raw = np.zeros(4), 0, None
    for label, page, reference, same in items:
        started = time.monotonic()
        if not same:
            raw = ocr._read_page(page_image(page, dpi), engine, ocr.DEFAULT_LANGUAGES, dpi, 2)
        readings = []
        for keep in (False, True):
            ocr.KEEP_TEXT_COLUMNS = keep
            readings.append(ocr.table_rows(raw).text)
        before, after = (line_order(r, reference) for r in readings)
        sims = [similarity(r, reference) for r in readings]
        sums += (before[0], after[0], *sims)
        count += 1
        print(
            f"{label:<42} {after[1]:>4}/{after[2]:<4} {before[0]:.3f}→{after[0]:.3f}"
            f"  {sims[0]:.3f}→{sims[1]:.3f} {time.monotonic() - started:>4.0f}",
            flush=True,
        )
    mean = sums / max(count, 1)
    print(f"{'mean':<42} {'':>9} {mean[0]:.3f}→{mean[1]:.3f}  {mean[2]:.3f}→{mean[3]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers-only", action="store_true")
    parser.add_argument("--order-only", action="store_true")
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--engine", default="auto", choices=ocr.ENGINES)
    args = parser.parse_args()
    if not args.order_only:
        layers()
    if not args.layers_only:
        order(args.dpi, args.engine)


if __name__ == "__main__":
    main()
