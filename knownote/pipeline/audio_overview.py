"""Making an audio overview: its script written, each line spoken, the audio encoded and kept.

The script comes from `knownote.study.audio_script.write_script` (two hosts talking, written by an
answer model, or a read-aloud brief of quotes without one). Each line's `spoken` text is said by
its host's voice (`knownote.voice`), the lines joined with short pauses (a longer one where the
talk moves on to other sources), and each line's time range in the joined audio recorded: from
its first sample to the start of the next line, so the ranges cover the audio without gaps. The
audio is encoded as Ogg/Opus, kept beside the imported files by its hash, and the overview kept
(knownote.study.audio_overviews). Speaking is CPU-heavy: each voice is loaded once and the lines
are spoken in order, one at a time: with both English hosts on hibari, a 5-minute overview is
spoken in seconds (benchmarks/audio_overview.py; docs/voices.md), so the threads it measures
beside that are not worth their cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from knownote.answer.audio_overview import (
    FORMAT_NAMES,
    FORMATS,
    LENGTHS,
    WRITTEN_FORMATS,
    AudioOverview,
)
from knownote.answer.cite import strip_marks
from knownote.errors import KnowNoteError
from knownote.store.db import Store
from knownote.voice import voices

if TYPE_CHECKING:
    from knownote.answer.prompts import Chat
    from knownote.index.embed import Embedder

Progress = Callable[[str, int, int], None]

PAUSE_S = 0.35  # between two lines
TOPIC_PAUSE_S = 0.9  # before a line that moves on to other sources
VOICE_CHANGE_S = 0.15  # inside a line, where a quote in another language begins or ends
ONE_HOST = ("brief", "read-aloud")  # formats spoken by one voice


@dataclass(frozen=True)
class AudioRequest:
    """A queued audio overview: which format, of what, steered how, by which model (see
    `ImportWorker.queue_audio_overview`)."""

    format: str
    document_ids: tuple[int, ...] = ()
    focus: str = ""
    length: str = "default"
    language: str | None = None  # None: the sources' main language
    llm: Chat | None = None
    model: str | None = None


def make_audio_overview(
    store: Store,
    notebook_id: int,
    request: AudioRequest,
    progress: Progress,
    *,
    embedder: Embedder | None = None,
) -> tuple[AudioOverview, int, list[str]]:
    """Make an audio overview as asked and keep it: (the overview, its id, what to tell of it,
    its length and lines dropped first). Without a model a written format is made as the
    read-aloud brief, and the notes say so. A KnowNoteError, in words, when there is nothing
    to say."""
    script, notes = script_for(store, notebook_id, request, progress, embedder=embedder)
    overview, overview_id, said = speak_and_keep(store, script, progress)
    return overview, overview_id, said + notes


def script_for(
    store: Store,
    notebook_id: int,
    request: AudioRequest,
    progress: Progress,
    *,
    embedder: Embedder | None = None,
) -> tuple[AudioOverview, list[str]]:
    """The overview's script (no times, no audio) and what to tell of how it was written."""
    from knownote.study.audio_script import write_script  # here: it loads the answer libraries

    check_request(request)
    notes = []
    format = request.format
    if format in WRITTEN_FORMATS and (request.llm is None or not request.model):
        notes.append(
            f"No answer model is connected, so this is the {FORMAT_NAMES['read-aloud'].lower()} "
            f"instead of a {FORMAT_NAMES[format]}: the sources' central sentences read as "
            "quotes, not a summary. Connect a model for a conversation."
        )
        format = "read-aloud"
    script = write_script(
        store, notebook_id, format=format, llm=request.llm, model=request.model,
        document_ids=request.document_ids, focus=request.focus, length=request.length,
        language=request.language, progress=progress, embedder=embedder,
    )  # fmt: skip
    return script, notes


def check_request(request: AudioRequest) -> None:
    """A KnowNoteError, in words, for a format or length there is none of."""
    if request.format not in FORMATS:
        raise KnowNoteError(
            f"There is no audio overview format “{request.format}”; choose one of "
            f"{', '.join(FORMATS)}."
        )
    if request.length not in LENGTHS:
        raise KnowNoteError(
            f"There is no length “{request.length}”; choose one of {', '.join(LENGTHS)}."
        )


def speak_and_keep(
    store: Store, script: AudioOverview, progress: Progress
) -> tuple[AudioOverview, int, list[str]]:
    """Speak a script, encode and keep its audio, keep the overview: (the overview, its id,
    [its length and how many written lines were dropped])."""
    if not script.lines:
        raise KnowNoteError("The script has no line to speak: there is no audio overview to make.")
    spoken, samples = speak_script(script, progress)
    progress("Encoding the audio", len(script.lines), len(script.lines))
    data, seconds = encode_ogg(samples)
    last = replace(spoken.lines[-1], end_s=max(seconds, spoken.lines[-1].start_s or 0.0))
    spoken = replace(spoken, lines=(*spoken.lines[:-1], last), seconds=seconds)
    from knownote.study.audio_overviews import keep  # here: it loads the study stage

    progress("Keeping the audio overview", len(script.lines), len(script.lines))
    with store.lock:  # the file is never without its row for a discard to see
        digest = store.save_file(data)
        spoken = replace(spoken, audio_sha256=digest)
        try:
            overview_id = keep(store, spoken)
        except BaseException:
            store.discard_file_if_unused(digest)
            raise
    return replace(spoken, id=overview_id), overview_id, [length_note(spoken)]


def length_note(overview: AudioOverview) -> str:
    """What the job says it made: "4:58 of audio, 40 lines; 3 written lines dropped (…)"."""
    minutes, seconds = divmod(round(overview.seconds), 60)
    lines = f"{len(overview.lines)} line{'s' * (len(overview.lines) != 1)}"
    dropped = (
        f"{overview.dropped} written line{'s' * (overview.dropped != 1)} dropped (citing no "
        "passage given, or with no close match)"
        if overview.dropped
        else "no written line dropped"
    )
    return f"{minutes}:{seconds:02d} of audio, {lines}; {dropped}"


def speak_script(script: AudioOverview, progress: Progress) -> tuple[AudioOverview, np.ndarray]:
    """Each line spoken by its host's voice, in order, joined with pauses: (the overview with
    its voices, each line's time range and its length; the samples at `voices.SAMPLE_RATE`)."""
    hosts = voices.voices_for(script.language, 1 if script.format in ONE_HOST else 2)
    pauses = line_pauses(script)
    rate = voices.SAMPLE_RATE
    pieces: list[np.ndarray] = []
    starts: list[int] = []
    at = 0
    total = len(script.lines)
    for i, line in enumerate(script.lines):
        progress(f"Speaking line {i + 1} of {total}", i, total)
        text = line.spoken or strip_marks(line.text)
        # A quote in another language than the talk's is said by a voice of its own language.
        said = spoken_line(text, hosts[min(line.speaker, len(hosts) - 1)])
        if i:
            gap = np.zeros(round(pauses[i] * rate), dtype=np.float32)
            pieces.append(gap)
            at += len(gap)
        starts.append(at)
        pieces.append(np.asarray(said, dtype=np.float32))
        at += len(said)
    samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
    ends = [*starts[1:], len(samples)]
    lines = tuple(
        replace(line, start_s=a / rate, end_s=b / rate)
        for line, a, b in zip(script.lines, starts, ends, strict=True)
    )
    overview = replace(
        script, lines=lines, voices=tuple(v.name for v in hosts), seconds=len(samples) / rate
    )
    return overview, samples


def spoken_line(text: str, host: voices.Voice) -> np.ndarray:
    """One line's samples: each piece said by its own voice, a short pause where it changes."""
    said: list[np.ndarray] = []
    for piece, voice in voices.voiced_pieces(text, host):
        if said:
            said.append(np.zeros(round(VOICE_CHANGE_S * voices.SAMPLE_RATE), dtype=np.float32))
        said.append(voices.speak(piece, voice))
    return np.concatenate(said) if said else np.zeros(0, dtype=np.float32)


def line_pauses(script: AudioOverview) -> list[float]:
    """The pause before each line: longer where the talk moves on to other sources (a line that
    cites none belongs with the next that does: a source's introduction with its quotes)."""
    documents: dict[int, int] = {c.n: c.document_id for c in script.cites}
    cited: list[frozenset[int]] = [
        frozenset(documents[n] for n in line.cites if n in documents) for line in script.lines
    ]
    for i in range(len(cited) - 2, -1, -1):
        cited[i] = cited[i] or cited[i + 1]
    return [
        TOPIC_PAUSE_S
        if i and cited[i] and cited[i - 1] and not cited[i] & cited[i - 1]
        else PAUSE_S
        for i in range(len(cited))
    ]


def encode_ogg(samples: np.ndarray) -> tuple[bytes, float]:
    """Ogg/Opus bytes of mono samples at `voices.SAMPLE_RATE`, and the seconds they decode to
    (the player's clock: a few milliseconds of the codec's padding off the samples' length)."""
    from knownote.voice.encode import duration, encode

    data = encode(samples, "ogg")
    return data, duration(data)
