"""Tesseract as the OCR engine: the `tesseract` program (Debian's `tesseract-ocr` and its
`tesseract-ocr-LANG` packs) run on one page image, its hOCR read back as lines with a box per
character.

Tesseract's hOCR with `hocr_char_boxes=1` gives, per recognised character, the columns its LSTM
recogniser read it from (`x_bboxes`); a character's box is those columns over the height of its
line, and a word space gets the gap between the words it separates. Tesseract writes a space
between CJK characters it reads as separate words; no space is put between two Han or kana
characters (Chinese and Japanese are written without them; Korean keeps its word spaces), so the
canonical text reads as the page does.

The program runs with OMP_THREAD_LIMIT=1: on this machine's 2 shared cores, OpenMP threads spin
for each other (one page at 200 dpi took 19 s of CPU with 2 threads, 1.6 s with 1).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
import xml.etree.ElementTree as ET
from functools import cache
from itertools import pairwise
from pathlib import Path

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


def installed_languages() -> frozenset[str]:
    """The language packs Tesseract can use here ("eng", "chi_sim", ...; not "osd")."""
    program = binary()
    return frozenset() if program is None else _packs(program) - {"osd"}


@cache
def _packs(program: str) -> frozenset[str]:
    listed = subprocess.run(
        [program, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
    )
    lines = listed.stdout.splitlines()[1:]  # the first line says where they are
    return frozenset(ln.strip() for ln in lines if ln.strip())


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


def read_blocks(image: np.ndarray, languages: str, dpi: int | None = None) -> list[list[Line]]:
    """The lines Tesseract reads on an RGB uint8 image, grouped by paragraph in its reading
    order. Where its automatic layout analysis finds no text at all, the image is read again
    as one block of text: that analysis drops some short single-line images (a line of Korean
    set wide, in the tests) as non-text, which a photo of a label or a line can be."""
    blocks = parse_hocr(*run_tesseract(image, languages, dpi))
    return blocks or parse_hocr(*run_tesseract(image, languages, dpi, layout=6))


# Tesseract's script detection (OSD) names -> the language packs that read that script.
SCRIPT_LANGUAGES = {
    "Han": ("chi_sim", "chi_tra"),
    "Japanese": ("jpn",),
    "Katakana": ("jpn",),
    "Hiragana": ("jpn",),
    "Korean": ("kor",),
    "Hangul": ("kor",),
}
LATIN = frozenset({"Latin", "Cyrillic", "Greek"})  # scripts of alphabets written with spaces
_CJK_LANGUAGES = frozenset(lang for langs in SCRIPT_LANGUAGES.values() for lang in langs)
_SCRIPT = re.compile(r"^Script: (\S+)", re.MULTILINE)


def script(image: np.ndarray, dpi: int | None = None, timeout: float = 120.0) -> str | None:
    """The page's script as Tesseract's orientation and script detection names it ("Latin",
    "Han", "Japanese", "Korean", ...); None when it cannot tell (too few characters, or its
    osd pack is not installed)."""
    program = binary()
    if program is None or "osd" not in _packs(program):
        return None
    args = [program, "stdin", "stdout", *(["--dpi", str(dpi)] if dpi else []), "--psm", "0"]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            args, input=_png(image), capture_output=True, env=env, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return None
    found = _SCRIPT.search(done.stdout.decode("utf-8", "replace"))
    return found.group(1) if found else None


def languages_for(script_name: str | None, languages: str) -> str:
    """The installed languages of `languages` that read `script_name`: those of its script
    for Han, Japanese and Korean, the others (eng, ...) for any other script; all of them when
    the script is unknown or none of them fits."""
    wanted = [lang for lang in usable_languages(languages).split("+") if lang]
    if script_name is None:
        return languages
    if script_name in SCRIPT_LANGUAGES:
        fit = [
            lang for lang in wanted if lang.removesuffix("_vert") in SCRIPT_LANGUAGES[script_name]
        ]
    else:
        fit = [lang for lang in wanted if lang.removesuffix("_vert") not in _CJK_LANGUAGES]
    return "+".join(fit) if fit else languages


def _script_group(lang: str) -> str:
    base = lang.removesuffix("_vert")
    return next((k for k, v in SCRIPT_LANGUAGES.items() if base in v), "other")


def mixed(languages: str) -> bool:
    """Whether the installed ones of `languages` read more than one script (so the page's
    script decides which of them read it)."""
    return len({_script_group(lang) for lang in usable_languages(languages).split("+")}) > 1


def run_tesseract(
    image: np.ndarray,
    languages: str,
    dpi: int | None = None,
    layout: int = 3,
    timeout: float = 600.0,
) -> tuple[str, str]:
    """Tesseract's hOCR (with a box per character) and plain text of an RGB or grey uint8
    image, from one run; `layout` is its page segmentation mode (3: automatic, 6: one uniform
    block of text)."""
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
    with tempfile.TemporaryDirectory(prefix="knownote-ocr-") as folder:
        out = Path(folder) / "page"
        args = [program, "stdin", str(out), *(["--dpi", str(dpi)] if dpi else []), "-l", langs,
                "--psm", str(layout), "-c", "hocr_char_boxes=1", "hocr", "txt"]  # fmt: skip
        try:
            done = subprocess.run(
                args, input=_png(image), capture_output=True, env=env, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise KnowNoteError(
                f"Tesseract took more than {timeout:.0f} seconds on one page and was stopped. "
                "Import the file with a lower ocr_dpi, or split it."
            ) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise KnowNoteError(
                f"Tesseract could not read the page ({message[-1] if message else 'no message'}). "
                "Check the image, or set ocr_engine to rapidocr (env KNOWNOTE_OCR_ENGINE)."
            )
        return (
            out.with_suffix(".hocr").read_text("utf-8"),
            out.with_suffix(".txt").read_text("utf-8"),
        )


def _classes(element: ET.Element) -> str:
    return element.get("class", "")


def _box(title: str, pattern: re.Pattern[str]) -> Box | None:
    found = pattern.search(title)
    return tuple(float(v) for v in found.groups()) if found else None  # type: ignore[return-value]


Line = tuple[str, Box, tuple[Box | None, ...], float]  # text, line box, char boxes, confidence


def parse_hocr(hocr: str, plain: str | None = None) -> list[list[Line]]:
    """The lines of the hOCR grouped by paragraph, in Tesseract's reading order (its layout
    analysis finds columns and orders blocks, paragraphs and lines); each line is (text, line
    box, a box per character, confidence 0-1). `plain`, Tesseract's text output of the same
    run, says which words a space separates (hOCR splits a Korean word into several)."""
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", hocr, count=1))
    for element in root.iter():  # drop the XHTML namespace so paths stay short
        element.tag = element.tag.rsplit("}", 1)[-1]
    spaces = _Spaces(plain)
    blocks = []
    for paragraph in root.iter("p"):
        lines = [
            line
            for element in paragraph.iter("span")
            if _classes(element) in _LINE_CLASSES
            and (line := _read_line(element, spaces)) is not None
        ]
        if lines:
            blocks.append(lines)
    return blocks


class _Spaces:
    """Whether Tesseract's plain text puts a space before a word, found by walking the plain
    text's characters (whitespace left out) along the hOCR's words."""

    def __init__(self, plain: str | None) -> None:
        self.chars: list[str] = []
        self.before: list[bool] = []
        for i, ch in enumerate(plain or ""):
            if not ch.isspace():
                self.chars.append(ch)
                self.before.append(i > 0 and plain is not None and plain[i - 1] in " \t")
        self.text = "".join(self.chars)
        self.at = 0

    def space_before(self, word: str) -> bool | None:
        """True or False where the plain text has the word next, None where it was not found."""
        found = self.text.find(word, self.at, self.at + len(word) + 64)
        if found < 0:
            return None
        self.at = found + len(word)
        return self.before[found]


Word = tuple[list[tuple[str, Box | None]], Box, float, bool | None]


def _read_line(line: ET.Element, spaces: _Spaces) -> Line | None:
    line_box = _box(line.get("title", ""), _BBOX)
    if line_box is None:
        return None
    words: list[Word] = []
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
            space = spaces.space_before("".join(t for t, _ in chars))
            words.append((chars, word_box, int(conf.group(1)) / 100 if conf else 0.0, space))
    return _line(words, line_box) if words else None


def _line(words: list[Word], line: Box) -> Line:
    """One line's text and character boxes: characters over the line's height, left to right
    without overlap, and a space between words where Tesseract's plain text has one (never
    between two Han or kana characters; between all words where the plain text is unknown),
    with the gap between the words as its box."""
    y0, y1 = line[1], line[3]
    text: list[str] = []
    spans: list[list[float] | None] = []
    for chars, word_box, _, space in words:
        glyphs = _glyph_boxes(chars, word_box, y0, y1)
        if text and space is not False and not _no_space_between(text[-1], glyphs[0][0]):
            text.append(" ")
            spans.append(None)
        for ch, box in glyphs:
            text.append(ch)
            spans.append([box[0], box[2]])
    inked = [s for s in spans if s is not None]
    for a, b in pairwise(inked):  # neighbours whose columns overlap meet halfway
        if b[0] < a[1]:
            a[1] = b[0] = (a[1] + b[0]) / 2
    if any(x1 <= x0 for x0, x1 in inked) or any(a[1] > b[0] for a, b in pairwise(inked)):
        step = (line[2] - line[0]) / len(text)  # no sane order: the line divided evenly
        spans = [None if ch == " " else [line[0] + i * step, line[0] + (i + 1) * step]
                 for i, ch in enumerate(text)]  # fmt: skip
    boxes: list[Box | None] = [None if sp is None else (sp[0], y0, sp[1], y1) for sp in spans]
    for i, ch in enumerate(text):  # a word space: the gap between its neighbours
        a, b = boxes[i - 1] if i else None, boxes[i + 1] if i + 1 < len(boxes) else None
        if ch == " " and a is not None and b is not None and b[0] > a[2]:
            boxes[i] = (a[2], y0, b[0], y1)
    confidence = sum(w[2] for w in words) / len(words)
    return "".join(text), line, tuple(boxes), confidence


def _glyph_boxes(
    chars: list[tuple[str, Box | None]], word: Box, y0: float, y1: float
) -> list[tuple[str, Box]]:
    """One (code point, box) per code point of a word: each character's recogniser columns over
    the line's height, neighbours that overlap (the LSTM's columns for "ju" do) cut where their
    overlap is halved; where Tesseract gave no sane box for a character, the word box divided
    evenly. A character of several code points gives each the same box."""
    spans = _columns(chars, word)
    return [
        (ch, (x0, y0, x1, y1))
        for (text, _), (x0, x1) in zip(chars, spans, strict=True)
        for ch in text
    ]


def _columns(chars: list[tuple[str, Box | None]], word: Box) -> list[tuple[float, float]]:
    n = len(chars)
    step = (word[2] - word[0]) / n
    even = [(word[0] + i * step, word[0] + (i + 1) * step) for i in range(n)]
    boxes = [box for _, box in chars]
    if any(
        b is None or b[2] <= b[0] or b[0] < word[0] - step or b[2] > word[2] + step for b in boxes
    ):
        return even
    spans = [[b[0], b[2]] for b in boxes if b is not None]
    for a, b in pairwise(spans):
        if b[0] < a[1]:
            a[1] = b[0] = (a[1] + b[0]) / 2
    if any(x1 <= x0 for x0, x1 in spans) or any(a[1] > b[0] for a, b in pairwise(spans)):
        return even
    return [(x0, x1) for x0, x1 in spans]


def _no_space_between(a: str, b: str) -> bool:
    """Two characters of a script written without word spaces (Han, kana; not Hangul)."""
    return _unspaced(a) and _unspaced(b)


def _unspaced(ch: str) -> bool:
    hangul = "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f"
    return _is_cjk(ch) and not hangul


def available(languages: str) -> bool:
    """Whether Tesseract and at least one of `languages` are installed."""
    return binary() is not None and bool(usable_languages(languages))
