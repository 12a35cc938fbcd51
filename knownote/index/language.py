"""The languages a text is written in, as ISO 639-1 codes ("en", "zh", "ja" …).

py3langid (BSD-3, a naive Bayes model over byte n-grams whose data ships inside the package)
reads samples spread over the text, so a document in two languages (a Chinese paper with an
English abstract and references, a bilingual contract) gets both, the main one first. A question
is read whole. Text with too few letters (tables of figures, a code listing) has no language.
"""

from __future__ import annotations

import functools
import importlib.metadata
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

    ptc, pc, classes, nextmove, row, output = _model_arrays()
    identifier = LanguageIdentifier(ptc, pc, classes, nextmove, output, tk_row=row)
    # Two-letter codes, without Volapük (tables of figures and names read as it).
    identifier.set_languages(
        [c for c in identifier.labels if (len(c) == 2 and c != "vo") or c in DIALECTS]
    )
    return identifier


def _model_arrays() -> tuple:
    """py3langid's model as its loader gives it, from an uncompressed copy in the model cache.

    The package ships the model LZMA-compressed: unpacking it took 1.0-1.3 s of every process's
    first document or question (the longest step of a cold import before its embedding); the
    copy, made once per machine, loads in 0.25-0.5 s (measured with other work on both cores).
    """
    from array import array

    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE
    from py3langid.modelio import load_model

    from knownote.index.onnx_export import make_once
    from knownote.settings import Settings

    packed = MODEL_DIR / MODEL_FILE
    version = importlib.metadata.version("py3langid")
    copy = Settings().model_cache / f"py3langid-{version}-{packed.stat().st_size}.npz"

    def unpack(tmp: Path) -> None:
        ptc, pc, classes, nextmove, row, output = load_model(packed)
        with tmp.open("wb") as file:  # np.savez would add ".npz" to a path
            np.savez(file, ptc=ptc, pc=pc, classes=np.array(classes), output=np.array(output),
                     nextmove=np.frombuffer(nextmove, dtype=nextmove.typecode),
                     row=np.frombuffer(row, dtype=row.typecode))  # fmt: skip

    with np.load(make_once(copy, unpack), allow_pickle=False) as data:
        return (
            data["ptc"],
            data["pc"],
            data["classes"].tolist(),
            array(data["nextmove"].dtype.char, data["nextmove"].tobytes()),
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
