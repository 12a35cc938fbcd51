"""A notebook at a glance: each source's most central sentences, and a model's overview.

The centre of a document is the mean of its passage vectors. The passages nearest to it are
split into sentences, the sentences are embedded, and the few nearest to the centre are quoted
with their offsets, so each quote resolves to exact characters like any citation. They are quotes
of the document, chosen by similarity: not a summary and not a judgement of what matters most.

With a model, the central passages are numbered like an answer's and the model writes a short
summary marked with their [n] and three questions a reader could ask; kept with the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from knownote.answer.cite import SourcePassage, chars_label, normalize_marks, page_label
from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.prompts import Chat, passage_header, without_thinking
from knownote.answer.quotes import display_text, sentence_spans
from knownote.errors import ModelError
from knownote.index.embed import Embedder
from knownote.store.db import Store

QUOTES = 3
CENTRAL_PASSAGES = 6  # the passages nearest the centre whose sentences are candidates
MIN_CHARS = 40  # shorter sentences are headings, captions or fragments
MAX_CHARS = 320
SAME_PASSAGE_PENALTY = 0.05  # a little preference for quotes from different passages
WRITTEN_FROM = 5  # central passages a model writes the overview from
QUESTIONS = 3
OVERVIEW_PROMPT = """\
You write a short overview of one document from numbered passages of it.
Reply in exactly this form, in the language of the passages:
SUMMARY: two or three sentences on what the document is about. After each sentence put the \
number of the passage it draws on in square brackets, like [2].
QUESTIONS:
- a question a reader could ask this document
- another question
- another question"""
_QUESTION_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)]|Q\d*[:.])?\s*(.+?)\s*$")


@dataclass(frozen=True)
class Overview:
    """A model's overview of a document: `summary` carries canonical [n] marks into `passages`."""

    document_id: int
    model: str
    summary: str
    questions: tuple[str, ...]
    passages: tuple[SourcePassage, ...]


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
    def shown(self) -> str:
        """The sentence on one line as quoted answers show it: a word hyphenated at a line
        wrap is whole ("comparing", not "compar- ing")."""
        return display_text(self.text)

    @property
    def where(self) -> str:
        parts = [page_label(self.page, self.page), chars_label(self.start, self.end)]
        return " · ".join(p for p in parts if p)


def by_centrality(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centre of a document's passage vectors (unit length) and the passages' positions,
    nearest to it first."""
    centre = vectors.mean(axis=0)
    centre /= np.linalg.norm(centre) or 1.0
    return centre, np.argsort(-(vectors @ centre), kind="stable")


def central_sentences(
    store: Store, embedder: Embedder, document_id: int, n: int = QUOTES
) -> list[Quote]:
    """The document's `n` sentences nearest to its centre, in reading order."""
    vectors = store.vectors(document_id)
    passages = store.passages(document_id)
    if not len(passages) or vectors.shape[0] != len(passages):
        return []
    centre, order = by_centrality(vectors)
    nearest = order[:CENTRAL_PASSAGES]
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


def central_passages(store: Store, document_id: int, k: int = WRITTEN_FROM) -> list[int]:
    """Indexes of the document's `k` passages nearest its centre, in reading order."""
    vectors = store.vectors(document_id)
    if not vectors.shape[0]:
        return []
    return sorted(int(i) for i in by_centrality(vectors)[1][:k])


def overview_passages(
    store: Store, document_id: int, indexes: list[int], cited: set[int] | None = None
) -> tuple[SourcePassage, ...]:
    """The passages an overview was written from, numbered [1]..[k] as the model saw them."""
    document = store.document(document_id)
    passages = store.passages(document_id)
    return tuple(
        SourcePassage(
            n, p.id, document_id, document.title, p.idx, p.start, p.end, p.page_start,
            p.page_end, p.text, cited is None or n in cited,
        )
        for n, p in enumerate((passages[i] for i in indexes), start=1)
    )  # fmt: skip


def parse_overview(reply: str, k: int) -> tuple[str, list[str]]:
    """The summary (canonical marks, numbers outside 1..k dropped) and up to three questions."""
    text = without_thinking(reply)
    head, *rest = re.split(r"(?im)^\s*\**questions\**\s*:?\**", text, maxsplit=1)
    tail = rest[0] if rest else ""
    summary = re.sub(r"(?is)^\s*\**summary\**\s*:?\**\s*", "", head).strip()
    summary, _, _ = normalize_marks(summary, k)
    questions = []
    for line in tail.splitlines():
        match = _QUESTION_LINE.match(line)
        if match and match.group(1).rstrip().endswith(("?", "？")):
            questions.append(match.group(1))
    return summary, questions[:QUESTIONS]


def write_overview(store: Store, llm: Chat, model: str, document_id: int) -> Overview:
    """Ask the model for the document's overview and keep it. Raises ModelError when the model
    fails or writes no summary."""
    indexes = central_passages(store, document_id)
    if not indexes:
        raise ModelError("This source has no passages to write an overview from.")
    passages = overview_passages(store, document_id, indexes)
    blocks = [f"{passage_header(p.n, p)}\n{p.text.strip()}" for p in passages]
    messages = [
        {"role": "system", "content": OVERVIEW_PROMPT},
        {"role": "user", "content": "Passages:\n\n" + "\n\n".join(blocks)},
    ]
    reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=512))
    summary, questions = parse_overview(reply, len(passages))
    if not summary:
        raise ModelError(f"{model} wrote no summary for this source; try again or another model.")
    store.save_overview(document_id, model, summary, questions, indexes)
    return load_overview(store, document_id)


def load_overview(store: Store, document_id: int) -> Overview | None:
    kept = store.overview(document_id)
    if kept is None:
        return None
    model, summary, questions, indexes = kept
    _, cited, _ = normalize_marks(summary, len(indexes))
    passages = overview_passages(store, document_id, indexes, set(cited))
    return Overview(document_id, model, summary, tuple(questions), passages)
