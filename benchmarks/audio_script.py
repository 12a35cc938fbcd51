"""Scripts of audio overviews written by the real small engine, on three corpus notebooks: lines
written, kept (citing, or short talk), dropped, and the time each took, beside the stand-in's and
the read-aloud brief's times in the same run.

    .venv/bin/python benchmarks/audio_script.py [--formats deep-dive,brief] [--length long]

Notebooks: a Wikipedia page in Markdown with a novel's excerpt (English), Chinese Markdown notes,
and a short Word note on RAG (English). Each gets, at `--length`:

1. each written format from SmolLM2-135M served by llama-cpp-python (tests/llama_server.py);
2. a deep dive from the stand-in answer server replying as the tests' `hosts` model does (its
   lines known: the check measured where the answer is known, and the time without a model);
3. the read-aloud brief, without a model.

Exact: every citation's quote is `text[start:end]` of its source, every support span lies inside
it, every line's marks are citations and what is spoken has none.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("KNOWNOTE_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.audio_overview import AudioOverview
from knownote.answer.ollama_chat import OllamaChat
from knownote.errors import ModelError
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.audio_script import write_script

DOCS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
NOTEBOOKS = {
    "gravity+war (en)": [
        "web_text/md_wikipedia_gravity_hill.md",
        "web_text/txt_war_and_peace_excerpt.txt",
    ],
    "distributed training (zh)": ["web_text/md_zh_distributed_training_notes.md"],
    "RAG note (en, docx)": ["office/docx_en_rag_intro.docx"],
}
MARK = re.compile(r"\[\d+\]")


def notebooks(store: Store, settings: Settings) -> dict[str, int]:
    embedder = get_embedder()
    made = {}
    for name, sources in NOTEBOOKS.items():
        notebook = store.create_notebook(name, embedder.name, embedder.dim)
        for relative in sources:
            path = DOCS / relative
            result = import_file(
                store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
            )
            assert result.status == "imported", result.error
        made[name] = notebook.id
    return made


def exact(store: Store, overview: AudioOverview) -> bool:
    ok = True
    for c in overview.cites:
        ok &= store.document_text(c.document_id)[c.start : c.end] == c.quote
        if c.span is not None:
            ok &= c.start <= c.span[0] < c.span[1] <= c.end
    for line in overview.lines:
        marks = tuple(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", line.text)))
        ok &= marks == line.cites and not MARK.search(line.spoken)
    return ok


def row(store: Store, label: str, notebook_id: int, **options) -> None:
    """One script written, as a row of the table."""
    began = time.perf_counter()
    try:
        overview = write_script(store, notebook_id, **options)
    except ModelError as e:
        print(f"  {label:<24} no script ({time.perf_counter() - began:.1f} s): {e}")
        return
    seconds = time.perf_counter() - began
    cited = sum(1 for line in overview.lines if line.cites)
    talk = sum(1 for line in overview.lines if not line.cites)
    written = len(overview.lines) + overview.dropped
    words = sum(len(line.spoken.split()) for line in overview.lines)
    speakers = len({line.speaker for line in overview.lines})
    print(
        f"  {label:<24} {written:>7} {cited:>5} {talk:>4} {overview.dropped:>7} "
        f"{len(overview.cites):>5} {speakers:>4} {words:>5} "
        f"{'yes' if exact(store, overview) else 'NO':>5} {seconds:>7.1f}"
    )
    if label.startswith("engine"):
        for line in overview.lines[:4]:
            print(f"      HOST {line.speaker + 1}: {line.text[:110]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--formats", default="deep-dive,brief,debate")
    parser.add_argument("--length", default="default")
    parser.add_argument("--no-engine", action="store_true", help="the stand-in only")
    args = parser.parse_args()
    from tests.ollama_standin import OllamaStandIn
    from tests.study.test_audio_script import hosts

    embedder = get_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings().with_(home=Path(tmp))
        store = Store.open(settings.db_path)
        made = notebooks(store, settings)
        engine = None
        if not args.no_engine:
            from knownote.answer.openai_chat import OpenAIChat
            from knownote.answer.servers import AnswerServers
            from tests.llama_server import CHAT_MODEL, CONTEXT, LlamaServer

            engine = LlamaServer(Path(tmp)).__enter__()
            chat = OpenAIChat(engine.url, "", 600.0, CONTEXT, 256)
            llm, model = AnswerServers(None, chat), f"openai:{CHAT_MODEL}"
        try:
            for name, notebook_id in made.items():
                passages = sum(d.passages for d in store.documents(notebook_id))
                print(f"{name}: {passages} passages, length {args.length}")
                print(
                    f"  {'script':<24} {'written':>7} {'cited':>5} {'talk':>4} {'dropped':>7} "
                    f"{'cites':>5} {'hosts':>4} {'words':>5} {'exact':>5} {'seconds':>7}"
                )
                options = {"length": args.length, "embedder": embedder}
                if engine is not None:
                    for fmt in args.formats.split(","):
                        row(store, f"engine {fmt}", notebook_id, format=fmt, llm=llm, model=model,
                            **options)  # fmt: skip
                with OllamaStandIn(reply=hosts) as server:
                    standin = OllamaChat(server.url, 10)
                    row(store, "stand-in deep-dive", notebook_id, format="deep-dive", llm=standin,
                        model="llama3.2", **options)  # fmt: skip
                row(store, "read-aloud", notebook_id, format="read-aloud", **options)
        finally:
            if engine is not None:
                engine.__exit__()
            store.close()


if __name__ == "__main__":
    main()
