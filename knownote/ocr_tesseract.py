"""Tesseract as the OCR engine: the `tesseract` program (Debian's `tesseract-ocr` and its
`tesseract-ocr-LANG` packs) run on one page image, its hOCR read back as lines with a box per
character.

Tesseract's hOCR with `hocr_char_boxes=1` gives, per recognised character, the columns its LSTM
recogniser read it from (`x_bboxes`); a character's box is those columns over the height of its
line, and a word space gets the gap between the words it separates. Tesseract writes a space
between CJK characters it reads as separate words; no space is put between two CJK characters
(Chinese and Japanese are written without them), so the canonical text reads as the page does.

The program runs with OMP_THREAD_LIMIT=1: on this machine's 2 shared cores, OpenMP threads spin
for each other (one page at 200 dpi took 19 s of CPU with 2 threads, 1.6 s with 1).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import unicodedata
import xml.etree.ElementTree as ET
from functools import cache

import numpy as np
from PIL import Image

from knownote.errors import KnowNoteError

Box = tuple[float, float, float, float]

_BBOX = re.compile(r"bbox (-?\d+) (-?\d+) (-?\d+) (-?\d+)")
_XBOXES = re.compile(r"x_bboxes (-?\d+) (-?\d+) (-?\d+) (-?\d+)")
_CONF = re.compile(r"x_wconf (\d+)")
_LINE_CLASSES = ("ocr_line", "ocr_caption", "ocr_header", "ocr_textfloat", "ocr_separator")


class TesseractMissing(KnowNoteError):
    """Tesseract, or one of the language packs asked for, is not installed."""


def binary() -> str | None:
    """The path of the `tesseract` program, or None when it is not installed."""
    return shutil.which("tesseract")


@cache
def installed_languages(program: str | None = None) -> frozenset[str]:
    """The language packs Tesseract can use here ("eng", "chi_sim", ...; not "osd")."""
    program = program or binary()
    if program is None:
        return frozenset()
    listed = subprocess.run(
        [program, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
    )
    lines = listed.stdout.splitlines()[1:]  # the first line says where they are
    return frozenset(ln.strip() for ln in lines if ln.strip() and ln.strip() != "osd")


def usable_languages(wanted: str) -> str:
    """The languages of `wanted` ("eng+chi_sim+jpn+kor") that are installed, "+"-joined;
    empty when none is."""
    have = installed_languages()
    return "+".join(lang for lang in wanted.split("+") if lang and lang in have)


def _is_cjk(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _png(image: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image).save(out, "PNG", compress_level=1)
    return out.getvalue()


def run_hocr(
    image: np.ndarray, languages: str, dpi: int | None = None, timeout: float = 600.0
) -> str:
    """Tesseract's hOCR of an RGB or grey uint8 image, with a box per character."""
    program = binary()
    if program is None:
        raise TesseractMissing(
            "Tesseract is not installed, so pages cannot be read with it. Install it "
            "(sudo apt-get install tesseract-ocr tesseract-ocr-eng) or set ocr_engine to "
            "rapidocr (env KNOWNOTE_OCR_ENGINE=rapidocr)."
        )
    langs = usable_languages(languages)
    if not langs:
        raise TesseractMissing(
            f"None of the OCR languages {languages!r} is installed for Tesseract (it has "
            f"{', '.join(sorted(installed_languages())) or 'none'}). Install a pack such as "
            "tesseract-ocr-eng, or change ocr_languages (env KNOWNOTE_OCR_LANGUAGES)."
        )
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    done = subprocess.run(
        [program, "stdin", "stdout", *(["--dpi", str(dpi)] if dpi else []), "-l", langs,
         "-c", "hocr_char_boxes=1", "hocr"],
        input=_png(image), capture_output=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise KnowNoteError(
            f"Tesseract could not read the page ({message[-1] if message else 'no message'}). "
            "Check the image, or set ocr_engine to rapidocr (env KNOWNOTE_OCR_ENGINE)."
        )
    return done.stdout.decode("utf-8")


def _classes(element: ET.Element) -> str:
    return element.get("class", "")


def _box(title: str, pattern: re.Pattern[str]) -> Box | None:
    found = pattern.search(title)
    return tuple(float(v) for v in found.groups()) if found else None  # type: ignore[return-value]


Line = tuple[str, Box, tuple[Box | None, ...], float]  # text, line box, char boxes, confidence


def parse_hocr(hocr: str) -> list[list[Line]]:
    """The lines of the hOCR grouped by paragraph, in Tesseract's reading order (its layout
    analysis finds columns and orders blocks, paragraphs and lines); each line is (text, line
    box, a box per character, confidence 0-1)."""
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", hocr, count=1))
    for element in root.iter():  # drop the XHTML namespace so paths stay short
        element.tag = element.tag.rsplit("}", 1)[-1]
    blocks = []
    for paragraph in root.iter("p"):
        lines = [
            line
            for element in paragraph.iter("span")
            if _classes(element) in _LINE_CLASSES and (line := _read_line(element)) is not None
        ]
        if lines:
            blocks.append(lines)
    return blocks


def _read_line(line: ET.Element) -> Line | None:
    line_box = _box(line.get("title", ""), _BBOX)
    if line_box is None:
        return None
    words = []
    for word in line.iter("span"):
        if _classes(word) != "ocrx_word":
            continue
        word_box = _box(word.get("title", ""), _BBOX)
        conf = _CONF.search(word.get("title", ""))
        chars = [
            (c.text or "", _box(c.get("title", ""), _XBOXES))
            for c in word.iter("span")
            if _classes(c) == "ocrx_cinfo"
        ]
        if not chars:  # no character boxes: the word's own text, its box divided evenly
            chars = [(ch, None) for ch in "".join(word.itertext()).strip()]
        chars = [(t, b) for t, b in chars if t and not t.isspace()]
        if chars and word_box is not None:
            words.append((chars, word_box, int(conf.group(1)) / 100 if conf else 0.0))
    return _line(words, line_box) if words else None


def _line(words: list[tuple[list[tuple[str, Box | None]], Box, float]], line: Box) -> Line:
    """One line's text and character boxes: characters over the line's height, word spaces
    between words (none between two CJK characters)."""
    y0, y1 = line[1], line[3]
    text: list[str] = []
    boxes: list[Box | None] = []
    for chars, word_box, _ in words:
        glyphs = _glyph_boxes(chars, word_box, y0, y1)
        if text and not (_is_cjk(text[-1]) and _is_cjk(glyphs[0][0])):
            prev, nxt = boxes[-1], glyphs[0][1]
            gap = (prev[2], y0, nxt[0], y1) if prev and nxt and nxt[0] > prev[2] else None
            text.append(" ")
            boxes.append(gap)
        for ch, box in glyphs:
            text.append(ch)
            boxes.append(box)
    confidence = sum(c for *_, c in words) / len(words)
    return "".join(text), line, tuple(boxes), confidence


def _glyph_boxes(
    chars: list[tuple[str, Box | None]], word: Box, y0: float, y1: float
) -> list[tuple[str, Box]]:
    """One (code point, box) per code point of a word: each character's recogniser columns over
    the line's height; where Tesseract gave none or a degenerate one, the word box divided
    evenly. A character of several code points gives each the same box."""
    n = len(chars)
    step = (word[2] - word[0]) / n
    out = []
    for i, (text, box) in enumerate(chars):
        if box is None or box[2] <= box[0] or box[0] < word[0] - step or box[2] > word[2] + step:
            box = (word[0] + i * step, y0, word[0] + (i + 1) * step, y1)
        else:
            box = (box[0], y0, box[2], y1)
        out.extend((ch, box) for ch in text)
    return out


def available(languages: str) -> bool:
    """Whether Tesseract and at least one of `languages` are installed."""
    return binary() is not None and bool(usable_languages(languages))
