"""Page images -> recognised lines in reading order -> canonical page text with a box per character.

Two engines read a page image, chosen by the `ocr_engine` setting (`engine_for`): Tesseract
(`knownote.read.tesseract`; Debian's `tesseract-ocr` and its language packs), which "auto" picks
when the program and one of the wanted languages are installed, and RapidOCR (PP-OCRv4 detection
and recognition models shipped inside the `rapidocr-onnxruntime` wheel, run by onnxruntime; no
network), which always installs with the project. Both give lines with a box per character, in
the coordinates of the image given, as axis-aligned rectangles.

RapidOCR's recogniser is a CTC model: each character it emits comes from a column of the line
image, so a character's box is the line box cut at that column with the line's average character
width (RapidOCR's `return_word_box`). Its lines are put in reading order here: recursive cuts of
the page along empty stripes, columns first (a vertical stripe no line crosses), then bands
(horizontal stripes); bands whose columns line up are read as one multi-column region, so two
columns whose lines happen to share baselines are still read column by column. Tesseract's lines
come in the order of its own layout analysis (columns, blocks, paragraphs, lines), which read the
benchmark's two-column papers better than these cuts (benchmarks/ocr.py). Lines are joined with
"\n", columns, bands and paragraphs with "\n\n".
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from statistics import median
from typing import Any

import numpy as np

from knownote.errors import KnowNoteError
from knownote.read import tesseract
from knownote.read.canonical import CHAR_MAP, clean_text
from knownote.read.table_rows import follow, reorder_rows

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
# A run of blank pixel columns at least this share of the line box's height is a word space.
SPACE_RUN = 0.2  # measured on three English paper pages at 200 dpi: 0.2 gave the lowest CER


@dataclass(frozen=True)
class OcrLine:
    text: str
    box: Box
    chars: tuple[Box | None, ...]  # one per character of text
    confidence: float


@dataclass(frozen=True)
class OcrText:
    """A page's canonical text with, per character, its box (None: no ink) and line number."""

    text: str
    boxes: tuple[Box | None, ...]
    lines: tuple[int, ...]


ENGINES = ("auto", "tesseract", "rapidocr")
# Tesseract's languages: English, Simplified Chinese, Japanese and Korean (those installed are
# used; see benchmarks/ocr.py for what the mix costs English).
DEFAULT_LANGUAGES = "eng+chi_sim+jpn+kor"


def engine_for(setting: str = "auto", languages: str = DEFAULT_LANGUAGES) -> str:
    """The engine that reads pages: "tesseract" or "rapidocr". "auto" is Tesseract when the
    program and at least one of `languages` are installed, else RapidOCR."""
    if setting not in ENGINES:
        raise KnowNoteError(
            f"The OCR engine {setting!r} is not known; set ocr_engine (env KNOWNOTE_OCR_ENGINE) "
            f"to one of {', '.join(ENGINES)}."
        )
    if setting == "auto":
        return "tesseract" if tesseract.available(languages) else "rapidocr"
    return setting


def read_page(
    image: np.ndarray,
    engine: str = "auto",
    languages: str = DEFAULT_LANGUAGES,
    dpi: int | None = None,
    threads: int = 2,
) -> OcrText:
    """The canonical text of a page image, with a box per character, read by `engine`.

    When Tesseract reads and `languages` cover several scripts, its script detection picks
    the page's languages first (a page of English is read with eng alone: faster, and as
    accurate); with "auto", a page whose script is Han is read by RapidOCR, whose Chinese is
    far better than Tesseract's (benchmarks/ocr.py), and so is a page whose Tesseract reading
    is Chinese (Han without kana or Hangul) whatever the detection said.

    Args:
        image: RGB (h, w, 3) uint8 pixels.
        engine: "auto", "tesseract" or "rapidocr" (see `engine_for`).
        languages: Tesseract's languages, "+"-joined; those not installed are left out.
        dpi: the image's resolution when known (a rendered PDF page); Tesseract guesses it
            from the text size otherwise.
        threads: CPU threads of RapidOCR (Tesseract runs on one).
    """
    return table_rows(_read_page(image, engine, languages, dpi, threads))


def _read_page(
    image: np.ndarray, engine: str, languages: str, dpi: int | None, threads: int
) -> OcrText:
    if engine_for(engine, languages) == "tesseract":
        mixed = tesseract.mixed(languages)
        script = tesseract.script(image, dpi) if mixed else None
        if script == "Han" and engine == "auto":  # RapidOCR reads Chinese far better
            return page_text(recognise(image, threads))
        read = tesseract.read_blocks(image, tesseract.languages_for(script, languages), dpi)
        blocks = [
            [OcrLine(text, box, _close_gaps(text, chars), conf) for text, box, chars, conf in block]
            for block in read
        ]
        text = blocks_text(blocks)
        if (
            mixed
            and engine == "auto"
            and (
                is_chinese(text.text)
                or (script not in tesseract.LATIN and _confidence(blocks) < CJK_CONFIDENCE)
            )
        ):
            # detection could not tell (too few characters) or took Chinese for Japanese or
            # Korean, as it does for some typeset Chinese pages: Japanese has kana, Chinese
            # none, and a Chinese page read as Korean is read with low confidence
            return page_text(recognise(image, threads))
        return text
    return page_text(recognise(image, threads))


# Below this mean confidence, a page Tesseract read as Japanese or Korean is taken to be
# misdetected Chinese: typeset cmrc2018 pages read with jpn or kor scored 0.34-0.67, typeset
# Japanese and Korean pages and the corpus's Korean page 0.86-0.91 (at 200 dpi).
CJK_CONFIDENCE = 0.75


def _confidence(blocks: Sequence[Sequence[OcrLine]]) -> float:
    """The recogniser's confidence over the page, each line weighted by its length."""
    lines = [line for block in blocks for line in block]
    total = sum(len(line.text) for line in lines)
    return sum(line.confidence * len(line.text) for line in lines) / total if total else 1.0


def is_chinese(text: str) -> bool:
    """Mostly Han characters, with next to no kana or Hangul (which would make it Japanese or
    Korean)."""
    counts = {"han": 0, "kana": 0, "hangul": 0}
    for ch in text:
        if "\u3040" <= ch <= "\u30ff":
            counts["kana"] += 1
        elif "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff":
            counts["hangul"] += 1
        elif "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf":
            counts["han"] += 1
    inked = sum(not ch.isspace() for ch in text)
    other = counts["kana"] + counts["hangul"]
    return counts["han"] >= 0.5 * max(inked, 1) and other <= 0.02 * counts["han"]


_ENGINE_LOCK = threading.Lock()  # one recognition at a time: the engine holds its own buffers


@cache
def _engine(threads: int) -> Any:
    from rapidocr_onnxruntime import RapidOCR  # loads onnxruntime: only when a page needs OCR

    return RapidOCR(
        intra_op_num_threads=threads,
        inter_op_num_threads=1,
        use_cls=False,  # upright pages; the angle classifier costs time and rarely helps here
        print_verbose=False,
    )


def recognise(image: np.ndarray, threads: int = 2) -> list[OcrLine]:
    """The text lines of an RGB (h, w, 3) uint8 image, each with a box per character."""
    gray = image.min(axis=2) if image.ndim == 3 else image
    with _ENGINE_LOCK:
        result, _ = _engine(threads)(np.ascontiguousarray(image[:, :, ::-1]), return_word_box=True)
    lines = []
    for item in result or ():
        quad, text, confidence = item[0], item[1], float(item[2])
        word_boxes = item[3] if len(item) > 3 else None
        box = _bounds(quad)
        chars = _char_boxes(text, box, word_boxes)
        text, chars = _restore_spaces(gray, text, box, chars)
        lines.append(OcrLine(text, box, _close_gaps(text, chars), confidence))
    return lines


def _close_gaps(text: str, chars: tuple[Box | None, ...]) -> tuple[Box | None, ...]:
    """Neighbouring characters of a line meet halfway between their CTC cells, and a space
    between two characters gets the gap between them, so a highlight runs on like ink does."""
    out = list(chars)
    for i in range(1, len(out) - 1):
        a, b = out[i - 1], out[i + 1]
        gap = a is not None and b is not None and b[0] > a[2]
        if out[i] is None and text[i].isspace() and gap:
            out[i] = (a[2], min(a[1], b[1]), b[0], max(a[3], b[3]))
    for i in range(1, len(out)):
        a, b = out[i - 1], out[i]
        if a is not None and b is not None and b[0] > a[2]:
            mid = (a[2] + b[0]) / 2
            out[i - 1] = (a[0], a[1], mid, a[3])
            out[i] = (mid, b[1], b[2], b[3])
    return tuple(out)


def _is_cjk(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _restore_spaces(
    gray: np.ndarray, text: str, line: Box, chars: tuple[Box | None, ...]
) -> tuple[str, tuple[Box | None, ...]]:
    """Put back the word spaces the recogniser dropped between two non-CJK characters.

    PP-OCR's Chinese-English recogniser often reads "she would" as "shewould". Between the
    columns of two consecutive characters, the longest run of ink-free pixel columns of the
    line image tells a word space (at least a quarter of the line height) from the gap between
    letters; the space gets the box of that blank run.
    """
    x0, y0, x1, y1 = (round(v) for v in line)
    crop = gray[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)]
    if crop.size == 0 or len(text) < 2:
        return text, chars
    lo, hi = int(crop.min()), int(crop.max())
    if hi - lo < 40:  # no contrast: nothing to measure
        return text, chars
    blank = ~(crop < (lo + hi) / 2).any(axis=0)
    min_run = SPACE_RUN * (y1 - y0)
    out_text: list[str] = [text[0]]
    out_boxes: list[Box | None] = [chars[0]]
    for i in range(1, len(text)):
        a, b = chars[i - 1], chars[i]
        if (
            a is not None
            and b is not None
            and not text[i - 1].isspace()
            and not text[i].isspace()
            and not (_is_cjk(text[i - 1]) or _is_cjk(text[i]))
        ):
            ca = int((a[0] + a[2]) / 2) - max(x0, 0)
            cb = int((b[0] + b[2]) / 2) - max(x0, 0)
            run = _longest_run(blank[max(ca, 0) : max(cb, 0)])
            if run is not None and run[1] - run[0] >= min_run:
                gx0, gx1 = run[0] + max(ca, 0) + max(x0, 0), run[1] + max(ca, 0) + max(x0, 0)
                out_text.append(" ")
                out_boxes.append((float(gx0), line[1], float(gx1), line[3]))
        out_text.append(text[i])
        out_boxes.append(b)
    return "".join(out_text), tuple(out_boxes)


def _longest_run(flags: np.ndarray) -> tuple[int, int] | None:
    """[start, end) of the longest run of True in a 1-D boolean array, or None."""
    if not flags.any():
        return None
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    starts, ends = edges[::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k])


def _bounds(quad: Sequence[Sequence[float]]) -> Box:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    return (min(xs), min(ys), max(xs), max(ys))


def _char_boxes(text: str, line: Box, word_boxes: Sequence[Any] | None) -> tuple[Box | None, ...]:
    """One box per character: the engine's when it gave one per character, else the line box
    divided evenly (in proportion to a character's width class: CJK full, others half)."""
    if word_boxes is not None and len(word_boxes) == len(text):
        boxes = [_bounds(q) for q in word_boxes]
        return tuple(None if ch.isspace() else b for ch, b in zip(text, boxes, strict=True))
    weights = [2.0 if unicodedata.east_asian_width(ch) in "WF" else 1.0 for ch in text]
    total = sum(weights) or 1.0
    x0, y0, x1, y1 = line
    out: list[Box | None] = []
    at = x0
    for ch, w in zip(text, weights, strict=True):
        step = (x1 - x0) * w / total
        out.append(None if ch.isspace() else (at, y0, at + step, y1))
        at += step
    return tuple(out)


# ---------------------------------------------------------------- reading order


def _gaps(spans: list[tuple[float, float]], min_gap: float) -> list[tuple[float, float]]:
    """Empty stripes at least `min_gap` wide between the union of the spans."""
    gaps, end = [], None
    for lo, hi in sorted(spans):
        if end is not None and lo - end >= min_gap:
            gaps.append((end, lo))
        end = hi if end is None else max(end, hi)
    return gaps


def _split(lines: list[OcrLine], axis: int, min_gap: float) -> list[list[OcrLine]]:
    """Lines grouped by the empty stripes across `axis` (0: columns, 1: bands)."""
    gaps = _gaps([(ln.box[axis], ln.box[axis + 2]) for ln in lines], min_gap)
    groups: list[list[OcrLine]] = [[] for _ in range(len(gaps) + 1)]
    for ln in lines:
        groups[sum(ln.box[axis] >= g[1] for g in gaps)].append(ln)
    return [g for g in groups if g]


def _column_gaps(lines: list[OcrLine], min_gap: float) -> list[tuple[float, float]]:
    return _gaps([(ln.box[0], ln.box[2]) for ln in lines], min_gap)


def _order(lines: list[OcrLine], min_gap: float) -> list[list[OcrLine]]:
    """Blocks of lines in reading order; each block is one column of one band, top to bottom."""
    if len(lines) <= 1:
        return [lines] if lines else []
    columns = _split(lines, 0, min_gap)
    if len(columns) > 1:
        return [block for column in columns for block in _order(column, min_gap)]
    bands = _split(lines, 1, 0.0)
    if len(bands) == 1:
        return [sorted(lines, key=lambda ln: (ln.box[1], ln.box[0]))]
    # Consecutive bands that still leave a column gap together form one multi-column region (a
    # band holding one column's line, beside the other column's paragraph break, included);
    # consecutive bands without any gap form one single-column region.
    regions: list[list[OcrLine]] = []
    for band in bands:
        if regions:
            merged = regions[-1] + band
            if _column_gaps(merged, min_gap) or not (
                _column_gaps(regions[-1], min_gap) or _column_gaps(band, min_gap)
            ):
                regions[-1] = merged
                continue
        regions.append(list(band))
    if len(regions) == 1:  # the common stripe is too narrow over the whole: top to bottom
        return [sorted(lines, key=lambda ln: (ln.box[1], ln.box[0]))]
    return [block for region in regions for block in _order(region, min_gap)]


def reading_order(lines: Sequence[OcrLine]) -> list[list[OcrLine]]:
    """The lines grouped in blocks (columns of bands), in reading order."""
    lines = [ln for ln in lines if ln.text.strip()]
    if not lines:
        return []
    height = median(ln.box[3] - ln.box[1] for ln in lines)
    return _order(lines, min_gap=max(0.5 * height, 1.0))  # a gutter is often under a line high


# ---------------------------------------------------------------- canonical text


def _clean_char(ch: str) -> str:
    """What clean_text makes of one recognised character (the recogniser emits no controls,
    but its dictionary holds a few compatibility characters that NFC replaces)."""
    return unicodedata.normalize("NFC", ch.translate(CHAR_MAP))


def page_text(lines: Sequence[OcrLine]) -> OcrText:
    """Canonical text of an OCR'd page and a box per character (offsets into that text), the
    lines put in reading order by `reading_order`."""
    return blocks_text(reading_order(lines))


def blocks_text(blocks: Sequence[Sequence[OcrLine]]) -> OcrText:
    """Canonical text of blocks of lines already in reading order ("\n" between lines, "\n\n"
    between blocks) and a box per character (offsets into that text)."""
    chars: list[str] = []
    boxes: list[Box | None] = []
    line_nos: list[int] = []
    line_no = 0
    for block in blocks:
        first = True
        for line in block:
            pairs = zip(line.text, line.chars, strict=True)
            cleaned = [(c, box) for ch, box in pairs if (c := _clean_char(ch))]
            while cleaned and cleaned[0][0].isspace():
                cleaned.pop(0)
            while cleaned and cleaned[-1][0].isspace():
                cleaned.pop()
            if not cleaned:
                continue
            line_no += 1
            if chars:
                sep = "\n\n" if first else "\n"
                chars.extend(sep)
                boxes.extend([None] * len(sep))
                line_nos.extend([line_no] * len(sep))
            for c, box in cleaned:
                for piece in c:  # NFC may (rarely) give more than one character: same box
                    chars.append(piece)
                    boxes.append(box)
                    line_nos.append(line_no)
            first = False
    text = "".join(chars)
    if clean_text(text) != text:  # not expected: a mark the cleaning would move; keep it exact
        text = clean_text(text)
        return OcrText(text, (None,) * len(text), (0,) * len(text))
    return OcrText(text, tuple(boxes), tuple(line_nos))


def table_rows(read: OcrText) -> OcrText:
    """The page's text with its tables read row by row (`knownote.read.table_rows`): the
    engines' reading orders go column by column through a table."""
    starts = [0]
    for part in read.text.split("\n")[:-1]:
        starts.append(starts[-1] + len(part) + 1)
    ends = [*(s - 1 for s in starts[1:]), len(read.text)]
    line_boxes: list[Box | None] = []
    for start, end in zip(starts, ends, strict=True):
        inked = [b for b in read.boxes[start:end] if b is not None]
        line_boxes.append(
            None
            if not inked
            else (
                min(b[0] for b in inked),
                min(b[1] for b in inked),
                max(b[2] for b in inked),
                max(b[3] for b in inked),
            )
        )
    if KEEP_TEXT_COLUMNS:
        line_boxes = _without_text_columns(read.text.split("\n"), line_boxes)
    rows = reorder_rows(read.text, line_boxes)
    if rows is None:
        return read
    boxes, lines = follow(rows.source, read.boxes, read.lines)
    return OcrText(rows.text, boxes, lines)


# A block of lines the engine read as one column is running text, not a table's column, when
# most of its lines are as wide as its widest (set to the column's measure, only a paragraph's
# last line shorter), that width is TEXT_LINE_WIDTH line heights or more and they are written in
# letters (a column of figures is set to one width too): narrow columns of text (CJK at 10-12
# characters, four columns of English) share baselines like a table's cells and were read across,
# row by row (benchmarks/ocr_order.py). A table's column of words is ragged or narrow.
KEEP_TEXT_COLUMNS = True  # False: the old reading (benchmarks/ocr_order.py measures both)
TEXT_LINE_WIDTH = 6.0  # a 10-character Chinese line read by RapidOCR: 7.8
TEXT_LETTERS = 0.8  # of the block's characters
FULL_LINE = 0.9  # of the block's widest line
FULL_SHARE = 0.7  # of the block's lines
TEXT_BLOCK_LINES = 4


def _without_text_columns(parts: list[str], boxes: list[Box | None]) -> list[Box | None]:
    """The line boxes with those of the lines of text columns left out (None), so that the
    table regrouping leaves them where the engine read them."""
    out = list(boxes)
    block: list[int] = []
    for index in [*range(len(parts)), len(parts)]:
        if index < len(parts) and parts[index].strip():
            block.append(index)
            continue
        inked = [(i, box) for i in block if (box := boxes[i]) is not None]
        if len(inked) >= TEXT_BLOCK_LINES:
            widths = [box[2] - box[0] for _, box in inked]
            height = median(box[3] - box[1] for _, box in inked)
            full = sum(w >= FULL_LINE * max(widths) for w in widths)
            chars = [c for i, _ in inked for c in parts[i] if not c.isspace()]
            letters = sum(c.isalpha() for c in chars) >= TEXT_LETTERS * len(chars)
            wide = max(widths) >= TEXT_LINE_WIDTH * height
            if letters and wide and full >= FULL_SHARE * len(inked):
                for i, _ in inked:
                    out[i] = None
        block = []
    return out


# ---------------------------------------------------------------- noise in an existing text layer

_CONFUSABLE = frozenset("OoIlZSqB|")


def suspect_token_share(text: str) -> float:
    """The share of digit-bearing tokens that mix digits with letters OCR engines confuse with
    digits ("ZOq5", "20I5", "1IO"): a sign of a bad OCR layer. 0.0 when there are none."""
    tokens = [t for t in text.split() if any(c.isdigit() for c in t)]
    if not tokens:
        return 0.0
    suspect = 0
    for token in tokens:
        core = "".join(c for c in token if c.isascii() and c.isalnum())
        digits = sum(c.isdigit() for c in core)
        confusable = sum(c in _CONFUSABLE for c in core)
        if digits >= 1 and confusable >= 1 and digits + confusable == len(core) and len(core) > 2:
            suspect += 1
    return suspect / len(tokens)


# What an OCR layer holds besides letters, digits and spaces: common punctuation, Latin and CJK.
# Any other character ("«", "*", "^", "|", "€", U+FFFD) is a symbol an OCR engine seldom
# writes, but a layer of symbol soup or mojibake is full of them ("«POAH «3E*»CM", "æˆªè‡³").
_PLAIN_MARKS = frozenset(".,;:!?'\"’‘“”()-–—/%&…·•，。、：；！？（）《》【】「」『』〈〉　－～")
_EDGES = "\"'“”‘’()[]{}<>«».,;:!?…-–—*•·"
# Measured (benchmarks/ocr_order.py --layers): generated symbol soup and font-cipher layers hold
# 0.18-0.19 of such symbols, Chinese mojibake 0.10-0.33; born-digital corpus pages 0.001 (median),
# 0.06 (95th percentile; leader dots, ornaments and code make the rest, and none of them is an
# OCR layer).
GARBLED_SYMBOLS = 0.08
# Words broken by spaces ("T h e mem o"): single letters other than "a", "A", "I" among the
# Latin words (generated: 0.41; the corpus: 0.00 median, 0.08 at the 95th percentile).
GARBLED_SINGLES = 0.2
# Case flipped inside words ("QuestiKn", "pypeO"): generated 0.21-0.41; the corpus: at most 0.08.
GARBLED_CASE = 0.15
_MIN_WORDS = 20  # Latin words needed before their shapes say anything
_LATIN1_MOJIBAKE = re.compile("[ÂÃ][\u0080-\u00bf]")  # UTF-8 read as Latin-1 or cp1252


@dataclass(frozen=True)
class LayerNoise:
    """How much of a text layer reads as garbage rather than words (shares, see `garbled`)."""

    symbols: float  # of its non-space characters: neither letter, digit nor common punctuation
    singles: float  # of its Latin words: single letters other than "a", "A", "I"
    case: float  # of its Latin words: a capital after a small letter ("QuestiKn")
    words: int  # its Latin words

    @property
    def garbled(self) -> bool:
        shapes = self.words >= _MIN_WORDS and (
            self.singles >= GARBLED_SINGLES or self.case >= GARBLED_CASE
        )
        return self.symbols >= GARBLED_SYMBOLS or shapes


def layer_noise(text: str) -> LayerNoise:
    """The garbage measures of a page's text (an OCR layer): symbol soup, mojibake and words
    broken apart, which the dictionary test (`knownote.read.wordlist`) needs a dictionary for
    and the digit test (`suspect_token_share`) does not see."""
    tokens = text.split()
    inked = sum(len(t) for t in tokens)
    symbols = sum(not (c.isalnum() or c in _PLAIN_MARKS) for t in tokens for c in t)
    symbols += 2 * len(_LATIN1_MOJIBAKE.findall(text))  # "Â·" for "·": letters and a mark
    words = [w for t in tokens if (w := t.strip(_EDGES)).isascii() and w.isalpha()]
    singles = sum(len(w) == 1 and w not in ("a", "A", "I") for w in words)
    case = sum(any(a.islower() and b.isupper() for a, b in pairwise(w)) for w in words)
    return LayerNoise(
        symbols / inked if inked else 0.0,
        singles / len(words) if words else 0.0,
        case / len(words) if words else 0.0,
        len(words),
    )
