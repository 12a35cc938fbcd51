"""Cold start: time from a fresh process to the first search result and to the first app answer.

    .venv/bin/python benchmarks/cold_start.py [--rounds 3]

Imports two real documents into a notebook in each of two temp data folders, one with each
embedding path (the default: the multilingual model's int8 graph in ONNX Runtime; and
all-MiniLM-L6-v2 through sentence-transformers with KNOWNOTE_EMBEDDING_BACKEND=torch, the path
every search took before the ONNX graphs),
then, alternating the two, starts fresh processes:
`knownote search` (wall time until it has printed its hits and exited), and a Streamlit AppTest
that opens the app, switches to Chat and asks a question (no Ollama: the quoted-passages answer),
until the answer's cited cards are there. Prints the median wall time of each, and its CPU time
(user + system of the process), which a busy machine does not inflate. The ONNX graph is cached
before the first round (it is made once per machine, not per start).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from knownote.settings import PACKAGED_MODEL

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "docs" / "web_text"
DOCUMENTS = ["html_wikipedia_tardigrades.html", "md_wikipedia_gravity_hill.md"]
QUESTION = "How do tardigrades survive extreme conditions?"
KNOWNOTE = [sys.executable, "-c", "import sys; from knownote.cli import main; sys.exit(main())"]
APP_ANSWER = f"""
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=300)
at.run()
at.radio(key="view").set_value("Chat").run()
at.chat_input(key="question").set_value({QUESTION!r}).run()
html = "".join(h.proto.body for h in at.get("html"))
assert not at.exception and 'class="kn-card"' in html, "no answer"
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one fresh process.

    On a machine shared with other work the wall time mostly measures the others; the CPU time
    is what the start itself costs.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{command[-1][:60]!r} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="knownote-cold-") as folder:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "OLLAMA_HOST": "http://127.0.0.1:9",  # closed: the app answers with quoted passages
        }
        for name in ("KNOWNOTE_PASSWORD", "KNOWNOTE_EMBEDDING_MODEL", "KNOWNOTE_EMBEDDING_BACKEND"):
            env.pop(name, None)
        paths = {
            "default (multilingual, int8)": {**env, "KNOWNOTE_HOME": f"{folder}/default"},
            "torch (sentence-transformers)": {
                **env,
                "KNOWNOTE_HOME": f"{folder}/torch",
                "KNOWNOTE_EMBEDDING_MODEL": PACKAGED_MODEL,
                "KNOWNOTE_EMBEDDING_BACKEND": "torch",
            },
        }
        files = [str(CORPUS / name) for name in DOCUMENTS]
        for path_env in paths.values():
            subprocess.run(
                [*KNOWNOTE, "import", "Cold", *files], env=path_env, cwd=ROOT, check=True,
                timeout=600,
            )  # fmt: skip
        search = [*KNOWNOTE, "search", "Cold", QUESTION, "-k", "3"]
        app = [sys.executable, "-c", APP_ANSWER]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for name, path_env in paths.items():
                times.setdefault((name, "search"), []).append(timed(search, path_env))
                times.setdefault((name, "app"), []).append(timed(app, path_env))
        print(f"load average {os.getloadavg()[0]:.1f}; median of {args.rounds} fresh processes")
        for name in paths:
            for what, label in (("search", "first search result"), ("app", "first app answer")):
                wall = statistics.median(w for w, _ in times[name, what])
                cpu = statistics.median(c for _, c in times[name, what])
                print(f"{name:30s} {label:20s} wall {wall:6.2f} s   cpu {cpu:6.2f} s")


if __name__ == "__main__":
    main()
