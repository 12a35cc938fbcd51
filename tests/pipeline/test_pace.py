"""Passages a second and the time left, for one import and for the queue (clock given)."""

from __future__ import annotations

import pytest

from knownote.pipeline.pace import ImportPaces, Pace, duration_text, pace_text


def test_the_rate_counts_passages_since_the_embedding_started():
    pace = Pace(started=100.0, done=80, total=400, at=104.0)
    assert pace.rate() == 20.0
    assert pace.seconds_left(now=104.0) == 16.0  # 320 passages at 20 a second
    assert pace.seconds_left(now=110.0) == 10.0  # the clock went on since the last report


def test_no_rate_before_a_passage_is_done():
    pace = Pace(started=5.0, done=0, total=400, at=5.0)
    assert pace.rate() is None and pace.seconds_left(now=9.0) is None
    assert pace_text(pace, now=9.0) is None


def test_the_time_left_never_goes_below_zero():
    assert Pace(started=0.0, done=10, total=10, at=1.0).seconds_left(now=50.0) == 0.0


def test_a_file_says_its_rate_and_time_left():
    pace = Pace(started=0.0, done=256, total=1000, at=8.0)
    assert pace_text(pace, now=8.0) == "32 passages/s, about 25 s left"
    slow = Pace(started=0.0, done=64, total=2000, at=16.0)
    assert pace_text(slow, now=16.0) == "4.0 passages/s, about 8 min left"


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.0, "under 5 s"),
        (4.9, "under 5 s"),
        (42.0, "about 40 s"),
        (89.0, "about 90 s"),
        (200.0, "about 3 min"),
        (3900.0, "about 1 h 5 min"),
    ],
)
def test_durations_in_words(seconds, said):
    assert duration_text(seconds) == said


def test_only_the_embedding_stage_counts_and_a_new_start_resets_it():
    paces = ImportPaces()
    paces.report(1, "extract", 0, 1, now=0.0)
    assert paces.pace(1) is None
    paces.report(1, "embed", 0, 100, now=10.0)
    paces.report(1, "embed", 50, 100, now=12.0)
    assert paces.pace(1).rate() == 25.0
    paces.report(1, "embed", 0, 100, now=20.0)  # embedding again from the start
    assert paces.pace(1).rate() is None


def test_the_queue_counts_waiting_bytes_at_the_running_imports_projected_pace():
    paces = ImportPaces()
    paces.begin(1, size=1000, now=0.0)
    paces.report(1, "embed", 0, 100, now=2.0)
    paces.report(1, "embed", 50, 100, now=7.0)  # 10 a second: 5 s left, 12 s in all
    assert paces.queue_seconds_left(1, waiting_bytes=0, now=7.0) == 5.0
    assert paces.queue_seconds_left(1, waiting_bytes=2000, now=7.0) == pytest.approx(29.0)


def test_after_a_finished_import_the_queue_uses_what_it_took():
    paces = ImportPaces()
    paces.begin(1, size=1000, now=0.0)
    paces.report(1, "embed", 0, 100, now=1.0)
    paces.end(1, imported=True, now=20.0)  # 0.02 s a byte
    assert paces.pace(1) is None
    paces.begin(2, size=500, now=20.0)
    paces.report(2, "embed", 0, 10, now=21.0)
    paces.report(2, "embed", 5, 10, now=22.0)  # 1 s left
    assert paces.queue_seconds_left(2, waiting_bytes=1000, now=22.0) == pytest.approx(21.0)


def test_a_failed_import_teaches_the_queue_nothing():
    paces = ImportPaces()
    paces.begin(1, size=1000, now=0.0)
    paces.report(1, "embed", 5, 10, now=1.0)
    paces.end(1, imported=False, now=3.0)
    assert paces.seconds_per_byte is None
    assert paces.queue_seconds_left(1, waiting_bytes=10, now=3.0) is None
