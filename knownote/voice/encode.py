"""Speech samples to audio files and back, with PyAV (FFmpeg's libopus, libmp3lame; no ffmpeg
program needed).

Ogg/Opus at ~32 kbit/s is the kept format: speech at that rate is clear, a 10-minute overview is
~2.4 MB. MP3 (~64 kbit/s) is for players without Opus, WAV (16-bit PCM) for editing. Opus only
works at 48 kHz, so the samples are resampled up on the way in and back down on the way out; the
decoder drops the encoder's pre-skip, so the decoded audio lasts as long as the samples did (to a
few milliseconds of padding at the end).
"""

from __future__ import annotations

import io
import wave

import numpy as np

from knownote.errors import UnreadableFile

SAMPLE_RATE = 24_000  # the voices' rate (voices.SAMPLE_RATE imports it from here)
FORMATS = ("ogg", "mp3", "wav")
MIME_TYPES = {"ogg": "audio/ogg", "mp3": "audio/mpeg", "wav": "audio/wav"}
# container, codec, the codec's sample rate, bits per second
_CODECS = {
    "ogg": ("ogg", "libopus", 48_000, 32_000),
    "mp3": ("mp3", "libmp3lame", SAMPLE_RATE, 64_000),
}
_CHUNK = 24_000  # samples handed to the encoder at a time
_SILENCE = SAMPLE_RATE // 50  # what no samples are encoded as: one 20 ms Opus frame of silence


def _frames(samples: np.ndarray, rate: int):
    import av

    for start in range(0, len(samples), _CHUNK):
        frame = av.AudioFrame.from_ndarray(
            samples[start : start + _CHUNK].reshape(1, -1), format="flt", layout="mono"
        )
        frame.sample_rate = rate
        yield frame


def resample(samples: np.ndarray, rate: int, to: int = SAMPLE_RATE) -> np.ndarray:
    """Mono float32 `samples` at `rate` Hz, at `to` Hz (FFmpeg's resampler)."""
    import av

    samples = np.ascontiguousarray(samples, dtype=np.float32)
    if rate == to or not len(samples):
        return samples
    resampler = av.AudioResampler(format="flt", layout="mono", rate=to)
    out = [
        f.to_ndarray().ravel()
        for frame in _frames(samples, rate)
        for f in resampler.resample(frame)
    ]
    out += [f.to_ndarray().ravel() for f in resampler.resample(None)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def encode(samples: np.ndarray, fmt: str) -> bytes:
    """Mono float32 `samples` at SAMPLE_RATE as the bytes of an audio file.

    Args:
        samples: speech in [-1, 1] (louder is clipped).
        fmt: "ogg" (Opus), "mp3" or "wav" (16-bit PCM).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown audio format {fmt!r}; one of {', '.join(FORMATS)}")
    samples = np.clip(np.asarray(samples, dtype=np.float32).ravel(), -1.0, 1.0)
    if not len(samples):  # an Ogg file of no audio is not one FFmpeg reads back
        samples = np.zeros(_SILENCE, np.float32)
    out = io.BytesIO()
    if fmt == "wav":
        with wave.open(out, "wb") as target:
            target.setnchannels(1)
            target.setsampwidth(2)
            target.setframerate(SAMPLE_RATE)
            target.writeframes((samples * 32767).round().astype("<i2").tobytes())
        return out.getvalue()
    import av

    container, codec, rate, bits = _CODECS[fmt]
    with av.open(out, "w", format=container) as target:
        stream = target.add_stream(codec, rate=rate)
        stream.layout = "mono"
        stream.bit_rate = bits
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=rate)
        for frame in [*_frames(samples, SAMPLE_RATE), None]:
            for resampled in resampler.resample(frame):
                target.mux(stream.encode(resampled))
        target.mux(stream.encode(None))
    return out.getvalue()


def _decoded(data: bytes):
    """The audio in `data` as mono float32 frames at SAMPLE_RATE."""
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
    try:
        with av.open(io.BytesIO(data)) as source:
            if not source.streams.audio:
                raise UnreadableFile("The file has no audio in it.")
            for frame in source.decode(audio=0):
                yield from resampler.resample(frame)
            yield from resampler.resample(None)
    except av.FFmpegError as error:
        raise UnreadableFile(f"The audio could not be read ({error}).") from error


def decode(data: bytes) -> np.ndarray:
    """The audio file `data` (any of FORMATS, or what FFmpeg reads) as mono float32 samples at
    SAMPLE_RATE."""
    parts = [frame.to_ndarray().ravel() for frame in _decoded(data)]
    return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


def duration(data: bytes) -> float:
    """Seconds of audio in the file `data`, as decoded (without Opus's pre-skip)."""
    return sum(frame.samples for frame in _decoded(data)) / SAMPLE_RATE
