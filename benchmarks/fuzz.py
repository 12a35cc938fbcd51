"""Mutation fuzzing of every reader through the real import: cases per minute and the outcome
counts per format.

    .venv/bin/python benchmarks/fuzz.py --cases 20000 --seed 1 [--jobs 2] [--seconds 10]

Case k of seed S is always the same input (tests/fuzzing.py): a seed chosen by weight among every
corpus document and the seeds built for the formats the corpus lacks, mutated by the
mutations that fit its format. Each case is imported with the app's import (the reading child
and its time limit of --seconds per page, the real embedding model with a cache of the passages it
has embedded) into a real DuckDB store, which `knownote check` checks whole every --per-db cases
before a fresh one replaces it. --jobs runs that many processes, each its own share of the cases.
Faults (unhandled, hang, half-import) are printed with their recipe, to be kept in
tests/fuzz_regressions.json.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault(
    "KNOWNOTE_MODEL_CACHE", str(Path(tempfile.gettempdir()) / "knownote-test-models")
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embedders import get_embedder
from tests.fuzzing import (
    CRASH,
    FAULTS,
    CachedEmbedder,
    Outcome,
    Runner,
    built_seeds,
    cases,
    corpus_seeds,
    fuzz_settings,
    mutate,
)

EMBEDDING_MODEL = "all-MiniLM-L6-v2-int8"  # the test suite's model (tests/conftest.py)


def run_shard(args: argparse.Namespace) -> None:
    """This process's cases (k % shards == shard), one JSON line per case on stdout."""
    embedder = CachedEmbedder(get_embedder(EMBEDDING_MODEL))
    seeds = corpus_seeds() + built_seeds(embedder)
    loaded: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="knownote-fuzz-") as folder:
        runner = Runner(fuzz_settings(Path(folder), args.seconds), embedder, Path(folder),
                        args.per_db)  # fmt: skip
        for seed, case in cases(seeds, args.seed, args.cases, args.start):
            if case % args.shards != args.shard:
                continue
            if seed.name not in loaded:
                loaded[seed.name] = seed.load()
            data, mutation = mutate(seed, loaded[seed.name], args.seed, case)
            _emit(runner.run(seed, data, case, mutation))
        _emit(runner.rotate())


def _emit(outcomes: list[Outcome]) -> None:
    """The cases of a store that `knownote check` has just checked, and that store."""
    for outcome in outcomes:
        print(json.dumps(asdict(outcome)))
    if outcomes:
        print(json.dumps({"databases": 1}), flush=True)


def report(outcomes: list[Outcome], databases: int, took: float, args) -> None:
    per_kind: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        per_kind[o.kind][o.outcome] += 1
    columns = sorted({o.outcome for o in outcomes}, key=lambda c: (c in FAULTS, c == CRASH, c))
    print(f"\n{len(outcomes):,} cases in {took / 60:.1f} min: "
          f"{len(outcomes) / (took / 60):.0f} cases per minute "
          + (f"(the log {args.report}; recipes with --seed {args.seed})" if args.report else
             f"(--cases {args.cases} --seed {args.seed} --jobs {args.jobs} "
             f"--seconds {args.seconds:g})"))  # fmt: skip
    print("\n| format | cases | " + " | ".join(columns) + " |")
    print("|---|---:|" + "---:|" * len(columns))
    for kind in sorted(per_kind):
        counts = per_kind[kind]
        print(f"| {kind} | {sum(counts.values()):,} | "
              + " | ".join(f"{counts[c]:,}" for c in columns) + " |")  # fmt: skip
    total = Counter(o.outcome for o in outcomes)
    print(f"| all | {len(outcomes):,} | " + " | ".join(f"{total[c]:,}" for c in columns) + " |")
    seeds = Counter(o.seed for o in outcomes)
    print(
        f"\n{len(seeds)} seeds fuzzed; fewest cases: "
        + ", ".join(f"{name} {n}" for name, n in sorted(seeds.items(), key=lambda x: x[1])[:3])
    )
    faults = [o for o in outcomes if o.fault]
    print(f"\nfaults: {len(faults)} (unhandled, hang, half-import, including documents that "
          f"`knownote check` refused: it ran on each of the {databases} databases)")  # fmt: skip
    for o in faults:
        recipe = {"seed": o.seed, "run_seed": args.seed, "case": o.case, "mutation": o.mutation}
        last = o.detail.strip().splitlines()[-1][:300] if o.detail.strip() else ""
        print(f"- {o.outcome}: {json.dumps(recipe)}\n  {last}")
    crashes = [o for o in outcomes if o.outcome == CRASH]
    for o in crashes[:20]:
        print(f"- reader crashed (contained): {o.seed} case {o.case} {o.mutation}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="the first case number")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0, help="max_extract_seconds")
    parser.add_argument("--per-db", type=int, default=100, help="cases per database")
    parser.add_argument("--every", type=int, default=500, help="print the rate every N cases")
    parser.add_argument("--table-every", type=int, default=2000,
                        help="print the whole table every N cases")  # fmt: skip
    parser.add_argument("--log", help="append every case's outcome to this JSON-lines file")
    parser.add_argument(
        "--report", metavar="LOG", help="print a --log's table and stop (with the run's --seed)"
    )
    parser.add_argument("--write", nargs=3, metavar=("SEED", "CASE", "PATH"),
                        help="write one case's bytes to PATH (to debug it) and stop")  # fmt: skip
    parser.add_argument("--shard", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--shards", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        name, case, path = args.write
        embedder = CachedEmbedder(get_embedder(EMBEDDING_MODEL))
        seed = next(s for s in corpus_seeds() + built_seeds(embedder) if s.name == name)
        data, mutation = mutate(seed, seed.load(), args.seed, int(case))
        Path(path).write_bytes(data)
        print(f"{path}: {len(data):,} bytes, {mutation}")
        return
    if args.shards:
        run_shard(args)
        return
    if args.report:
        rows = [json.loads(line) for line in Path(args.report).read_text().splitlines()]
        databases = sum(r.pop("databases", 0) for r in rows)
        done = [Outcome(**{k: v for k, v in r.items() if k != "at"}) for r in rows if "seed" in r]
        report(done, databases, max(r.get("at", 0) for r in rows) * 60, args)
        return
    started = time.monotonic()
    command = [sys.executable, __file__, "--cases", str(args.cases), "--seed", str(args.seed),
               "--start", str(args.start), "--seconds", str(args.seconds), "--per-db",
               str(args.per_db), "--shards", str(args.jobs)]  # fmt: skip
    children = [subprocess.Popen([*command, "--shard", str(k)], stdout=subprocess.PIPE, text=True)
                for k in range(args.jobs)]  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    for child in children:
        threading.Thread(target=_forward, args=(child.stdout, lines), daemon=True).start()
    log = open(args.log, "a") if args.log else None  # noqa: SIM115 (open for the whole run)
    outcomes: list[Outcome] = []
    databases = 0
    finished = 0
    while finished < len(children):
        line = lines.get()
        if line is None:
            finished += 1
            continue
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        minutes = (time.monotonic() - started) / 60
        if log:
            log.write(json.dumps({**row, "at": round(minutes, 3)}) + "\n")
            log.flush()
        if "databases" in row:
            databases += row["databases"]
            continue
        outcomes.append(Outcome(**row))
        if outcomes[-1].fault:
            print(f"FAULT {outcomes[-1].outcome}: {outcomes[-1].seed} case "
                  f"{outcomes[-1].case} {outcomes[-1].mutation}", flush=True)  # fmt: skip
        if len(outcomes) % args.every == 0:
            print(f"{len(outcomes):,} cases, {minutes:.1f} min, "
                  f"{len(outcomes) / minutes:.0f} per minute, "
                  f"{sum(o.fault for o in outcomes)} faults", flush=True)  # fmt: skip
        if len(outcomes) % args.table_every == 0:
            report(outcomes, databases, minutes * 60, args)
    for child in children:
        child.wait()
    report(outcomes, databases, time.monotonic() - started, args)


def _forward(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


if __name__ == "__main__":
    main()
