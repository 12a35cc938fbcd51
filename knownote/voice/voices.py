"""Which voice speaks which language, and speaking a line with it.

INTERFACE FIRST DRAFT (the voices helper completes it): hibari's `heart` for English, espeak-ng for
everything else. Callers use only `voices_for`, `speak` and `SAMPLE_RATE`.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

import numpy as np

SAMPLE_RATE = 24_000


@dataclass(frozen=True)
class Voice:
    name: str  # 'heart', 'espeak-ng:de', …
    language: str  # the language it speaks: 'en', 'ja', 'de', …
    engine: str  # 'hibari', 'kokoro', 'espeak-ng'
    label: str  # what the view says about it
    neural: bool = True


HEART = Voice("heart", "en", "hibari", "Heart (hibari, American English)")


def voices_for(language: str, hosts: int = 1) -> tuple[Voice, ...]:
    """One voice per host for `language` (a host may share a voice when the language has one)."""
    if language == "en":
        return (HEART,) * hosts
    voice = Voice(
        f"espeak-ng:{language}", language, "espeak-ng", "espeak-ng (robotic fallback)", False
    )
    return (voice,) * hosts


@cache
def _hibari():
    from hibari import Hibari

    return Hibari()


def speak(text: str, voice: Voice) -> np.ndarray:
    """`text` spoken by `voice`: mono float32 samples in [-1, 1] at SAMPLE_RATE."""
    if voice.engine == "hibari":
        return np.asarray(_hibari()(text), dtype=np.float32)
    if shutil.which("espeak-ng") is None:
        raise RuntimeError("espeak-ng is not installed")
    wav = subprocess.run(
        ["espeak-ng", "-v", voice.language, "--stdout", text], check=True, capture_output=True
    ).stdout
    samples = np.frombuffer(wav[44:], dtype=np.int16).astype(np.float32) / 32768
    # espeak-ng speaks at 22,050 Hz
    positions = np.arange(0, len(samples), 22_050 / SAMPLE_RATE)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)
