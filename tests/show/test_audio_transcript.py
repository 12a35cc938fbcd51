"""An audio overview's transcript as Markdown: each line's time, speaker and marks, and each
citation's note with its range, quote and link; document text escaped."""

from __future__ import annotations

import re
from dataclasses import replace

from knownote.answer.ranges import SpanLinks
from knownote.show.audio_transcript import LEANS_ON, stamp, transcript_markdown
from knownote.show.excerpt import escape_markdown
from tests.show.handmade_audio import JAPANESE, overview, timed

LINKS = SpanLinks("http://localhost:8501", 3)


def test_each_line_has_its_time_speaker_and_footnoted_marks_in_english_and_japanese():
    spoken, _ = timed(overview(notebook_id=3))
    text = transcript_markdown(spoken, LINKS)
    lines = [x for x in text.splitlines() if x.startswith("**\\[")]
    assert len(lines) == 4
    assert lines[0] == "**\\[00:00\\] Host 1:** Today\\: gravity hills\\."
    assert lines[1].startswith("**\\[00:02\\] Host 2:** The road only looks uphill [^1]")
    at = stamp(spoken.lines[2].start_s)
    assert lines[2] == f"**\\[{at}\\] Host 1:** 重力の丘は目の錯覚です [^2]。"
    assert "[^3]" in lines[3] and "[^1]" in lines[3]
    assert escape_markdown(LEANS_ON) in text


def test_each_citation_names_its_title_range_quote_and_the_link_that_opens_it():
    text = transcript_markdown(overview(notebook_id=3, en_id=5, ja_id=6), LINKS)
    notes = text.split("## Citations", 1)[1]
    # the support span is the range a note shows, and its link opens exactly that range
    assert "[^2]: 重力の丘, chars 0–4" in notes
    assert "(<http://localhost:8501/?notebook=3&source=6&start=0&end=4>)" in notes
    assert f"    > {JAPANESE[:4]}" in notes
    assert "Gravity \\<hill\\> \\& \\*roads\\*" in notes  # the title escaped
    assert "<hill>" not in notes.replace("\\<hill\\>", "")


def test_a_stale_citation_says_so_and_links_nowhere_and_without_links_none_is_given():
    base = overview(notebook_id=3)
    stale = replace(base, cites=tuple(replace(c, stale=True) for c in base.cites))
    assert "stale: the source changed" in transcript_markdown(stale, LINKS)
    assert "open in KnowNote" not in transcript_markdown(stale, LINKS)
    assert "open in KnowNote" not in transcript_markdown(base)


def test_a_line_that_quotes_markdown_cannot_inject_it():
    base = overview()
    hostile = replace(base.lines[0], text="[click](javascript:alert(1)) <img src=x> # head")
    text = transcript_markdown(replace(base, lines=(hostile,), title="# <b>x</b>"))
    assert "](javascript" not in text
    (line,) = [x for x in text.splitlines() if x.startswith("**\\[")]
    assert not re.search(r"(?<!\\)[<>#\[\]()]", line.split(":** ", 1)[1])
    assert text.startswith("# \\# \\<b\\>x\\</b\\>\n")


def test_times_read_as_minutes_and_seconds_and_hours_when_long():
    assert stamp(83.9) == "01:23"
    assert stamp(3729) == "1:02:09"
    assert stamp(None) == "--:--"
