"""A 5-minute audio overview from the click to playable: its wall time through the queue, split
into writing the script and speaking it, with the seconds of audio made and audio/wall.

    .venv/bin/python benchmarks/audio_overview.py [--no-engine] [--length default]

A notebook of three corpus sources (a Wikipedia page in Markdown, a short Word note on RAG, a
novel's excerpt) gets, each through `ImportWorker.queue_audio_overview` and one `run_once` (the
queue's job, from queued to kept, the audio file written):

1. a deep dive from the stand-in answer server (tests/ollama_standin.py) replying as the script
   writer's tests' `hosts` do (a few turns a part, some of them dropped by the check);
2. a deep dive from SmolLM2-135M served by llama-cpp-python (tests/llama_server.py);
3. the read-aloud brief, without a model.

The voices are loaded first (once per process; the app's first overview pays it), timed apart.
Then the read-aloud brief's lines, given to two hosts in turn, are spoken three ways, to see
whether threads help on this machine: in order (as the pipeline does), with the next line spoken
in a second thread while this one is joined, and two lines at a time. The machine's load is
printed before and after: other work on its cores slows every figure, so compare the ratios of
one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("KNOWNOTE_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.audio_overview import AudioOverview
from knownote.answer.ollama_chat import OllamaChat
from knownote.index.embedders import get_embedder
from knownote.pipeline.audio_overview import AudioRequest, speak_script
from knownote.pipeline.ingest import import_file
from knownote.pipeline.worker import ImportWorker
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.store.jobs import IMPORTED, JobQueue
from knownote.study.audio_overviews import kept
from knownote.study.audio_script import write_script
from knownote.voice import voices

DOCS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
SOURCES = [
    "web_text/md_wikipedia_gravity_hill.md",
    "office/docx_en_rag_intro.docx",
    "web_text/txt_war_and_peace_excerpt.txt",
]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def notebook_of(settings: Settings, embedder) -> tuple[Store, int]:
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Corpus", embedder.name, embedder.dim)
    for relative in SOURCES:
        path = DOCS / relative
        result = import_file(
            store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
        )
        assert result.status == "imported", result.error
    return store, notebook.id


def through_the_queue(worker: ImportWorker, notebook_id: int, request: AudioRequest, label: str):
    """Queue the overview, run the job, print its times; the kept overview."""
    steps: list[tuple[float, str]] = []
    report = worker.queue.report

    def timed(job_id: int, what: str, stage: str, done: int, total: int) -> bool:
        steps.append((time.perf_counter(), what))
        return report(job_id, what, stage, done, total)

    worker.queue.report = timed  # type: ignore[method-assign]
    began = time.perf_counter()
    job = worker.queue_audio_overview(notebook_id, request)
    worker.run_once()
    wall = time.perf_counter() - began
    worker.queue.report = report  # type: ignore[method-assign]
    done = worker.queue.job(job.id)
    if done.status != IMPORTED:
        print(f"{label}: no overview ({done.status}): {done.error}")
        return None
    overview = kept(worker.queue.store, worker.audio_overviews_made[job.id])
    speaking = next(t for t, what in steps if what.startswith("Speaking line"))
    encoding = next(t for t, what in steps if what == "Encoding the audio")
    script, speech = speaking - began, encoding - speaking
    rest = wall - script - speech
    print(
        f"{label}: {overview.seconds:.0f} s of audio, {len(overview.lines)} lines "
        f"({overview.dropped} written lines dropped), {len(overview.cites)} citations; "
        f"{wall:.1f} s from the click to playable = script {script:.1f} s + speech {speech:.1f} s "
        f"+ encoding and keeping {rest:.1f} s; audio/wall {overview.seconds / wall:.1f}x, "
        f"audio/speech {overview.seconds / speech:.1f}x"
    )
    for note in done.warnings:
        print(f"    {note}")
    return overview


def threads(script: AudioOverview) -> None:
    """The script's lines spoken in order, pipelined in a second thread, two at a time."""
    hosts = voices.voices_for(script.language, 2)
    said = [
        (line.spoken, voices.voice_for_text(line.spoken, hosts[line.speaker]))
        for line in script.lines
    ]

    began = time.perf_counter()
    spoken, _ = speak_script(script, lambda *step: None)
    in_order = time.perf_counter() - began

    began = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # the next line spoken while this one is joined
        ahead = pool.submit(voices.speak, *said[0])
        for line in [*said[1:], None]:
            ahead.result()
            if line is not None:
                ahead = pool.submit(voices.speak, *line)
    pipelined = time.perf_counter() - began

    began = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda line: voices.speak(*line), said))
    two_at_a_time = time.perf_counter() - began
    print(
        f"speaking the read-aloud brief's {len(said)} lines by two hosts in turn "
        f"({spoken.seconds:.0f} s of audio): in order {in_order:.1f} s "
        f"({spoken.seconds / in_order:.0f}x real time); the next line in a second thread "
        f"{pipelined:.1f} s ({in_order / pipelined:.2f}x as fast); two lines at a time "
        f"{two_at_a_time:.1f} s ({in_order / two_at_a_time:.2f}x as fast)"
    )


def warm(language: str) -> None:
    """Load the voices of two hosts (once per process, as the app does on its first overview)."""
    began = time.perf_counter()
    for voice in voices.voices_for(language, 2):
        voices.speak("Hello.", voice)
    print(f"loading the voices ({language}, two hosts): {time.perf_counter() - began:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-engine", action="store_true", help="without the real small engine")
    parser.add_argument("--length", default="default", help="short (2 min), default (5), long")
    args = parser.parse_args()
    from tests.ollama_standin import OllamaStandIn
    from tests.study.test_audio_script import hosts

    print(f"before: {load()}")
    embedder = get_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings().with_(home=Path(tmp))
        began = time.perf_counter()
        store, notebook_id = notebook_of(settings, embedder)
        print(f"notebook: {len(SOURCES)} sources imported in {time.perf_counter() - began:.1f} s")
        worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
        warm("en")
        with OllamaStandIn(reply=hosts) as server:
            request = AudioRequest(
                "deep-dive", length=args.length, llm=OllamaChat(server.url, 10), model="llama3.2"
            )
            through_the_queue(worker, notebook_id, request, "stand-in deep dive")
        if not args.no_engine:
            from knownote.answer.openai_chat import OpenAIChat
            from knownote.answer.servers import AnswerServers
            from tests.llama_server import CHAT_MODEL, CONTEXT, LlamaServer

            with LlamaServer(Path(tmp)) as server:
                chat = OpenAIChat(server.url, "", 600.0, CONTEXT, 256)
                request = AudioRequest(
                    "deep-dive", length=args.length, llm=AnswerServers(None, chat),
                    model=f"openai:{CHAT_MODEL}",
                )  # fmt: skip
                through_the_queue(worker, notebook_id, request, f"real engine ({CHAT_MODEL})")
        request = AudioRequest("read-aloud", length=args.length)
        through_the_queue(worker, notebook_id, request, "read-aloud brief, no model")
        script = write_script(
            store, notebook_id, format="read-aloud", length=args.length, embedder=embedder
        )
        turns = tuple(replace(line, speaker=i % 2) for i, line in enumerate(script.lines))
        threads(replace(script, format="deep-dive", lines=turns))
        store.close()
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
