"""Reports written by a model, each kind, in one run: sentences written, kept and marked, the time
taken, and whether every citation and support span is an exact slice of its source.

    .venv/bin/python benchmarks/reports.py [--no-engine] [--runs 1]

A notebook of three corpus sources (a Wikipedia page in Markdown, a short Word note on RAG, the
DPR paper as a PDF) gets a briefing, a study guide, an FAQ and a custom report:

1. from the stand-in answer server (tests/ollama_standin.py) replying as the tests' `copying`
   model does: in each part it copies the longest sentence of the first passage given (marked)
   and of the second (unmarked), and writes a sentence citing [99], one citing the first passage
   that no passage holds, and one that no passage holds, unmarked. Exactly 2 of each 5 are
   dropped and 1 marked: the check, measured where the answer is known.
2. from SmolLM2-135M served by llama-cpp-python (tests/llama_server.py, the engine the tests
   use), `--runs` times each: what a small real model's report keeps.

Exact: every citation's quote is `text[start:end]` of its source and every support span lies
inside its passage (so `text[span]` is a slice of the quote). With a timeline in the tree
(`knownote.study.reports.timeline`), its entries are labelled by both models too.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("KNOWNOTE_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.ollama_chat import OllamaChat
from knownote.answer.report import WRITTEN_KINDS, Report
from knownote.errors import ModelError
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.report_writer import label_timeline, write_report

DOCS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
SOURCES = [
    "web_text/md_wikipedia_gravity_hill.md",
    "office/docx_en_rag_intro.docx",
    "pdf/paper_dpr_2004.04906_2col.pdf",
]
INSTRUCTIONS = "How does retrieval help a language model answer questions?"


def notebook_of(home: Path) -> tuple[Store, int]:
    settings = Settings().with_(home=home)
    store = Store.open(settings.db_path)
    embedder = get_embedder()
    notebook = store.create_notebook("Corpus", embedder.name, embedder.dim)
    for relative in SOURCES:
        path = DOCS / relative
        result = import_file(
            store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
        )
        assert result.status == "imported", result.error
    return store, notebook.id


def exact(store: Store, report: Report) -> tuple[int, int, bool]:
    """(citations, support spans, whether every quote and span is an exact slice inside its
    passage)."""
    ok = True
    spans = 0
    for c in report.cites:
        text = store.document_text(c.document_id)
        ok &= text[c.start : c.end] == c.quote
        if c.span is not None:
            spans += 1
            a, b = c.span
            ok &= c.start <= a < b <= c.end and text[a:b] == c.quote[a - c.start : b - c.start]
    marks = {n for line in report.lines for n in line.cites}
    ok &= marks == {c.n for c in report.cites}
    return len(report.cites), spans, ok


def measure(store: Store, notebook_id: int, llm, model: str, label: str, runs: int) -> None:
    embedder = get_embedder()
    print(f"{label}:")
    print(
        f"  {'kind':<12} {'written':>7} {'kept':>5} {'marked':>6} {'dropped':>7} "
        f"{'cites':>5} {'spans':>5} {'exact':>5} {'seconds':>7}"
    )
    for kind in WRITTEN_KINDS:
        for _ in range(runs):
            instructions = INSTRUCTIONS if kind == "custom" else ""
            began = time.perf_counter()
            try:
                report = write_report(
                    store, llm, model, notebook_id, kind, instructions, embedder=embedder
                )
            except ModelError as e:
                seconds = time.perf_counter() - began
                print(f"  {kind:<12} no report ({seconds:.1f} s): {e}")
                continue
            seconds = time.perf_counter() - began
            cites, spans, ok = exact(store, report)
            dropped = report.written - report.kept
            print(
                f"  {kind:<12} {report.written:>7} {report.kept:>5} {report.marked:>6} "
                f"{dropped:>7} {cites:>5} {spans:>5} {'yes' if ok else 'NO':>5} {seconds:>7.1f}"
            )


def labels(store: Store, notebook_id: int, llm, model: str, label: str) -> None:
    try:
        from knownote.study.reports import timeline
    except ImportError:
        print(f"{label}: no timeline in the tree yet; labels not measured")
        return
    made = timeline(store, notebook_id)
    entries = [line for line in made.lines if line.date]
    began = time.perf_counter()
    try:
        labelled = label_timeline(made, llm, model)
    except ModelError as e:
        print(f"{label}: timeline of {len(entries)} entries, no labels: {e}")
        return
    seconds = time.perf_counter() - began
    same = [a.text for a in made.lines] == [b.text for b in labelled.lines]
    got = sum(1 for line in labelled.lines if line.date and line.label)
    print(
        f"{label}: timeline of {len(entries)} entries, {got} labelled in {seconds:.1f} s; "
        f"quotes unchanged: {'yes' if same else 'NO'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1, help="reports of each kind per engine")
    parser.add_argument("--no-engine", action="store_true", help="the stand-in only")
    args = parser.parse_args()
    from tests.ollama_standin import OllamaStandIn
    from tests.study.test_report_writer import copying

    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        store, notebook_id = notebook_of(Path(tmp))
        passages = sum(d.passages for d in store.documents(notebook_id))
        print(
            f"notebook: {len(SOURCES)} sources, {passages} passages, imported in "
            f"{time.perf_counter() - began:.1f} s"
        )
        with OllamaStandIn(reply=copying) as server:
            chat = OllamaChat(server.url, 10)
            measure(store, notebook_id, chat, "llama3.2", "stand-in (copying model)", 1)
        with OllamaStandIn(reply=_labelling) as server:
            labels(store, notebook_id, OllamaChat(server.url, 10), "llama3.2", "stand-in labels")
        if not args.no_engine:
            from knownote.answer.openai_chat import OpenAIChat
            from knownote.answer.servers import AnswerServers
            from tests.llama_server import CHAT_MODEL, CONTEXT, LlamaServer

            with LlamaServer(Path(tmp)) as server:
                chat = OpenAIChat(server.url, "", 600.0, CONTEXT, 256)
                llm, model = AnswerServers(None, chat), f"openai:{CHAT_MODEL}"
                measure(store, notebook_id, llm, model, f"real engine ({CHAT_MODEL})", args.runs)
                labels(store, notebook_id, llm, model, f"real engine labels ({CHAT_MODEL})")
        store.close()


def _labelling(messages: list[dict]) -> str:
    """A stand-in that labels each entry with its first four words."""
    import re

    entries = re.findall(r"(?m)^(\d+)\. [^:]+: (.*)$", messages[-1]["content"])
    return "\n".join(f"{n}: {' '.join(text.split()[:4])}" for n, text in entries)


if __name__ == "__main__":
    main()
