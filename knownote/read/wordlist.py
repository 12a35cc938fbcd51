"""How much of a reading a language's dictionary knows: the judge between an OCR layer and OCR.

The dictionaries are Tesseract's own: each installed language pack holds its word list as a
DAWG, which the `combine_tessdata` and `dawg2wordlist` programs of Debian's tesseract-ocr write
out as text (English: 338,080 words, Simplified Chinese: 59,047, in about half a second). They
are read once per process; without Tesseract there is no dictionary and nothing is judged.

`known_share` is the share of a text's words the dictionary knows: a word of letters (two or
more, any script written with spaces) counts when the dictionary has it as written, in lower
case or capitalised; a run of Han or kana counts character by character, a character known when
the dictionary's longest word starting there (by forward maximum matching) has two or more
characters, since a poor reading of Chinese is made of real characters in wrong words.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from knownote.read import tesseract

_WORD = re.compile(r"[^\W\d_]{2,}")
_LONGEST = 6  # characters: the longest CJK word looked up
_LOCK = threading.Lock()
_WORDS: dict[str, frozenset[str]] = {}


@dataclass(frozen=True)
class Known:
    known: int
    counted: int

    @property
    def share(self) -> float:
        return self.known / self.counted if self.counted else 1.0


def words(languages: str) -> frozenset[str]:
    """The words of the installed dictionaries of `languages` ("+"-joined); empty without them."""
    wanted = [lang for lang in tesseract.usable_languages(languages).split("+") if lang]
    with _LOCK:
        for lang in wanted:
            if lang not in _WORDS:
                _WORDS[lang] = _dictionary(lang)
        return frozenset().union(*(_WORDS[lang] for lang in wanted))


def _dictionary(lang: str) -> frozenset[str]:
    program = tesseract.binary()
    if program is None:
        return frozenset()
    folder = _tessdata(program)
    pack = folder / f"{lang}.traineddata" if folder else None
    if pack is None or not pack.exists():
        return frozenset()
    with tempfile.TemporaryDirectory(prefix="knownote-dict-") as tmp:
        prefix = Path(tmp) / lang
        try:
            subprocess.run(
                ["combine_tessdata", "-u", str(pack), f"{prefix}."],
                capture_output=True,
                timeout=60,
                check=False,
            )
            out = Path(tmp) / "words.txt"
            subprocess.run(
                [
                    "dawg2wordlist",
                    f"{prefix}.lstm-unicharset",
                    f"{prefix}.lstm-word-dawg",
                    str(out),
                ],
                capture_output=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):  # the programs are not installed
            return frozenset()
        if not out.exists():
            return frozenset()
        return frozenset(w for w in out.read_text("utf-8", "replace").split() if w)


def _tessdata(program: str) -> Path | None:
    listed = subprocess.run(
        [program, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
    )
    found = re.search(r'"(.+?)/?"', listed.stdout)
    return Path(found.group(1)) if found else None


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\u3040" <= ch <= "\u30ff"


def known_share(text: str, vocabulary: frozenset[str]) -> Known:
    """How many of the text's words (see the module's doc) the vocabulary knows."""
    known = counted = 0
    for word in _WORD.findall(text):
        if _cjk(word[0]):
            k, c = _cjk_known(word, vocabulary)
            known, counted = known + k, counted + c
            continue
        counted += 1
        known += word in vocabulary or word.lower() in vocabulary or word.capitalize() in vocabulary
    return Known(known, counted)


def _cjk_known(run: str, vocabulary: frozenset[str]) -> tuple[int, int]:
    known = counted = i = 0
    while i < len(run):
        if not _cjk(run[i]):
            i += 1
            continue
        length = next(
            (n for n in range(min(_LONGEST, len(run) - i), 1, -1) if run[i : i + n] in vocabulary),
            1,
        )
        counted += length
        known += length if length > 1 else 0
        i += length
    return known, counted
