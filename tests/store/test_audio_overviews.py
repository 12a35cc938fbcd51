"""Kept audio overviews in the database: read back whole, many per notebook, deleted with their
rows and, once nothing uses it, their audio file; the orphan-file cleanup leaves their audio."""

from __future__ import annotations

import pytest

from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.store.audio_overviews import (
    KeptAudio,
    KeptAudioLine,
    delete_overview,
    kept_overview,
    overview_heads,
    save_overview,
)
from knownote.store.check import check_store, orphan_rows
from knownote.store.db import Store
from knownote.store.reports import KeptCite

AUDIO = b"OggS not really audio, but bytes kept by their hash"

LINES = [
    KeptAudioLine("重力の丘へようこそ。[1]", 0, (1,), "重力の丘へようこそ。", 0.0, 2.5),
    KeptAudioLine("坂は上りに見えます [1][2]。", 1, (1, 2), "坂は上りに見えます。", 2.5, 5.75),
]
CITES = [
    KeptCite(1, 7, "重力の丘", 10, 19, "重力の丘は坂道です。", 4, None, None),
    KeptCite(2, 8, "A source", 0, 4, "Slow", None, (1.5, 3.25), (0, 3)),
]


def head(notebook_id: int, sha256: str | None, title: str = "重力の丘について") -> KeptAudio:
    return KeptAudio(
        None, notebook_id, "deep-dive", title, "ja", ("kokoro:jf_alpha", "espeak-ng:ja"),
        "llama3.2", "坂", "short", 2, sha256, 5.75, (8, 7), None,
    )  # fmt: skip


@pytest.fixture
def notebook_id(store) -> int:
    return store.create_notebook("Audio", "m", 4).id


def test_an_overview_is_read_back_as_it_was_kept(store, notebook_id):
    sha = store.save_file(AUDIO)
    overview_id = save_overview(store, head(notebook_id, sha), LINES, CITES)
    kept = kept_overview(store, overview_id)
    assert kept.id == overview_id and kept.made_at is not None
    assert kept.title == "重力の丘について" and kept.voices == ("kokoro:jf_alpha", "espeak-ng:ja")
    assert (kept.format, kept.language, kept.model, kept.focus, kept.length, kept.dropped) == (
        "deep-dive", "ja", "llama3.2", "坂", "short", 2,
    )  # fmt: skip
    assert (kept.audio_sha256, kept.seconds, kept.document_ids) == (sha, 5.75, (8, 7))
    assert list(kept.lines) == LINES and list(kept.cites) == CITES
    assert store.read_file(kept.audio_sha256) == AUDIO


def test_a_notebook_keeps_many_overviews_newest_first(store, notebook_id):
    first = save_overview(store, head(notebook_id, None, "one"), LINES, CITES)
    second = save_overview(store, head(notebook_id, None, "two"), [], [])
    heads = overview_heads(store, notebook_id)
    assert [k.id for k in heads] == [second, first] and heads[0].lines == ()
    assert kept_overview(store, second).cites == ()


def test_an_overview_of_a_deleted_notebook_is_not_kept(store, notebook_id):
    delete_notebook(store, notebook_id)
    with pytest.raises(NotFound, match="deleted meanwhile"):
        save_overview(store, head(notebook_id, None), LINES, CITES)


def test_deleting_an_overview_deletes_its_rows_and_its_audio(store, notebook_id):
    sha = store.save_file(AUDIO)
    overview_id = save_overview(store, head(notebook_id, sha), LINES, CITES)
    delete_overview(store, overview_id)
    for table in ("audio_overviews", "audio_lines", "audio_cites", "audio_sources"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchall() == [(0,)]
    assert not store.file_path(sha).exists()
    with pytest.raises(NotFound):
        kept_overview(store, overview_id)
    with pytest.raises(NotFound):
        delete_overview(store, overview_id)


def test_audio_two_overviews_share_stays_until_the_last_goes(store, notebook_id):
    sha = store.save_file(AUDIO)
    first = save_overview(store, head(notebook_id, sha), LINES, CITES)
    second = save_overview(store, head(notebook_id, sha), LINES, CITES)
    delete_overview(store, first)
    assert store.read_file(sha) == AUDIO
    delete_overview(store, second)
    assert not store.file_path(sha).exists()


def test_deleting_the_notebook_deletes_its_overviews_and_their_audio_only(store, notebook_id):
    other = store.create_notebook("Other", "m", 4).id
    gone, stays = store.save_file(AUDIO), store.save_file(AUDIO + b"!")
    save_overview(store, head(notebook_id, gone), LINES, CITES)
    kept = save_overview(store, head(other, stays), LINES, CITES)
    delete_notebook(store, notebook_id)
    assert [k.id for k in overview_heads(store, other)] == [kept]
    assert overview_heads(store, notebook_id) == [] and orphan_rows(store.db) == {}
    assert not store.file_path(gone).exists() and store.read_file(stays) == AUDIO + b"!"
    assert store.db.execute("SELECT count(*) FROM audio_cites").fetchall() == [(2,)]


def test_the_orphan_file_cleanup_keeps_an_overview_s_audio(db_path):
    store = Store.open(db_path)
    try:
        notebook_id = store.create_notebook("Audio", "m", 4).id
        sha = store.save_file(AUDIO)
        orphan = store.save_file(b"left by a killed import")
        save_overview(store, head(notebook_id, sha), LINES, CITES)
    finally:
        store.close()
    again = Store.open(db_path)  # opening removes the kept files nothing uses
    try:
        assert again.read_file(sha) == AUDIO
        assert not again.file_path(orphan).exists()
    finally:
        again.close()


def test_check_finds_an_overview_whose_audio_file_is_missing(store, notebook_id):
    sha = store.save_file(AUDIO)
    save_overview(store, head(notebook_id, sha), LINES, CITES)
    assert check_store(store) == (0, [])
    store.file_path(sha).unlink()
    (problem,) = check_store(store)[1]
    assert problem.startswith("1 audio overviews have lost their audio file") and sha in problem
