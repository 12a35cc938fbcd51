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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knownote.answer.cite import SourcePassage, chars_label, normalize_marks, page_label
from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.prompts import Chat, passage_header, without_thinking
from knownote.answer.quotes import display_text
from knownote.errors import ModelError
from knownote.index.embed import Embedder
from knownote.index.sentences import sentences as split_sentences
from knownote.index.sentences import shown_parts
from knownote.read.roles import PROSE, Roles
from knownote.store.db import Passage, Store

QUOTES = 3
CENTRAL_PASSAGES = 6  # the passages nearest the centre whose sentences are candidates
MIN_CHARS = 40  # shorter sentences are headings, captions or fragments
MAX_CHARS = 320
LETTERS = 0.5  # least share of letters in a sentence quoted ("& @ $ (-.45) + 4" is not one)
# Quoted where a document has no prose (a slide deck's captions); else nothing is quoted.
SAID_ELSE = frozenset({"caption", "footnote"})
PROSE_SHARE = 0.5  # passages less of whose text is prose are not drawn from, where others are
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
    skipped: tuple[tuple[int, int], ...] = ()  # page headers and footers inside, document offsets

    @property
    def shown(self) -> str:
        """The sentence on one line as quoted answers show it: a word hyphenated at a line
        wrap is whole ("comparing", not "compar- ing"), a page header or footer inside it "…"."""
        return " … ".join(display_text(part) for part in self.parts)

    @property
    def parts(self) -> list[str]:
        """The sentence's text without the page headers and footers inside it."""
        parts, at = [], self.start
        for a, b in self.skipped:
            parts.append(self.text[at - self.start : a - self.start])
            at = b
        parts.append(self.text[at - self.start :])
        return [p for p in parts if p.strip()]

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
    store: Store,
    embedder: Embedder,
    document_id: int,
    n: int = QUOTES,
    roles: Roles | None = None,
) -> list[Quote]:
    """The document's `n` sentences nearest to its centre, in reading order.

    They are drawn from its prose (body text and lists, by its `roles`, read from the store when
    not given): the passages nearest the centre that are mostly prose, and their prose sentences.
    A document without prose has its captions and footnotes quoted, else nothing: a table's
    cells, code, a reference list or page furniture are not sentences to quote.
    """
    vectors = store.vectors(document_id)
    passages = store.passages(document_id)
    if not len(passages) or vectors.shape[0] != len(passages):
        return []
    if roles is None:
        roles = Roles(store.roles(document_id))
    centre, order = by_centrality(vectors)
    nearest = prose_first(order, passages, roles)[:CENTRAL_PASSAGES]
    pages = store.pages(document_id)
    found = []  # (passage rank, sentence)
    for rank, i in enumerate(nearest):
        p = passages[i]
        for s in split_sentences(p.text, roles=roles, offset=p.start):
            said = " ".join(display_text(part) for part in shown_parts(p.text, s))
            if MIN_CHARS <= len(said) <= MAX_CHARS and _wordy(said):
                found.append((rank, s))
    # Prose, else captions and footnotes; never a table's cells, code or a reference as a sentence
    for kept in (PROSE, SAID_ELSE):
        if any(s.role in kept for _, s in found):
            found = [(rank, s) for rank, s in found if s.role in kept]
            break
    else:
        found = []
    candidates = []  # (passage rank, start, end, page, skipped)
    for rank, s in found:
        p = passages[nearest[rank]]
        start = p.start + s.start
        page = next((g.number for g in pages if g.start <= start < g.end), None)
        skipped = tuple((p.start + a, p.start + b) for a, b in s.skipped)
        candidates.append((rank, start, p.start + s.end, page, skipped))
    if not candidates:
        return []
    text = store.document_text(document_id)
    sentences = [text[a:b] for _, a, b, _, _ in candidates]
    shown = [
        " ".join(text[a:b] for a, b in _outside(start, end, skipped))
        for _, start, end, _, skipped in candidates
    ]
    scores = embedder.embed_passages(shown) @ centre
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
        Quote(document_id, a, b, sentences[i], page, float(scores[i]), skipped)
        for i, (_, a, b, page, skipped) in ((i, candidates[i]) for i in chosen)
    ]
    return sorted(quotes, key=lambda q: q.start)


def _wordy(text: str) -> bool:
    """Whether most of the text's characters are letters: not a formula, an axis or a table row
    read as body text."""
    chars = "".join(text.split())
    return sum(c.isalpha() for c in chars) >= LETTERS * len(chars)


def prose_first(order: Sequence[int], passages: Sequence[Passage], roles: Roles) -> list[int]:
    """Of the passages in `order`, those mostly prose (body text and lists: at least PROSE_SHARE
    of their characters), in that order; all of them when none is."""
    mostly = [
        int(i)
        for i in order
        if roles.share(passages[i].start, passages[i].end, PROSE) >= PROSE_SHARE
    ]
    return mostly or [int(i) for i in order]


def _outside(start: int, end: int, skipped: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """`[start, end)` without the `skipped` ranges."""
    out, at = [], start
    for a, b in skipped:
        out.append((at, a))
        at = b
    out.append((at, end))
    return [(a, b) for a, b in out if a < b]


def central_passages(store: Store, document_id: int, k: int = WRITTEN_FROM) -> list[int]:
    """Indexes of the document's `k` passages nearest its centre that are mostly prose (see
    `prose_first`), in reading order."""
    vectors = store.vectors(document_id)
    passages = store.passages(document_id)
    if not vectors.shape[0] or vectors.shape[0] != len(passages):
        return []
    order = by_centrality(vectors)[1]
    return sorted(prose_first(order, passages, Roles(store.roles(document_id)))[:k])


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
