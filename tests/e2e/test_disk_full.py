"""A disk that fills up: imports, chat writes, archive exports and backups fail saying the disk
is full, and the database opens afterwards with nothing lost and nothing partial.

The disk is a small tmpfs mounted for the test, which needs root; elsewhere the tests skip.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from knownote.answer.ask import ask
from knownote.errors import DiskFull
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.archive import export_notebook
from knownote.store.backup import backup
from knownote.store.check import check_store
from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.invariants import row_counts

FIRST = "docs/web_text/md_codeblocks.md"
SECOND = "docs/office/docx_en_rag_intro.docx"


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill up needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        pytest.skip(f"could not mount a tmpfs: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk holding `folder`, then free `leave` bytes."""
    filler = folder / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(bytes(64 * 1024))
                f.flush()
        except OSError as e:
            assert e.errno == errno.ENOSPC
    size = filler.stat().st_size
    with open(filler, "r+b") as f:
        f.truncate(max(0, size - leave))
    return filler


@pytest.fixture
def full_setup(small_disk, embedder):
    """A database on the small disk holding one document, before the disk fills."""
    settings = Settings().with_(home=small_disk / "home")
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Notes", embedder.name, embedder.dim)
    path = corpus_file(FIRST)
    first = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                        embedder=embedder)  # fmt: skip
    assert first.status == "imported"
    store.db.execute("CHECKPOINT")
    return settings, store, notebook


def reopened_intact(settings: Settings, store: Store, before: dict[str, int]) -> None:
    store.close()
    again = Store.open(settings.db_path)
    try:
        assert check_store(again) == (1, [])
        assert row_counts(again) == before
    finally:
        again.close()


@pytest.mark.parametrize("stage, leave", [("kept file", 0), ("database commit", 40_000)])
def test_an_import_on_a_full_disk_says_so_and_keeps_everything_before(
    stage, leave, full_setup, small_disk, embedder
):
    settings, store, notebook = full_setup
    before = row_counts(store)
    filler = fill(small_disk, leave)
    path = corpus_file(SECOND)
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                         embedder=embedder)  # fmt: skip
    assert result.status == "failed"
    assert "disk is full" in result.error, (stage, result.error)
    assert row_counts(store) == before
    filler.unlink()
    reopened_intact(settings, store, before)


def test_a_question_on_a_full_disk_says_so(full_setup, small_disk, embedder):
    settings, store, notebook = full_setup
    before = row_counts(store)
    filler = fill(small_disk)
    with pytest.raises(DiskFull, match="disk is full"):
        ask(store, embedder, notebook.id, "What is a code block?", llm=None, model=None,
            settings=settings)  # fmt: skip
    filler.unlink()
    reopened_intact(settings, store, before)


def test_an_archive_export_or_backup_onto_a_full_disk_leaves_no_partial_file(
    small_disk, store, notebook, settings, embedder
):
    for relative in (FIRST, SECOND):
        path = corpus_file(relative)
        import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                    embedder=embedder)  # fmt: skip
    fill(small_disk, 30_000)
    with pytest.raises(DiskFull, match="disk is full"):
        export_notebook(store, notebook.id, small_disk / "notes.knownote")
    with pytest.raises(DiskFull, match="disk is full"):
        backup(store, small_disk / "backups")
    left = sorted(p.name for p in small_disk.rglob("*"))
    assert left in (["filler"], ["backups", "filler"])
    assert check_store(store) == (2, [])
