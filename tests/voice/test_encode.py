from __future__ import annotations

import io

import av
import numpy as np
import pytest

from knownote.errors import UnreadableFile
from knownote.voice.encode import FORMATS, SAMPLE_RATE, decode, duration, encode


def tone(seconds: float) -> np.ndarray:
    t = np.arange(round(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t) * np.sin(2 * np.pi * 1.5 * t)).astype(np.float32)


def stream_of(data: bytes):
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        return stream.codec_context.name, stream.rate, stream.channels, container.format.name


@pytest.mark.parametrize("fmt", FORMATS)
def test_audio_comes_back_as_long_as_it_went_in(fmt):
    samples = tone(2.3456)
    back = decode(encode(samples, fmt))
    assert back.dtype == np.float32
    assert abs(len(back) - len(samples)) / SAMPLE_RATE <= 0.03  # Opus's pre-skip and padding
    assert duration(encode(samples, fmt)) == pytest.approx(len(back) / SAMPLE_RATE)
    n = min(len(back), len(samples))
    assert np.corrcoef(back[:n], samples[:n])[0, 1] > 0.95  # the same sound, not shifted


def test_japanese_speech_survives_opus(japanese_speech):
    back = decode(encode(japanese_speech, "ogg"))
    assert abs(len(back) - len(japanese_speech)) / SAMPLE_RATE <= 0.03
    n = min(len(back), len(japanese_speech))
    assert np.corrcoef(back[:n], japanese_speech[:n])[0, 1] > 0.9


def test_each_format_is_what_it_says():
    samples = tone(10.0)
    ogg, mp3, wav = (encode(samples, fmt) for fmt in ("ogg", "mp3", "wav"))
    assert stream_of(ogg) == ("opus", 48_000, 1, "ogg")
    assert stream_of(mp3)[::2] == ("mp3float", 1) and stream_of(wav)[:2] == (
        "pcm_s16le",
        SAMPLE_RATE,
    )
    assert 20_000 < len(ogg) * 8 / 10 < 45_000  # ~32 kbit/s: speech
    assert 50_000 < len(mp3) * 8 / 10 < 80_000  # ~64 kbit/s


def test_no_samples_are_a_moment_of_silence():
    back = decode(encode(np.zeros(0, np.float32), "ogg"))
    assert len(back) / SAMPLE_RATE <= 0.03 and not np.abs(back).max() > 0.01


def test_louder_than_full_scale_is_clipped_not_wrapped():
    back = decode(encode(np.full(2400, 3.0, np.float32), "wav"))
    assert back.max() == pytest.approx(1.0, abs=1e-3) and back.min() > 0


def test_what_is_not_audio_is_an_unreadable_file():
    with pytest.raises(UnreadableFile):
        decode(b"not audio at all")
    with pytest.raises(ValueError, match="ogg, mp3, wav"):
        encode(tone(0.1), "flac")
