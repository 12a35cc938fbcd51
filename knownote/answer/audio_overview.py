"""The record of an audio overview: spoken lines whose `[n]` marks name exact ranges of the sources.

An overview's script is written by `knownote.study.audio_script` (two hosts talking, from a model,
or a read-aloud brief of quotes without one), spoken line by line by `knownote.voice`, and kept by
`knownote.store.audio_overviews` with its audio (by hash, beside the imported files). Each line
keeps the time range it is heard at, so the player marks the line being spoken and a click on a
line plays from there. A citation is a `ReportCite`: a range of a source's canonical text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from knownote.answer.report import ReportCite

# Written by an answer model: two hosts (deep-dive, debate) or one (brief), each line checked.
WRITTEN_FORMATS = ("brief", "deep-dive", "debate")
# Without a model: each source introduced by its title, then its central sentences read as quotes.
QUOTED_FORMATS = ("read-aloud",)
FORMATS = WRITTEN_FORMATS + QUOTED_FORMATS
FORMAT_NAMES = {
    "brief": "Brief",
    "deep-dive": "Deep Dive",
    "debate": "Debate",
    "read-aloud": "Read-aloud brief (quotes)",
}
LENGTHS = ("short", "default", "long")


@dataclass(frozen=True)
class AudioLine:
    """One spoken line: what a host says, with its marks, and when it is heard."""

    text: str  # as shown, with its marks in the canonical form `[n]`
    speaker: int = 0  # 0 for the first host, 1 for the second
    cites: tuple[int, ...] = ()  # the numbers of the marks in `text`, in order
    # What the voice says: the text without marks (a quote's "From Title, page 4:" included).
    spoken: str = ""
    start_s: float | None = None  # when the line starts in the audio; None until spoken
    end_s: float | None = None


@dataclass(frozen=True)
class AudioOverview:
    id: int | None  # None until kept
    notebook_id: int
    format: str  # one of FORMATS
    title: str
    language: str  # the language it is spoken in ('en', 'ja', 'de', …)
    voices: tuple[str, ...]  # one voice name per host
    lines: tuple[AudioLine, ...]
    cites: tuple[ReportCite, ...]
    model: str | None = None  # the answer model that wrote it; None for a read-aloud brief
    focus: str = ""  # what the listener asked it to dwell on
    length: str = "default"  # one of LENGTHS
    dropped: int = 0  # written lines left out: no mark to a passage given, or no close match
    document_ids: tuple[int, ...] = ()  # the sources it was made from
    audio_sha256: str | None = None  # the Ogg/Opus audio among the stored files
    seconds: float = 0.0  # the audio's length
    made_at: datetime | None = None

    def cite(self, n: int) -> ReportCite:
        for cite in self.cites:
            if cite.n == n:
                return cite
        raise KeyError(n)
