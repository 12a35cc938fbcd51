"""`knownote backup DIR`: a consistent, checked copy of the database and the kept files.

The store's lock is held from the checkpoint to the last copied byte, and the database file is
locked against other processes, so nothing writes meanwhile. The copy is made in a hidden folder,
opened and checked like `knownote check`, and only then renamed into place.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from knownote.errors import KnowNoteError
from knownote.store.archive import disk_full_error
from knownote.store.check import check_store
from knownote.store.db import Store


@dataclass(frozen=True)
class BackupResult:
    folder: Path
    documents: int
    files: int
    bytes: int


def _copy(source: Path, target: Path) -> int:
    shutil.copyfile(source, target)
    with open(target, "rb") as f:
        os.fsync(f.fileno())
    return target.stat().st_size


def backup(store: Store, into: Path) -> BackupResult:
    """Copy the database and its kept files into a new folder inside `into`; check the copy."""
    if store.path is None:
        raise KnowNoteError("An in-memory database cannot be backed up.")
    into = Path(into)
    name = f"knownote-{datetime.now():%Y%m%d-%H%M%S}"
    folder = into / name
    n = 1
    while folder.exists():
        n += 1
        folder = into / f"{name}-{n}"
    tmp = into / f".{folder.name}.tmp"
    db_copy = tmp / store.path.name
    try:
        into.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
        size = 0
        files = 0
        with store.lock:
            store.db.execute("CHECKPOINT")
            size += _copy(store.path, db_copy)
            kept = store.files_dir
            if kept is not None and kept.is_dir():
                target = db_copy.with_name(db_copy.name + ".files")
                target.mkdir()
                for entry in sorted(kept.iterdir()):
                    size += _copy(entry, target / entry.name)
                    files += 1
        copy = Store.open(db_copy)
        try:
            documents, problems = check_store(copy)
        finally:
            copy.close()
        if problems:
            raise KnowNoteError(
                "The backup copy does not check out, so it was not kept: " + " ".join(problems)
            )
        os.replace(tmp, folder)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise disk_full_error(f"The backup in {into}", e) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BackupResult(folder, documents, files, size)
