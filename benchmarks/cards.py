"""Study cards made per minute from the corpus books, without a model and with the real small
engine, and the share of model-written cards the support check keeps.

    nice .venv/bin/python benchmarks/cards.py [--pages 60] [--chunk 10] [--engine-sources 3]
        [--passages 2]

Each book's first `--pages` pages are imported as sources of `--chunk` pages each (cut from the
corpus PDF in memory; the import is not timed). Then, timed: cloze cards for every source
(no model), and question-and-answer cards written by SmolLM2-135M-Instruct served by
llama-cpp-python (tests/llama_server.py, one thread) from `--passages` central passages of the
first `--engine-sources` sources. Every kept card's range is checked to be an exact slice of its
source's stored text. Numbers vary with the machine's load; the ratio of the two rates is the
figure that travels.
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

import pymupdf

from knownote.answer.openai_chat import PREFIX, OpenAIChat
from knownote.answer.servers import AnswerServers
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.cards import cards
from knownote.study.make import make_cards

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "docs" / "pdf"
BOOKS = ["book_free_culture_lessig_352p.pdf", "book_mupdf_explored_285p.pdf"]


def chunks(path: Path, pages: int, size: int) -> list[tuple[str, bytes]]:
    """The book's first `pages` pages as PDFs of `size` pages each."""
    out = []
    with pymupdf.open(path) as book:
        for first in range(0, min(pages, book.page_count), size):
            part = pymupdf.open()
            part.insert_pdf(book, from_page=first, to_page=min(first + size, pages) - 1)
            out.append((f"{path.stem}-p{first + 1}.pdf", part.tobytes()))
            part.close()
    return out


def exact(store: Store, notebook_id: int) -> int:
    """Cards (shown or not) whose range is not a slice of their text: must be 0."""
    wrong = 0
    for c in cards(store, notebook_id, shown_only=False):
        text = store.document_text(c.document_id)
        ok = 0 <= c.start < c.end <= len(text)
        if c.answer_start is not None:
            ok = ok and text[c.answer_start : c.answer_end] == c.answer
        wrong += not ok
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60, help="first pages of each book")
    parser.add_argument("--chunk", type=int, default=10, help="pages per source")
    parser.add_argument("--engine-sources", type=int, default=3, help="sources the model sees")
    parser.add_argument("--passages", type=int, default=2, help="passages per source it sees")
    args = parser.parse_args()

    from tests.llama_server import CHAT_MODEL, CONTEXT, LlamaServer

    embedder = get_embedder()
    folder = Path(tempfile.mkdtemp(prefix="knownote-cards-"))
    with LlamaServer(folder) as engine:
        settings = Settings().with_(home=folder, openai_base_url=engine.url, openai_context=CONTEXT)
        store = Store.open(settings.db_path)
        llm = AnswerServers(None, OpenAIChat.from_settings(settings))
        model = PREFIX + CHAT_MODEL
        print(f"{'book':<34} {'sources':>7} {'cards':>6} {'per min':>9}   model: "
              f"{'asked':>5} {'written':>7} {'kept':>5} {'share':>6} {'per min':>8}")  # fmt: skip
        totals = [0, 0.0, 0, 0, 0, 0.0]
        for name in BOOKS:
            notebook = store.create_notebook(name, embedder.name, embedder.dim)
            for filename, data in chunks(CORPUS / name, args.pages, args.chunk):
                result = import_file(store, notebook, filename, data, settings=settings,
                                     embedder=embedder)  # fmt: skip
                assert result.status == "imported", result.error
            started = time.perf_counter()
            [plain] = make_cards(store, embedder, notebook.id)
            plain_s = time.perf_counter() - started
            for document in store.documents(notebook.id)[args.engine_sources :]:
                store.set_document_enabled(document.id, False)  # the model sees the first ones
            started = time.perf_counter()
            made = make_cards(store, embedder, notebook.id, llm=llm, model=model,
                              passages=args.passages)  # fmt: skip
            model_s = time.perf_counter() - started
            written = next(m for m in made if m.made_by == model)
            asked = written.sources * args.passages
            assert exact(store, notebook.id) == 0, "a card's range is not a slice of its text"
            share = written.kept / written.written if written.written else 0.0
            rate = plain.kept / plain_s * 60
            print(f"{name:<34} {plain.sources:>7} {plain.kept:>6} {rate:>9,.0f}"
                  f"   {'':>6} {asked:>5} {written.written:>7} {written.kept:>5} {share:>6.0%} "
                  f"{written.written / model_s * 60:>8.1f}")  # fmt: skip
            for i, v in enumerate(
                [plain.kept, plain_s, asked, written.written, written.kept, model_s]
            ):
                totals[i] += v
        store.close()
    cloze, cloze_s, asked, wrote, kept, model_s = totals
    print(f"\nwithout a model: {cloze} cloze cards in {cloze_s:.2f} s = "
          f"{cloze / cloze_s * 60:,.0f} cards/min")  # fmt: skip
    print(f"with {CHAT_MODEL}: {wrote} of {asked} replies were cards, in {model_s:.1f} s = "
          f"{wrote / model_s * 60:.1f} cards/min; {kept} kept after the support check "
          f"({kept / wrote if wrote else 0:.0%}); every card's range an exact slice")  # fmt: skip
    print(f"ratio (no model / model, cards per minute): "
          f"{(cloze / cloze_s) / (wrote / model_s) if wrote else float('inf'):,.0f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
