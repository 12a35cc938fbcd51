"""Hostile archives, hostile files and injected faults: what each got, peak memory and time.

    .venv/bin/python benchmarks/hostile.py [--seconds 10]

Hostile archives (tests/hostile_archives.py) are made from a real archive of three corpus
documents and a chat, then imported with `knownote import-notebook` into a database that already
holds a notebook. Hostile files (tests/hostile_files.py) are imported with `knownote import`
under `max_extract_seconds` = --seconds. Each runs in its own process: the time is its wall
clock and the peak RSS is the largest process of its tree (the importer or the extraction child).
After each, `knownote check` runs on the database and its verdict is printed. Last, a SIGKILL is
injected inside each migration of a new database, and `knownote check` run on the next start.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.store.migrations import MIGRATIONS
from tests.hostile_archives import HOSTILE
from tests.hostile_files import HOSTILE_FILES
from tests.store.test_migration_kills import KILLER

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "docs"
SMALL = [CORPUS / "web_text/md_codeblocks.md", CORPUS / "office/docx_en_rag_intro.docx",
         CORPUS / "pdf/latex_multicolumn_lorem.pdf"]  # fmt: skip
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def knownote(*args: object) -> list[str]:
    return [sys.executable, "-m", "knownote.cli", *map(str, args)]


def measured(command: list[str], env: dict | None = None) -> tuple[int, str, float, float]:
    """Exit code, last output line, seconds, peak RSS in MB of the process tree."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env or ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)  # fmt: skip
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - started
    lines = [line for line in out.splitlines() if line.strip() and "Loading weights" not in line]
    return process.returncode, (lines[-1] if lines else ""), took, usage.ru_maxrss / 1024


def check(db: Path) -> str:
    code, line, _, _ = measured(knownote("--db", db, "check"))
    return ("clean: " if code == 0 else "PROBLEMS: ") + line.split(": ", 1)[-1][:70]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="max_extract_seconds")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="knownote-hostile-"))
    source = folder / "source" / "knownote.duckdb"
    subprocess.run(knownote("--db", source, "import", "Small", *SMALL), cwd=ROOT, env=ENV,
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run(knownote("--db", source, "ask", "Small", "What is RAG?"), cwd=ROOT, env=ENV,
                   check=True, capture_output=True)  # fmt: skip
    archive = folder / "small.knownote"
    subprocess.run(knownote("--db", source, "export-notebook", "Small", archive), cwd=ROOT,
                   env=ENV, check=True, capture_output=True)  # fmt: skip
    target = folder / "target" / "knownote.duckdb"
    subprocess.run(knownote("--db", target, "import-notebook", archive), cwd=ROOT, env=ENV,
                   check=True, capture_output=True)  # fmt: skip
    print("| hostile archive | size | result | time | peak RSS | `knownote check` after |")
    print("|---|---:|---|---:|---:|---|")
    good = archive.read_bytes()
    for name, (make, _) in HOSTILE.items():
        bad = folder / "bad.knownote"
        bad.write_bytes(make(good))
        code, line, took, rss = measured(knownote("--db", target, "import-notebook", bad,
                                                  "--as", "Hostile"))  # fmt: skip
        said = line.removeprefix("knownote: ")[:110]
        print(f"| {name} | {bad.stat().st_size:,} B | exit {code}: {said} | {took:.1f} s | "
              f"{rss:.0f} MB | {check(target)} |")  # fmt: skip
    print()
    print(f"| hostile file (max_extract_seconds={args.seconds:g}) | size | result | time | "
          "peak RSS | `knownote check` after |")  # fmt: skip
    print("|---|---:|---|---:|---:|---|")
    env = {**ENV, "KNOWNOTE_MAX_EXTRACT_SECONDS": str(args.seconds)}
    files = folder / "files"
    files.mkdir()
    for name, (filename, make) in HOSTILE_FILES.items():
        path = files / filename
        path.write_bytes(make())
        code, line, took, rss = measured(knownote("--db", target, "import", "Files", path), env)
        said = line.strip()[:110]
        print(f"| {name} | {path.stat().st_size:,} B | exit {code}: {said} | {took:.1f} s | "
              f"{rss:.0f} MB | {check(target)} |")  # fmt: skip
    print()
    print("| SIGKILL inside migration (new database) | next start | `knownote check` after |")
    print("|---|---|---|")
    for k, migration in enumerate(MIGRATIONS):
        db = folder / f"killed-{k}" / "knownote.duckdb"
        db.parent.mkdir()
        command = [sys.executable, "-c", KILLER, str(db), str(k), str(len(MIGRATIONS))]
        killed = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True)
        assert killed.returncode == -signal.SIGKILL
        code, _, _, _ = measured(knownote("--db", db, "notebooks"))
        print(f"| {migration.__name__} | exit {code} | {check(db)} |")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n(this script itself: {own:.0f} MB; work folder {folder})")


if __name__ == "__main__":
    main()
