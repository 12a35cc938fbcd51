"""The databases and archives past versions of KnowNote wrote (tests/store/past_versions, made by
scripts/build_past_databases.py from the git history): their manifest, and one copied out."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

PAST = Path(__file__).resolve().parent / "store" / "past_versions"
MANIFEST = json.loads((PAST / "manifest.json").read_text())
# One per set of migrations main has had, oldest first (a level that could not be built has no
# database, and says why).
LEVELS = [level for level in MANIFEST["levels"] if "database" in level]


def unpack(level: dict, folder: Path) -> Path:
    """The level's database and kept files, copied into `folder`; the database's path."""
    with tarfile.open(PAST / level["database"]) as tar:
        tar.extractall(folder, filter="data")
    return folder / MANIFEST["database"]


def record_of(level: dict) -> dict:
    """What the old version said and stored: searches, answers, notes, rows (its JSON)."""
    return json.loads((PAST / level["record"]).read_text())
