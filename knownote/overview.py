"""A notebook at a glance without a model: each source's most central sentences, quoted.

The centre of a document is the mean of its passage vectors. The passages nearest to it are
split into sentences, the sentences are embedded, and the few nearest to the centre are quoted
with their offsets, so each quote resolves to exact characters like any citation. They are quotes
of the document, chosen by similarity: not a summary and not a judgement of what matters most.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knownote.embed import Embedder
from knownote.excerpt import page_label
from knownote.quotes import sentence_spans
from knownote.store import Store

QUOTES = 3
CENTRAL_PASSAGES = 6  # the passages nearest the centre whose sentences are candidates
MIN_CHARS = 40  # shorter sentences are headings, captions or fragments
MAX_CHARS = 320
SAME_PASSAGE_PENALTY = 0.05  # a little preference for quotes from different passages


@dataclass(frozen=True)
class Quote:
    """A sentence of a document: `text == document.text[start:end]`."""

    document_id: int
    start: int
    end: int
    text: str
    page: int | None
    score: float

    @property
    def where(self) -> str:
        parts = [page_label(self.page, self.page), f"chars {self.start:,}–{self.end:,}"]
        return " · ".join(p for p in parts if p)


def central_sentences(
    store: Store, embedder: Embedder, document_id: int, n: int = QUOTES
) -> list[Quote]:
    """The document's `n` sentences nearest to its centre, in reading order."""
    vectors = store.vectors(document_id)
    passages = store.passages(document_id)
    if not len(passages) or vectors.shape[0] != len(passages):
        return []
    centre = vectors.mean(axis=0)
    centre /= np.linalg.norm(centre) or 1.0
    nearest = np.argsort(-(vectors @ centre), kind="stable")[:CENTRAL_PASSAGES]
    pages = store.pages(document_id)
    candidates = []  # (passage rank, start, end, page)
    for rank, i in enumerate(nearest):
        p = passages[int(i)]
        for a, b in sentence_spans(p.text):
            if MIN_CHARS <= b - a <= MAX_CHARS:
                start = p.start + a
                page = next((g.number for g in pages if g.start <= start < g.end), None)
                candidates.append((rank, start, p.start + b, page))
    if not candidates:
        return []
    text = store.document_text(document_id)
    sentences = [text[a:b] for _, a, b, _ in candidates]
    scores = embedder.embed_passages(sentences) @ centre
    chosen: list[int] = []
    used: set[int] = set()
    while len(chosen) < min(n, len(candidates)):
        adjusted = [
            -np.inf if i in chosen else s - SAME_PASSAGE_PENALTY * (candidates[i][0] in used)
            for i, s in enumerate(scores)
        ]
        best = int(np.argmax(adjusted))
        chosen.append(best)
        used.add(candidates[best][0])
    quotes = [
        Quote(document_id, a, b, sentences[i], page, float(scores[i]))
        for i, (_, a, b, page) in ((i, candidates[i]) for i in chosen)
    ]
    return sorted(quotes, key=lambda q: q.start)
