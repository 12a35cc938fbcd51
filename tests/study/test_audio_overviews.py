"""Audio overviews kept with their citations and audio: read back with stale citations marked,
carried whole by archives and backups, checked by `knownote check`. The overview is made once,
without a model (the read-aloud brief of the sources' quotes), by the real pipeline."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.pipeline.audio_overview import AudioRequest, make_audio_overview
from knownote.settings import Settings
from knownote.store.archive import export_notebook, import_notebook
from knownote.store.backup import backup
from knownote.store.check import check_store, orphan_rows
from knownote.store.db import Store
from knownote.study.audio_overviews import delete_overview, keep, kept, kept_overviews
from tests.study.conftest import copy_of, two_sources_home  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def spoken_home(two_sources_home, tmp_path_factory, embedder) -> Path:  # noqa: F811
    """The two sources' data folder with a short read-aloud brief made and kept."""
    home = tmp_path_factory.mktemp("spoken") / "home"
    shutil.copytree(two_sources_home, home)
    store = Store.open(Settings().with_(home=home).db_path)
    try:
        (notebook,) = store.notebooks()
        request = AudioRequest("deep-dive", length="short")  # no model: read aloud
        made, _, notes = make_audio_overview(
            store, notebook.id, request, lambda *step: None, embedder=embedder
        )
        assert made.format == "read-aloud" and "No answer model is connected" in notes[1]
    finally:
        store.close()
    return home


@pytest.fixture
def spoken(spoken_home, tmp_path):
    """(store, notebook id, the kept overview) in a copy of the prepared folder."""
    store = Store.open(copy_of(spoken_home, tmp_path).db_path)
    (notebook,) = store.notebooks()
    (head,) = kept_overviews(store, notebook.id)
    yield store, notebook.id, kept(store, head.id)
    store.close()


def assert_exact(store: Store, overview) -> None:
    assert overview.cites
    for c in overview.cites:
        assert not c.stale and store.document_text(c.document_id)[c.start : c.end] == c.quote


def test_a_kept_overview_is_read_back_whole_with_exact_citations(spoken):
    store, notebook_id, overview = spoken
    assert overview.lines and overview.seconds > 0 and len(overview.voices) == 1
    assert overview.lines[-1].end_s == overview.seconds
    assert {n for line in overview.lines for n in line.cites} == {c.n for c in overview.cites}
    assert_exact(store, overview)
    assert store.read_file(overview.audio_sha256)[:4] == b"OggS"
    (head,) = kept_overviews(store, notebook_id)
    assert head.lines == () and head.cites == () and head.seconds == overview.seconds


def test_a_citation_of_a_deleted_source_is_stale(spoken):
    store, _, overview = spoken
    gone = overview.cites[0].document_id
    store.delete_document(gone)
    again = kept(store, overview.id)
    assert [c.stale for c in again.cites] == [c.document_id == gone for c in overview.cites]


def test_a_japanese_overview_is_kept_and_deleted_with_its_audio(spoken):
    store, _, overview = spoken
    japanese = replace(
        overview, id=None, title="重力の丘", language="ja",
        lines=tuple(replace(x, text=f"「{x.spoken}」と書いてあります。") for x in overview.lines),
        audio_sha256=store.save_file(b"OggS other audio"),
    )  # fmt: skip
    new = keep(store, japanese)
    assert kept(store, new).lines == japanese.lines and kept(store, new).title == "重力の丘"
    delete_overview(store, new)
    assert not store.file_path(japanese.audio_sha256).exists()
    assert store.read_file(overview.audio_sha256)  # the other's audio stays
    with pytest.raises(NotFound):
        kept(store, new)


def test_overviews_travel_in_an_archive_with_their_audio(spoken, tmp_path):
    store, notebook_id, overview = spoken
    export_notebook(store, notebook_id, tmp_path / "nb.knownote")
    elsewhere = Store.open(tmp_path / "elsewhere" / "knownote.duckdb")
    try:
        result = import_notebook(elsewhere, tmp_path / "nb.knownote", max_bytes=1 << 30)
        (head,) = kept_overviews(elsewhere, result.notebook_id)
        copy = kept(elsewhere, head.id)
        assert copy.lines == overview.lines and copy.seconds == overview.seconds
        assert elsewhere.read_file(copy.audio_sha256) == store.read_file(overview.audio_sha256)
        assert set(copy.document_ids) <= {d.id for d in elsewhere.documents(result.notebook_id)}
        assert_exact(elsewhere, copy)
        assert check_store(elsewhere)[1] == []
        delete_notebook(elsewhere, result.notebook_id)
        assert not elsewhere.file_path(copy.audio_sha256).exists()
        assert orphan_rows(elsewhere.db) == {} and check_store(elsewhere) == (0, [])
    finally:
        elsewhere.close()


def test_a_backup_carries_the_overview_and_its_audio(spoken, tmp_path):
    store, _, overview = spoken
    copy = backup(store, tmp_path / "backups")  # checked like `knownote check` before it is kept
    again = Store.open(copy.folder / store.path.name)
    try:
        assert kept(again, overview.id).lines == overview.lines
        assert again.read_file(overview.audio_sha256) == store.read_file(overview.audio_sha256)
    finally:
        again.close()


def test_check_finds_an_overview_citation_that_no_longer_quotes_its_source(spoken):
    store = spoken[0]
    assert check_store(store, files=False)[1] == []
    store.db.execute("UPDATE audio_cites SET quote = 'altered' WHERE n = 1")
    (problem,) = check_store(store, files=False)[1]
    assert "1 audio overview citations do not quote its text" in problem
