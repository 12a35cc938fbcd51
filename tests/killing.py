"""Kill a real `knownote import` with SIGKILL at a chosen moment, then check what it left.

Shared by tests/e2e/test_crash.py (a few trials) and benchmarks/crash_import.py (many). The importer
is the real command line in its own process; its progress lines on stderr tell where it was.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knownote.store.db import Store
from tests.invariants import assert_store_consistent, row_counts

ROOT = Path(__file__).resolve().parents[1]
# Where an import is, from its stderr: before any line it is starting (interpreter, imports,
# opening the database, and for a new notebook loading the model). In an existing notebook the
# model loads lazily after "embed 0/N" is reported, until transformers reports its weights.
STARTING = "start"
SAVED = "saved"  # the command printed its result: the import has committed


@dataclass(frozen=True)
class Kill:
    """SIGKILL `delay` seconds after the process starts, or after it reports `stage`."""

    delay: float
    stage: str | None = None

    def describe(self) -> str:
        return f"{self.delay:.2f}s after " + (f"“{self.stage}”" if self.stage else "start")


@dataclass
class Run:
    """A running import whose stderr stages are recorded as they arrive."""

    process: subprocess.Popen
    started: float
    stages: list[tuple[float, str]] = field(default_factory=list)
    seen: threading.Condition = field(default_factory=threading.Condition)
    out: list[str] = field(default_factory=list)

    def note(self, stage: str) -> None:
        with self.seen:
            self.stages.append((time.monotonic() - self.started, stage))
            self.seen.notify_all()

    def read(self) -> None:
        for line in self.process.stderr:
            stage = stage_of(line)
            if stage:
                self.note(stage)
        self.note("exit")

    def read_result(self) -> None:
        """The result line on stdout comes once the import has committed."""
        for line in self.process.stdout:
            if not self.out:
                self.note(SAVED)
            self.out.append(line)

    def wait_for(self, stage: str, timeout: float) -> float | None:
        """Seconds since start when `stage` was first reported (None: exited or timed out)."""
        with self.seen:
            ok = self.seen.wait_for(
                lambda: any(s in (stage, "exit") for _, s in self.stages), timeout
            )
            if not ok:
                return None
            return next((t for t, s in self.stages if s == stage), None)

    def stage_at(self, seconds: float) -> str:
        """The stage at that moment; the model loads inside "embed" until it reports loaded."""
        with self.seen:
            before = [s for t, s in self.stages if t <= seconds]
        if not before:
            return STARTING
        if before[-1] == SAVED:
            return "after commit"
        if before[-1] == "model":  # loaded: embedding goes on
            return "embed"
        if before[-1] == "embed" and "model" not in before:
            return "model load"
        return before[-1]


def stage_of(line: str) -> str | None:
    """The stage a progress line names: "name.pdf: embed 256/1579" -> "embed"."""
    if line.startswith("Loading weights"):
        return "model"
    _, colon, rest = line.rpartition(": ")
    words = rest.split()
    if not colon or not words:
        return None
    if words[0] == "file":  # "file 1 of 1": the database is open and the notebook exists
        return "open"
    return words[0] if words[0] in STAGE_NAMES else None


STAGE_NAMES = ("extract", "split", "embed", "store")


def start_import(db: Path, notebook: str, files: Sequence[Path]) -> Run:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "knownote.cli", "--db", str(db), "import", notebook,
         *map(str, files)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    run = Run(process, time.monotonic())
    threading.Thread(target=run.read, daemon=True).start()
    threading.Thread(target=run.read_result, daemon=True).start()
    return run


@dataclass(frozen=True)
class Trial:
    kill: Kill
    killed_at: float | None  # seconds after start; None: the import finished first
    landed: str  # the last stage reported before the kill ("exit": it had finished)
    committed: bool  # the document was there when the database was opened again
    orphan_files: int  # kept files no document refers to, before the database was opened
    documents: int  # documents checked whole afterwards

    @property
    def where(self) -> str:
        if self.landed == "store":
            return "store, committed" if self.committed else "store, before commit"
        return self.landed


def run_trial(
    db: Path, notebook: str, pdf: Path, kill: Kill, *, size: int, overlap: int, timeout: float
) -> Trial:
    """Start the import, kill it as planned, reopen the database and check all of it."""
    run = start_import(db, notebook, [pdf])
    begin = 0.0
    if kill.stage is not None:
        begin = run.wait_for(kill.stage, timeout)
        if begin is None:
            raise AssertionError(f"the import never reported “{kill.stage}”: {run.stages}")
    target = begin + kill.delay
    remaining = target - (time.monotonic() - run.started)
    if remaining > 0:
        with contextlib.suppress(subprocess.TimeoutExpired):
            run.process.wait(timeout=remaining)
    killed_at = None
    if run.process.poll() is None:
        run.process.kill()
        killed_at = time.monotonic() - run.started
    run.process.wait()
    landed = run.stage_at(killed_at) if killed_at is not None else "exit"
    if killed_at is None and run.process.returncode != 0:
        raise AssertionError(f"the import failed on its own: {''.join(run.out)}")
    files = db.with_name(db.name + ".files")
    before = {entry.name for entry in files.iterdir()} if files.is_dir() else set()
    store = Store.open(db)
    try:
        hashes = {row[0] for row in store.db.execute("SELECT sha256 FROM documents").fetchall()}
        documents = assert_store_consistent(store, size, overlap)
        committed = store.notebook_by_name(notebook) is not None and any(
            d.filename == pdf.name for d in store.documents(store.notebook_by_name(notebook).id)
        )
    finally:
        store.close()
    return Trial(kill, killed_at, landed, committed, len(before - hashes), documents)


def random_kill(rng: random.Random, n: int, total: float, store_seconds: float) -> Kill:
    """The n-th kill: every third inside the store stage (from its report to the commit,
    `store_seconds` long), the others anywhere in the whole import (`total` seconds)."""
    if n % 3 == 2:
        return Kill(rng.uniform(0, store_seconds), "store")
    return Kill(rng.uniform(0, total))


def delete_imported(db: Path, notebook: str, filename: str) -> int:
    """Delete the notebook's document of that file name, if any; return its passage count."""
    store = Store.open(db)
    try:
        found = store.notebook_by_name(notebook)
        for document in store.documents(found.id) if found else []:
            if document.filename == filename:
                store.delete_document(document.id)
                return document.passages
        return 0
    finally:
        store.close()


def counts(db: Path) -> dict[str, int]:
    """Rows per table of the database file."""
    store = Store.open(db)
    try:
        return row_counts(store)
    finally:
        store.close()
