"""Time to read a small file under the time limit: a child forked from the reader server (today)
against a fresh interpreter that loads the readers for each file (before).

    .venv/bin/python benchmarks/reader_start.py [--rounds 10]

Both read the same 606-byte Markdown file of the corpus with `extract()`; the median of
--rounds, alternating the two ways. The first read through the server (which starts it) is
timed apart.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.read.timelimit import extract_with_time_limit

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT.parent / "shared" / "corpus" / "docs" / "web_text" / "md_codeblocks.md"
FRESH = (
    "import sys; from knownote.read.extract import extract; "
    "extract(open(sys.argv[1], 'rb').read(), sys.argv[1])"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    data = FILE.read_bytes()
    limits = {"max_chars": 1_000_000, "max_pages": 100, "seconds": 60}
    started = time.monotonic()
    extract_with_time_limit(data, FILE.name, **limits)
    first = time.monotonic() - started
    forked, fresh = [], []
    for _ in range(args.rounds):
        started = time.monotonic()
        extract_with_time_limit(data, FILE.name, **limits)
        forked.append(time.monotonic() - started)
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", FRESH, str(FILE)], check=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT)})  # fmt: skip
        fresh.append(time.monotonic() - started)
    a, b = statistics.median(forked), statistics.median(fresh)
    print(f"first read (starts the reader server): {first * 1000:.0f} ms")
    print(f"forked from the reader server: median {a * 1000:.1f} ms over {args.rounds}")
    print(f"fresh interpreter loading the readers: median {b * 1000:.1f} ms over {args.rounds}")
    print(f"ratio: {b / a:.0f}x")


if __name__ == "__main__":
    main()
