"""Audio overviews of a notebook, kept with their lines, citations and audio.

`keep`, `kept`, `kept_overviews` and `delete_overview` keep a
`knownote.answer.audio_overview.AudioOverview` in the database (knownote.store.audio_overviews)
and read it back with each citation re-checked as a report's are (`reports.checked_cites`): stale
when its source is gone or its text no longer holds the quote at `[start, end)`. The audio bytes
(Ogg/Opus) are `store.read_file(overview.audio_sha256)`.
"""

from __future__ import annotations

from knownote.answer.audio_overview import AudioLine, AudioOverview
from knownote.answer.report import ReportCite
from knownote.store import audio_overviews as kept_store
from knownote.store.audio_overviews import KeptAudio, KeptAudioLine
from knownote.store.db import Store
from knownote.study.reports import checked_cites, kept_cites


def keep(store: Store, overview: AudioOverview) -> int:
    """Keep an overview whose audio is already a kept file (`store.save_file`); its id.
    NotFound when its notebook was deleted meanwhile."""
    head = KeptAudio(
        None, overview.notebook_id, overview.format, overview.title, overview.language,
        tuple(overview.voices), overview.model, overview.focus, overview.length,
        overview.dropped, overview.audio_sha256, overview.seconds,
        tuple(overview.document_ids), None,
    )  # fmt: skip
    lines = [
        KeptAudioLine(x.text, x.speaker, tuple(x.cites), x.spoken, x.start_s, x.end_s)
        for x in overview.lines
    ]
    return kept_store.save_overview(store, head, lines, kept_cites(overview.cites))


def kept(store: Store, overview_id: int) -> AudioOverview:
    """A kept overview, each citation marked stale when its source is gone or changed.
    NotFound when there is no such overview."""
    k = kept_store.kept_overview(store, overview_id)
    return _overview(k, checked_cites(store, k.cites))


def kept_overviews(store: Store, notebook_id: int) -> list[AudioOverview]:
    """The notebook's kept overviews, the newest first, without their lines and citations (to
    list them; `kept` reads one whole)."""
    return [_overview(k, ()) for k in kept_store.overview_heads(store, notebook_id)]


def delete_overview(store: Store, overview_id: int) -> None:
    """Delete a kept overview and, once nothing else uses it, its audio file; NotFound when it
    is already gone."""
    kept_store.delete_overview(store, overview_id)


def _overview(k: KeptAudio, cites: tuple[ReportCite, ...]) -> AudioOverview:
    return AudioOverview(
        id=k.id,
        notebook_id=k.notebook_id,
        format=k.format,
        title=k.title,
        language=k.language,
        voices=k.voices,
        lines=tuple(
            AudioLine(x.text, x.speaker, x.cites, x.spoken, x.start_s, x.end_s) for x in k.lines
        ),
        cites=cites,
        model=k.model,
        focus=k.focus,
        length=k.length,
        dropped=k.dropped,
        document_ids=k.document_ids,
        audio_sha256=k.audio_sha256,
        seconds=k.seconds,
        made_at=k.made_at,
    )
