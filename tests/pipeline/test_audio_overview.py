"""Making an audio overview: a script's lines spoken by real voices, joined, timed, encoded as
Ogg/Opus and kept; and the same through the worker's queue, with progress per line spoken."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest

import knownote.pipeline.audio_overview as making
from knownote.answer.audio_overview import AudioLine, AudioOverview
from knownote.answer.report import ReportCite
from knownote.errors import KnowNoteError
from knownote.pipeline.audio_overview import (
    PAUSE_S,
    TOPIC_PAUSE_S,
    VOICE_CHANGE_S,
    AudioRequest,
    line_pauses,
    speak_and_keep,
    spoken_line,
)
from knownote.pipeline.worker import ImportWorker
from knownote.store.check import check_store
from knownote.store.jobs import AUDIO_OVERVIEW, CANCELLED, FAILED, IMPORTED, JobQueue
from knownote.study.audio_overviews import kept, kept_overviews
from knownote.voice.encode import SAMPLE_RATE, decode
from knownote.voice.voices import HEART, speak, voices_for

QUOTE = "重力の丘は目の錯覚です。"


def script(notebook_id: int) -> AudioOverview:
    """Two English hosts, one of whom reads a Japanese quote; one written line was dropped."""
    cites = (
        ReportCite(1, 1, "Gravity hill", 0, 27, "The road only looks uphill."),
        ReportCite(2, 2, "重力の丘", 0, len(QUOTE), QUOTE),
    )
    lines = (
        AudioLine("Today: gravity hills.", 0, (), "Today: gravity hills."),
        AudioLine("The road only looks uphill [1].", 1, (1,), "The road only looks uphill."),
        AudioLine(f"{QUOTE} [2]", 0, (2,), QUOTE),
        AudioLine("So it is the eye [1].", 1, (1,), "So it is the eye."),
    )
    return AudioOverview(
        None, notebook_id, "deep-dive", "重力の丘: Gravity hills", "en", (), lines, cites,
        model="llama3.2", dropped=1, document_ids=(1, 2),
    )  # fmt: skip


@pytest.fixture
def notebook_id(store) -> int:
    return store.create_notebook("Audio", "m", 4).id


def test_a_script_is_spoken_timed_encoded_and_kept(store, notebook_id):
    steps = []
    written = script(notebook_id)
    made, overview_id, notes = speak_and_keep(store, written, lambda *step: steps.append(step))
    assert ("Speaking line 3 of 4", 2, 4) in steps
    times = [(x.start_s, x.end_s) for x in made.lines]
    assert times[0][0] == 0 and times[-1][1] == made.seconds > 0
    assert all(a < b for a, b in times)  # every line is heard, the Japanese quote too
    assert all(one[1] == two[0] for one, two in pairwise(times))
    heard = times[2][1] - times[2][0] - line_pauses(written)[3]
    assert heard > 1.0  # said by a voice that reads Japanese (an English one says nothing)
    data = store.read_file(made.audio_sha256)
    assert data[:4] == b"OggS"
    assert len(decode(data)) / SAMPLE_RATE == pytest.approx(made.seconds, abs=1e-4)
    assert made.voices == tuple(v.name for v in voices_for("en", 2))  # one for each host
    assert notes == [f"0:{round(made.seconds):02d} of audio, 4 lines; 1 written line dropped "
                     "(citing no passage given, or with no close match)"]  # fmt: skip
    again = kept(store, overview_id)
    assert again.lines == made.lines and again.title == "重力の丘: Gravity hills"
    assert (again.seconds, again.audio_sha256, again.dropped) == (
        made.seconds,
        made.audio_sha256,
        1,
    )
    assert [c.quote for c in again.cites] == [c.quote for c in made.cites]
    assert all(c.stale for c in again.cites)  # their sources are not in this database
    assert check_store(store) == (0, [])


def test_a_quote_s_lead_in_is_said_by_the_talk_s_voice_and_the_quote_by_its_own():
    lead = "From Gravity hill, page 2:"
    said = spoken_line(f"{lead} {QUOTE}", HEART)
    alone = speak(lead, HEART), speak(QUOTE, voices_for("ja")[0])
    gap = round(VOICE_CHANGE_S * SAMPLE_RATE)
    assert len(said) == len(alone[0]) + gap + len(alone[1])
    assert (said[: len(alone[0])] == alone[0]).all()


def test_the_talk_pauses_longer_where_it_moves_on_to_other_sources(notebook_id):
    cites = (ReportCite(1, 1, "A", 0, 1, "a"), ReportCite(2, 2, "B", 0, 1, "b"))
    lines = (
        AudioLine("From A: [1]", 0, (1,)),
        AudioLine("Again A [1]", 0, (1,)),
        AudioLine("Now B.", 0, ()),  # the introduction goes with the quote after it
        AudioLine("From B: [2]", 0, (2,)),
    )
    brief = AudioOverview(None, notebook_id, "read-aloud", "t", "en", (), lines, cites)
    assert line_pauses(brief) == [PAUSE_S, PAUSE_S, TOPIC_PAUSE_S, PAUSE_S]


def test_a_format_or_length_there_is_none_of_is_refused_in_words(store, settings, embedder):
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    with pytest.raises(KnowNoteError, match="choose one of brief, deep-dive"):
        worker.queue_audio_overview(1, AudioRequest("podcast"))
    with pytest.raises(KnowNoteError, match="no length “endless”"):
        worker.queue_audio_overview(1, AudioRequest("brief", length="endless"))


@pytest.fixture
def worker(store, settings, embedder, notebook_id, monkeypatch):
    """A worker whose audio jobs speak the hand-made script as a brief, by one English voice
    (the script writer has its own tests: knownote.study.audio_script)."""
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    written = []

    def script_for(store, notebook_id, request, progress, *, embedder=None):
        written.append(request)
        progress("Writing the script", 0, 1)
        english = tuple(x for x in script(notebook_id).lines if QUOTE not in x.text)
        return replace(script(notebook_id), format="brief", lines=english), [
            "a note of the script's"
        ]

    monkeypatch.setattr(making, "script_for", script_for)
    worker.written = written
    return worker


def test_the_worker_makes_and_keeps_an_overview_with_progress(worker, store, notebook_id):
    request = AudioRequest("deep-dive", focus="坂", length="short")
    job = worker.queue_audio_overview(notebook_id, request)
    assert (job.kind, job.filename) == (AUDIO_OVERVIEW, "Audio overview: Deep Dive")
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == IMPORTED, done.error
    assert worker.written == [request] and done.stage == AUDIO_OVERVIEW
    assert (done.label, done.done, done.total) == ("Keeping the audio overview", 3, 3)
    made = kept(store, worker.audio_overviews_made[job.id])
    assert done.passages == len(made.lines) == 3 and len(made.voices) == 1
    assert done.warnings[0].endswith("3 lines; 1 written line dropped (citing no passage "
                                     "given, or with no close match)")  # fmt: skip
    assert done.warnings[1] == "a note of the script's"
    assert [o.id for o in kept_overviews(store, notebook_id)] == [made.id]


def test_a_cancelled_overview_keeps_nothing(worker, store, notebook_id, monkeypatch):
    job = worker.queue_audio_overview(notebook_id, AudioRequest("brief"))
    speak = making.voices.speak

    def speak_then_cancel(text, voice):
        worker.queue.cancel(job.id)  # asked while the first line is spoken
        return speak(text, voice)

    monkeypatch.setattr(making.voices, "speak", speak_then_cancel)
    assert worker.run_once()
    assert worker.queue.job(job.id).status == CANCELLED
    assert kept_overviews(store, notebook_id) == []
    folder = store.files_dir
    assert not folder.is_dir() or not list(folder.iterdir())


def test_an_overview_job_whose_request_was_forgotten_fails_in_words(store, settings, embedder):
    notebook_id = store.create_notebook("Audio", "m", 4).id
    job = JobQueue(store).enqueue_report(notebook_id, "Audio overview", AUDIO_OVERVIEW)
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)  # a new process
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED
    assert done.error == "The app restarted before this audio overview was made; make it again."
