"""Mind maps in one run: the headings map of the corpus books, and the real small engine's map.

    .venv/bin/python benchmarks/mind_map.py [--runs 3]

1. The headings map (no model) of the two corpus books with outlines, imported into a fresh
   notebook: the time to build it and to write it as SVG, OPML and Markdown, against the time to
   read the books' stored texts once (the baseline: the map reads each text once too).
2. The map of main ideas written by SmolLM2-135M served by llama-cpp-python (tests/llama_server.py,
   the engine the tests use) from three small sources, `--runs` times: lines the model wrote as
   ideas, ideas kept because they cite passages it was given, the share kept, links kept, and the
   seconds per map. A small model cites poorly; the share says how much survives the check.
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

from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.openai_chat import OpenAIChat
from knownote.answer.servers import AnswerServers
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.map_export import to_markdown, to_opml, to_svg
from knownote.study.mindmap import ANSWER_TOKENS, map_messages, map_passages, parse_map, resolve_map
from knownote.study.outline import outline_map

DOCS = Path(__file__).resolve().parents[2] / "shared/corpus/docs"
BOOKS = ["pdf/book_mupdf_explored_285p.pdf", "pdf/book_free_culture_lessig_352p.pdf"]
SMALL = [
    "web_text/md_wikipedia_gravity_hill.md",
    "web_text/html_wikipedia_tardigrades.html",
    "pdf/paper_xylayoutlm_2203.06947_2col.pdf",
]


def notebook_of(home: Path, name: str, files: list[str]) -> tuple[Store, int]:
    settings = Settings().with_(home=home)
    store = Store.open(settings.db_path)
    embedder = get_embedder()
    notebook = store.create_notebook(name, embedder.name, embedder.dim)
    for relative in files:
        path = DOCS / relative
        result = import_file(
            store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
        )
        assert result.status == "imported", result.error
    return store, notebook.id


def headings_map(folder: Path) -> None:
    store, notebook_id = notebook_of(folder / "books", "Books", BOOKS)
    ids = [d.id for d in store.documents(notebook_id)]
    began = time.perf_counter()
    for document_id in ids:
        store.document_text(document_id)
    baseline = time.perf_counter() - began
    began = time.perf_counter()
    mind_map = outline_map(store, notebook_id, "Books")
    built = time.perf_counter() - began
    began = time.perf_counter()
    sizes = [len(to_svg(mind_map)), len(to_opml(mind_map)), len(to_markdown(mind_map))]
    written = time.perf_counter() - began
    store.close()
    print(f"headings map of {len(ids)} books: {len(mind_map.nodes)} nodes")
    print(f"  reading their texts once: {baseline * 1000:.1f} ms (baseline)")
    print(f"  building the map: {built * 1000:.1f} ms ({built / baseline:.1f}x the baseline)")
    print(
        f"  writing SVG, OPML, Markdown: {written * 1000:.1f} ms "
        f"({written / baseline:.1f}x the baseline; "
        f"{sizes[0]:,} / {sizes[1]:,} / {sizes[2]:,} characters)"
    )


def engine_map(folder: Path, runs: int) -> None:
    from tests.llama_server import CHAT_MODEL, CONTEXT, LlamaServer

    store, notebook_id = notebook_of(folder / "small", "Small", SMALL)
    passages = map_passages(store, notebook_id)
    messages = map_messages(passages)
    with LlamaServer(folder) as server:
        chat = OpenAIChat(server.url, "", 600.0, CONTEXT, ANSWER_TOKENS)
        llm = AnswerServers(None, chat)
        model = f"openai:{CHAT_MODEL}"
        written = kept = links = 0
        seconds = []
        for _ in range(runs):
            began = time.perf_counter()
            reply = llm.complete(model, messages, num_ctx_for(messages, ANSWER_TOKENS))
            seconds.append(time.perf_counter() - began)
            parsed = parse_map(reply, len(passages))
            made = resolve_map(parsed, passages, "Small", model)
            written += len(parsed.nodes)
            kept += len(made.nodes)
            links += len(made.links)
    store.close()
    share = kept / written if written else 0.0
    print(f"map of main ideas by {CHAT_MODEL} from {len(passages)} passages, {runs} runs:")
    print(f"  ideas written {written}, kept {kept} (share kept {share:.2f}), links kept {links}")
    print(f"  seconds per map: median {sorted(seconds)[len(seconds) // 2]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-engine", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        headings_map(Path(tmp))
        if not args.no_engine:
            engine_map(Path(tmp), args.runs)


if __name__ == "__main__":
    main()
