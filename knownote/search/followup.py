"""The search behind an answer: the question as asked, fused with a follow-up's rewrite.

A small model may rewrite a follow-up into something unrelated (its own canned answer, another
topic); searching that alone finds the wrong documents. So the question itself is always
searched, a rewrite only beside it, and a rewrite that shares no word with the question or the
earlier turns is dropped. When the notebook's embedding server is down, the search falls back to
keywords and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knownote.errors import EmbeddingUnavailable
from knownote.index.embed import Embedder
from knownote.index.tokenize import tokenize
from knownote.search.retrieve import Hit, search
from knownote.store.db import Store

RRF_K = 60  # the usual reciprocal-rank-fusion constant
# How much a translation of the question counts in the fusion, against 1 for the question (and
# a follow-up's rewrite): less, so that a poor translation cannot outvote the question itself.
TRANSLATION_WEIGHT = 0.5
# Words too common to show that a rewrite is about the same thing as the conversation.
_COMMON = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "not",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yes",
        "no",
        "please",
        "sorry",
        "answer",
        "question",
    ]
)


@dataclass(frozen=True)
class Searched:
    """The hits, the queries searched (the question first) and a note for the user, if any."""

    hits: list[Hit]
    queries: tuple[str, ...]
    note: str | None = None


def content_terms(texts: Iterable[str]) -> set[str]:
    return {t for text in texts for t in tokenize(text) if t not in _COMMON and len(t) > 1}


def related(rewrite: str, question: str, earlier: Sequence[str]) -> bool:
    """Whether the rewrite shares a content word (or CJK bigram) with the question or the
    earlier turns."""
    return bool(content_terms([rewrite]) & content_terms([question, *earlier]))


def queries_for(question: str, rewrite: str | None, earlier: Sequence[str]) -> tuple[str, ...]:
    """The question, and the rewrite when it differs from it and is related to the chat."""
    if not rewrite or " ".join(rewrite.split()) == " ".join(question.split()):
        return (question,)
    if not related(rewrite, question, earlier):
        return (question,)
    return (question, rewrite)


def fuse_hits(
    rankings: Sequence[Sequence[Hit]], k: int, weights: Sequence[float] | None = None
) -> list[Hit]:
    """Reciprocal rank fusion, each ranking weighted (1 by default); the first ranking (the
    question's) wins ties."""
    scores: dict[int, float] = {}
    first: dict[int, Hit] = {}
    order: dict[int, tuple[int, int]] = {}
    for q, hits in enumerate(rankings):
        weight = 1.0 if weights is None else weights[q]
        for r, hit in enumerate(hits):
            scores[hit.passage_id] = scores.get(hit.passage_id, 0.0) + weight / (RRF_K + r + 1)
            first.setdefault(hit.passage_id, hit)
            order.setdefault(hit.passage_id, (r, q))
    ranked = sorted(scores, key=lambda pid: (-scores[pid], order[pid]))
    return [first[pid] for pid in ranked[:k]]


def search_queries(
    store: Store,
    embedder: Embedder,
    notebook_id: int,
    queries: Sequence[str],
    *,
    k: int,
    mode: str,
    document_ids: Sequence[int] | None,
    translations: Sequence[str] = (),
) -> Searched:
    """Search every query (and translation of the question, weighted TRANSLATION_WEIGHT) and
    fuse; keywords only, with a note, when the embedder is down."""
    note = None
    rankings = []
    weights = [1.0] * len(queries) + [TRANSLATION_WEIGHT] * len(translations)
    queries = (*queries, *translations)
    for query in queries:
        try:
            hits = search(store, embedder, notebook_id, query, k=k, mode=mode,
                          document_ids=document_ids)  # fmt: skip
        except EmbeddingUnavailable as e:
            note = f"{e} Searched by keywords only."
            mode = "keyword"
            hits = search(store, embedder, notebook_id, query, k=k, mode=mode,
                          document_ids=document_ids)  # fmt: skip
        rankings.append(hits)
    hits = rankings[0] if len(rankings) == 1 else fuse_hits(rankings, k, weights)
    return Searched(hits, tuple(queries), note)
