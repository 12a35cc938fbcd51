"""The languages a text is written in, as ISO 639-1 codes ("en", "zh", "ja" …).

py3langid (BSD-3, a naive Bayes model over byte n-grams whose data ships inside the package)
reads samples spread over the text, so a document in two languages (a Chinese paper with an
English abstract and references, a bilingual contract) gets both, the main one first. A question
is read whole. Text with too few letters (tables of figures, a code listing) has no language.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

SAMPLES = 16  # windows read across a document
SAMPLE_CHARS = 600
MIN_LETTERS = 40  # fewer in a window: no language read from it
MIN_SHARE = 0.25  # a second language must hold this share of the windows read
MIN_QUESTION_LETTERS = 8  # "DPR?" or "42" says nothing of a language
# Dialects and scripts py3langid tells apart that are one language to a reader here.
DIALECTS = {"wuu": "zh", "yue": "zh", "nn": "no", "arz": "ar", "ary": "ar", "uzs": "uz"}
NO_LANGUAGE = "zxx"


NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "be": "Belarusian", "bg": "Bulgarian", "bn": "Bengali",
    "ca": "Catalan", "cs": "Czech", "cy": "Welsh", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian",
    "eu": "Basque", "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish",
    "gl": "Galician", "gu": "Gujarati", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian",
    "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "is": "Icelandic",
    "it": "Italian", "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh", "km": "Khmer",
    "kn": "Kannada", "ko": "Korean", "la": "Latin", "lt": "Lithuanian", "lv": "Latvian",
    "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian", "mr": "Marathi", "ms": "Malay",
    "my": "Burmese", "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "pa": "Punjabi",
    "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian", "sq": "Albanian", "sr": "Serbian",
    "sv": "Swedish", "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "th": "Thai",
    "tl": "Tagalog", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek",
    "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


def language_name(code: str) -> str:
    """ "Chinese" for "zh"; the code itself for a language without a name here."""
    return NAMES.get(code, code)


@functools.cache
def identifier():
    from py3langid.langid import LanguageIdentifier

    # Already restricted to the languages read here: no `set_languages`, which would copy it.
    ptc, pc, classes, nextmove, row, output = _model_arrays()
    return LanguageIdentifier(ptc, pc, classes, nextmove, output, tk_row=row)


NOT_READ = ("vo",)  # Volapük: tables of figures and names read as it


def _read_here(labels: Sequence[str]) -> list[str]:
    """Of py3langid's labels, those read here: two-letter codes but NOT_READ, and DIALECTS."""
    return [c for c in labels if (len(c) == 2 and c not in NOT_READ) or c in DIALECTS]


def _model_arrays() -> tuple:
    """py3langid's model as `set_languages(_read_here(labels))` leaves it, from a copy in the
    model cache whose two big arrays (the matrix, 24 MB; the tokenizer's transitions, 39 MB) are
    memory-mapped, not read: a text touches only the rows of its features and states.

    The package ships the model LZMA-compressed: unpacking it took 1.0-1.3 s of every process's
    first document or question (the longest step of a cold import before its embedding). A copy
    of the whole model, read and then restricted by `set_languages` (which copies the matrix),
    still took 0.14-0.25 s (median 0.15 s, CPU 0.17 s) for the first identifier; this copy,
    made once per machine, 0.020-0.037 s (median 0.022 s), and the identifier with a German and
    a Chinese document read 0.038 s against 0.17 s (2026-12-07, load 1.5-1.8, docs/benchmarks.md).
    Ranking is no slower: 640 German and Chinese paragraphs in 0.31-0.41 s of CPU, 0.37-0.44 s
    before.
    """
    from array import array

    import numpy as np
    from py3langid import __version__ as version  # importlib.metadata's look-up takes 5 ms
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier
    from py3langid.modelio import load_model

    from knownote.index.onnx_export import make_once
    from knownote.settings import Settings

    packed = MODEL_DIR / MODEL_FILE
    # The copy's name changes with the languages read here.
    chosen = hashlib.sha256(repr((sorted(DIALECTS), NOT_READ)).encode()).hexdigest()[:8]
    stem = f"py3langid-{version}-{packed.stat().st_size}-{chosen}"
    cache = Settings().model_cache

    @functools.cache  # unpacked once, whichever of the files is missing
    def restricted() -> dict:
        ptc, pc, classes, nextmove, row, output = load_model(packed)
        model = LanguageIdentifier(ptc, pc, classes, nextmove, output, tk_row=row)
        model.set_languages(_read_here(model.labels))
        return {
            # set_languages leaves it column by column: a feature's row is then 120 pages apart.
            "ptc": np.ascontiguousarray(model.nb_ptc),
            "pc": model.nb_pc,
            "classes": np.array(model.nb_classes),
            "nextmove": np.frombuffer(nextmove, dtype=nextmove.typecode),
            "row": np.frombuffer(row, dtype=row.typecode),
            "output": np.array(output),
        }

    def mapped(name: str):
        def save(tmp: Path) -> None:
            with tmp.open("wb") as file:  # np.save would add ".npy" to a path
                np.save(file, restricted()[name])

        return np.load(make_once(cache / f"{stem}-{name}.npy", save), mmap_mode="r")

    def save_small(tmp: Path) -> None:
        with tmp.open("wb") as file:
            np.savez(file, **{k: restricted()[k] for k in ("pc", "classes", "row", "output")})

    ptc, nextmove = mapped("ptc"), mapped("nextmove")
    with np.load(make_once(cache / f"{stem}.npz", save_small), allow_pickle=False) as data:
        return (
            ptc,
            data["pc"],
            data["classes"].tolist(),
            memoryview(nextmove),  # indexed byte by byte: a Python int each, as from an array
            array(data["row"].dtype.char, data["row"].tobytes()),
            data["output"].tolist(),
        )


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def language_of(text: str) -> str | None:
    """The language of a short text (a question); None when it has hardly any letters."""
    if _letters(text) < MIN_QUESTION_LETTERS:
        return None
    code, _ = identifier().classify(text)
    code = DIALECTS.get(code, code)
    return None if code == NO_LANGUAGE else code


def language_among(text: str, codes: Sequence[str], least: float = 0.0) -> str | None:
    """Of `codes`, the language `text` reads most like; None when it has hardly any letters,
    or when that language's probability is below `least` times the likeliest language's.
    Surer than `language_of` on a short text ("How does dense passage retrieval encode
    questions?" reads as French among all languages, as English against Chinese)."""
    if _letters(text) < MIN_QUESTION_LETTERS:
        return None
    ranked = identifier().rank(text)  # log-probabilities, best first
    for label, score in ranked:
        if (code := DIALECTS.get(label, label)) in codes:
            return code if math.exp(score - ranked[0][1]) >= least else None
    return None


def document_languages(text: str) -> tuple[str, ...]:
    """The languages of a document: the one most of it is in first, then any other that holds
    at least MIN_SHARE of the samples; () when no sample has enough letters."""
    if len(text) <= SAMPLES * SAMPLE_CHARS:
        windows = [text[i : i + SAMPLE_CHARS] for i in range(0, len(text), SAMPLE_CHARS)]
    else:
        step = (len(text) - SAMPLE_CHARS) / (SAMPLES - 1)
        windows = [text[round(i * step) : round(i * step) + SAMPLE_CHARS] for i in range(SAMPLES)]
    read = Counter(
        code
        for window in windows
        if _letters(window) >= MIN_LETTERS and (code := language_of(window)) is not None
    )
    total = sum(read.values())
    return tuple(
        code for i, (code, n) in enumerate(read.most_common()) if i == 0 or n >= MIN_SHARE * total
    )


def passage_languages(
    text: str, spans: Sequence[tuple[int, int]], languages: Sequence[str] | None
) -> list[str | None]:
    """The language of each passage `text[start:end]` of a document in `languages` (its
    `document_languages`): the main one, or for a document in several, the one each passage
    reads most like among them. None for all when the document has no language."""
    if not languages:
        return [None] * len(spans)
    if len(languages) == 1:
        return [languages[0]] * len(spans)
    return [language_among(text[a:b], languages) or languages[0] for a, b in spans]


# A question reads as a language of the notebook unless that language's posterior is below
# this: py3langid is sure of a German question being German (English ~1e-9), and unsure
# enough of an English one it reads as French (English ~0.01).
HELD_POSTERIOR = 1e-3


def question_language(text: str, held: Sequence[str]) -> str | None:
    """Of the notebook's languages `held`, the one the question is in; None when it reads as
    none of them (a German question over English and Chinese sources) or has hardly any
    letters. Remembered: one search asks it for its vector ranking and for that ranking's
    distribution, and a quoted answer asks it again."""
    return _question_language(text, tuple(held))


@functools.lru_cache(maxsize=256)
def _question_language(text: str, held: tuple[str, ...]) -> str | None:
    return language_among(text, held, HELD_POSTERIOR) if held else None
