"""What a cold `knownote import` does, step by step: when each step of each file begins and ends.

    .venv/bin/python benchmarks/import_steps.py FILE... [--rounds N]

Each round runs `knownote import` of the files into a fresh data folder, in a new process (the
default model, its graph already made in the model cache), with the import's steps timed from the
process's start: the store's opening, the model's load (in a thread, beside the first file's
reading), each file's reading (by the reader server's child; the next file's is read ahead while
one embeds), languages, passages, embedding and writing. Prints each round's timeline, then the
medians of the process's wall time, its CPU time with its children (the reader server's), and
when the first passage began to be embedded. Run it from two trees in turn to compare them.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# (module, class or None, the functions timed)
STEPS = (
    ("knownote.pipeline.ingest", None, ("extract_with_time_limit", "split", "document_languages",
                                        "index_passages")),
    ("knownote.store.db", "Store", ("open", "add_document")),
    ("knownote.index.embed_onnx", "OnnxEmbedder", ("load", "embed_passages")),
)  # fmt: skip


def traced_import(argv: list[str]) -> int:
    """`knownote import` in this process, each of STEPS written to stderr as it begins and ends."""
    start = time.perf_counter()

    def wrap(owner: object, name: str) -> None:
        step = getattr(owner, name)

        @functools.wraps(step)
        def timed(*args, **kwargs):
            sys.stderr.write(f"STEP {time.perf_counter() - start:.3f} > {name}\n")
            try:
                return step(*args, **kwargs)
            finally:
                sys.stderr.write(f"STEP {time.perf_counter() - start:.3f} < {name}\n")

        setattr(owner, name, timed)

    from knownote import cli

    for module, cls, names in STEPS:
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        for name in names:
            wrap(owner, name)
    return cli.main(["import", *argv])


def one_round(files: list[str]) -> tuple[float, float, float | None, list[str]]:
    """Wall and CPU seconds of one cold import, when its first embedding began, its timeline."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "KNOWNOTE_HOME": str(Path(home) / "data")}
        from knownote.settings import MULTILINGUAL, Settings

        env.setdefault("KNOWNOTE_EMBEDDING_MODEL", MULTILINGUAL)
        env.setdefault("KNOWNOTE_MODEL_CACHE", str(Settings().model_cache))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", "bench", *files],
            env=env, cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = [line[5:] for line in done.stderr.splitlines() if line.startswith("STEP ")]
    first = next((float(s.split()[0]) for s in steps if s.endswith("> embed_passages")), None)
    return wall, cpu, first, steps


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        sys.exit(traced_import(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    files = [str(Path(f).resolve()) for f in args.files]
    print(f"code: {ROOT}; load average {os.getloadavg()[0]:.1f}")
    walls, cpus, firsts = [], [], []
    for round_no in range(1, args.rounds + 1):
        wall, cpu, first, steps = one_round(files)
        walls.append(wall)
        cpus.append(cpu)
        if first is not None:
            firsts.append(first)
        print(
            f"round {round_no}: {wall:.2f} s wall, {cpu:.2f} s CPU; load {os.getloadavg()[0]:.1f}"
        )
        for step in steps:
            print(f"  {step}")
    first = f"{statistics.median(firsts):.2f} s" if firsts else "–"
    print(
        f"medians: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
        f"with the reader server, first passage embedded at {first}"
    )


if __name__ == "__main__":
    main()
