"""A hand-made audio overview of two short sources (English and Japanese) with its audio, for the
player's, the transcript's, the view's and the browser's tests: a few short lines, spoken by
espeak-ng (fast, in every language), their times measured from the samples, encoded as
Ogg/Opus.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np

from knownote.answer.audio_overview import AudioLine, AudioOverview
from knownote.answer.report import ReportCite

ENGLISH = (
    "Gravity hills are places where a road seems to run uphill. "
    "A car left in neutral appears to roll up the slope. "
    "The effect is an optical illusion: the horizon is hidden, so the eye has no true level. "
    "Surveys show the road actually runs downhill."
)
JAPANESE = "重力の丘は目の錯覚です。車が坂を上るように見えます。実際には道は下り坂です。"
EN_TITLE = "Gravity <hill> & *roads*"  # specials that must be escaped
JA_TITLE = "重力の丘"
PAUSE = 0.25  # seconds of silence between lines


def _range(text: str, sentence: str) -> tuple[int, int]:
    start = text.index(sentence)
    return start, start + len(sentence)


def cites(en_id: int, ja_id: int) -> tuple[ReportCite, ...]:
    a, b = _range(ENGLISH, ENGLISH.split(". ")[2] + ".")
    span = _range(ENGLISH, "the horizon is hidden")
    c, d = _range(JAPANESE, "重力の丘は目の錯覚です。")
    e, f = _range(ENGLISH, "Surveys show the road actually runs downhill.")
    return (
        ReportCite(1, en_id, EN_TITLE, a, b, ENGLISH[a:b], span=span),
        ReportCite(2, ja_id, JA_TITLE, c, d, JAPANESE[c:d], span=(c, c + 4)),
        ReportCite(3, en_id, EN_TITLE, e, f, ENGLISH[e:f]),
    )


LINES = (
    AudioLine("Today: gravity hills.", 0, (), "Today: gravity hills."),
    AudioLine("The road only looks uphill [1].", 1, (1,), "The road only looks uphill."),
    AudioLine("重力の丘は目の錯覚です [2]。", 0, (2,), "重力の丘は目の錯覚です。"),
    AudioLine("Measured, it runs downhill [3] [1].", 1, (3, 1), "Measured, it runs downhill."),
)


def overview(
    notebook_id: int = 1, en_id: int = 1, ja_id: int = 2, overview_id: int | None = 7
) -> AudioOverview:
    """The overview without times or audio (as a script comes from its writer)."""
    return AudioOverview(
        id=overview_id,
        notebook_id=notebook_id,
        format="deep-dive",
        title="Gravity hills, in two languages",
        language="en",
        voices=("espeak-ng:en", "espeak-ng:en"),
        lines=LINES,
        cites=cites(en_id, ja_id),
        model="stand-in",
        focus="why the eye is fooled",
        dropped=1,
    )


@cache
def spoken() -> tuple[bytes, tuple[tuple[float, float], ...], float]:
    """The lines spoken (English and Japanese by espeak-ng) as Ogg/Opus bytes, each line's
    (start, end) in seconds, and the whole length."""
    from knownote.voice.encode import encode
    from knownote.voice.voices import SAMPLE_RATE, Voice, speak

    pieces, times, at = [], [], 0.0
    for line in LINES:
        language = "ja" if any("\u3040" <= ch <= "\u9fff" for ch in line.spoken) else "en"
        voice = Voice(f"espeak-ng:{language}", language, "espeak-ng", "espeak-ng", False)
        samples = speak(line.spoken, voice)
        times.append((at, at + len(samples) / SAMPLE_RATE))
        pieces += [samples, np.zeros(int(PAUSE * SAMPLE_RATE), dtype=np.float32)]
        at = times[-1][1] + PAUSE
    samples = np.concatenate(pieces)
    return encode(samples, "ogg"), tuple(times), len(samples) / SAMPLE_RATE


def timed(base: AudioOverview) -> tuple[AudioOverview, bytes]:
    """The overview with its lines' times and length, and its audio."""
    audio, times, seconds = spoken()
    lines = tuple(
        replace(line, start_s=a, end_s=b) for line, (a, b) in zip(base.lines, times, strict=True)
    )
    return replace(base, lines=lines, seconds=seconds), audio
