"""Speech for tests: corpus text spoken by Debian's espeak-ng, and other containers via PyAV."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

GRAVITY_HILL = "docs/web_text/md_wikipedia_gravity_hill.md"
_LINK = re.compile(r"\[([^\]]*)\]\(<?[^)>]*>?\)")


def plain_paragraphs(markdown: str) -> list[str]:
    """The Markdown's body paragraphs as plain sentences (no links, emphasis or quotes)."""
    paragraphs = [p for p in markdown.split("\n\n") if p.strip() and p.lstrip()[0] not in "#>"]
    return [" ".join(_LINK.sub(r"\1", p).replace("**", "").split()) for p in paragraphs]


def speak(text: str, target: Path, words_per_minute: int = 160) -> Path:
    """`text` spoken into a WAV file by espeak-ng (the test is skipped when it is absent)."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs Debian's espeak-ng to make speech (apt-get install espeak-ng)")
    subprocess.run(
        ["espeak-ng", "-v", "en-us", "-s", str(words_per_minute), "-w", str(target), text],
        check=True,
        capture_output=True,
    )
    return target


def convert(wav: bytes, container: str, codec: str) -> bytes:
    """A WAV recording re-encoded by PyAV (e.g. "ogg"/"libopus", "flac"/"flac")."""
    import av

    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as source, av.open(out, "w", format=container) as target:
        rate = 48000 if codec == "libopus" else source.streams.audio[0].rate
        stream = target.add_stream(codec, rate=rate)
        stream.layout = "mono"
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=rate)
        for frame in source.decode(audio=0):
            for resampled in resampler.resample(frame):
                for packet in stream.encode(resampled):
                    target.mux(packet)
        for resampled in resampler.resample(None):
            for packet in stream.encode(resampled):
                target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    return out.getvalue()


def silence_wav(seconds: float = 5.0, rate: int = 16000) -> bytes:
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x00" * int(seconds * rate))
    return out.getvalue()


def with_video(wav: bytes, container: str = "webm") -> bytes:
    """The recording with a few grey frames of video beside it (WebM: VP8 and Opus), by PyAV."""
    import av
    import numpy as np

    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as source, av.open(out, "w", format=container) as target:
        seconds = source.duration / 1_000_000
        video = target.add_stream("libvpx", rate=2)
        video.width, video.height, video.pix_fmt = 64, 48, "yuv420p"
        audio = target.add_stream("libopus", rate=48000)
        audio.layout = "mono"
        resampler = av.AudioResampler(format=audio.format.name, layout="mono", rate=48000)
        for i in range(int(seconds * 2) + 1):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 128, np.uint8), format="rgb24")
            frame.pts = i
            for packet in video.encode(frame):
                target.mux(packet)
        for packet in video.encode(None):
            target.mux(packet)
        for frame in source.decode(audio=0):
            for resampled in resampler.resample(frame):
                for packet in audio.encode(resampled):
                    target.mux(packet)
        for packet in audio.encode(None):
            target.mux(packet)
    return out.getvalue()
