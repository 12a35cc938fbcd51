"""The answer without a model: the sentences of the passages most relevant to the question,
each followed by its [n], quoted as they stand (cut sentences marked with "…")."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knownote.answer.cite import strip_marks
from knownote.errors import EmbeddingUnavailable
from knownote.index.embed import Embedder
from knownote.index.tokenize import tokenize
from knownote.search.retrieve import Hit

MAX_SENTENCES = 5
MIN_SENTENCES = 3
MAX_QUOTE_CHARS = 1500
MAX_CANDIDATES = 60  # sentences embedded per extractive answer
KEYWORD_WEIGHT = 0.3  # keyword overlap (0..1) added to the cosine similarity
RANK_PENALTY = 0.02  # per place a passage is below the top one

_ENDERS = ".!?…。！？｡．"
_CLOSERS = "\"'”’»)\\]}」』）》〉】〕"
# Where a sentence ends: ASCII punctuation before whitespace that is not followed by a lower-case
# letter ("e.g. the", "et al. (2003)" stay whole), full-width punctuation, a blank line, or a
# line that starts a list item.
_SENTENCE_END = re.compile(
    rf"[.!?…]+[{_CLOSERS}]*(?:\[[^\]\n]{{1,30}}\])*(?=\s++(?![a-z(]))"
    rf"|[。！？｡．]+[{_CLOSERS}]*"
    r"|\n[^\S\n]*\n"
    r"|\n(?=[^\S\n]*(?:[-*•·▪]|\d+[.)])\s)"
)
_CJK_CHAR = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_WHOLLY_QUOTED = re.compile(r"[\"“«「『].*[\"”»」』][.。]?$")
_BULLET = re.compile(r"^(?:[-*•·▪]|\d+[.)])\s+")


@dataclass(frozen=True)
class _Sentence:
    rank: int  # 0-based passage rank
    position: int  # start within the passage text
    text: str  # as shown
    cut_before: bool
    cut_after: bool
    penalty: float  # cut by a passage boundary, a question, a lead-in to a list


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence in `text`, whitespace trimmed."""
    spans = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if b - a - lead - trail > 0:
            out.append((a + lead, b - trail))
    return out


def display_text(text: str) -> str:
    """A sentence as quoted: links shown as their text, citation-like marks removed, line
    wraps joined (a hyphen at a wrap before a lower-case letter is dropped)."""
    text = _MD_LINK.sub(r"\1", _MD_IMAGE.sub("", text))
    text = _BULLET.sub("", strip_marks(text).lstrip())
    text = re.sub(r"(?<=[a-z])-\n[^\S\n]*(?=[a-z])", "", text)
    text = re.sub(rf"(?<=[{_CJK_CHAR}])\s*\n\s*(?=[{_CJK_CHAR}])", "", text)
    return " ".join(text.split())


def _starts_sentence(text: str, document: str, offset: int) -> bool:
    """Whether `text`, found at `offset` of the document, begins a sentence: after a blank line,
    after a sentence end, or at a line start with a capital, digit, list mark or CJK character."""
    before = document[:offset].rstrip(" \t")
    if not before or re.search(r"\n[^\S\n]*\n$", before):
        return True
    if before.rstrip("\n").rstrip(_CLOSERS)[-1:] in set(_ENDERS):
        return True
    return before.endswith("\n") and bool(re.match(rf"[-*•·▪#\d\"“'‘(「『A-Z{_CJK_CHAR}]", text))


def _ends_sentence(text: str, document: str, offset: int) -> bool:
    """Whether `text`, ending at `offset` of the document, ends a sentence: with its punctuation,
    at a blank line, before a list item or at the end of the document."""
    if text.rstrip().rstrip(_CLOSERS)[-1:] in set(_ENDERS):
        return True
    after = document[offset:]
    return not after.strip() or bool(re.match(r"[^\S\n]*\n(?:[^\S\n]*\n|\s*[-*•·▪#])", after))


def _sentences(hits: Sequence[Hit], documents: dict[int, str]) -> list[_Sentence]:
    """Candidate sentences of the passages, best-ranked passages first, at most MAX_CANDIDATES."""
    found: list[_Sentence] = []
    for rank, hit in enumerate(hits):
        if len(found) >= MAX_CANDIDATES:
            break
        document = documents.get(hit.document_id, hit.text)
        base = hit.start if documents.get(hit.document_id) is not None else 0
        spans = sentence_spans(hit.text)
        for i, (a, b) in enumerate(spans):
            shown = display_text(hit.text[a:b])
            words = tokenize(shown)
            last = shown.rstrip(_CLOSERS)[-1:]
            if len(words) < 4 or (last not in _ENDERS and len(words) < 8):
                continue  # headings, captions, stray numbers
            numeric = "".join("9" if w.isdigit() else "a" for w in words)
            if numeric.count("9") > 0.3 * len(words) or "9999" in numeric:
                continue  # table rows, figure axes
            cut_before = i == 0 and not _starts_sentence(hit.text[a:b], document, base + a)
            cut_after = i == len(spans) - 1 and not _ends_sentence(
                hit.text[a:b], document, base + b
            )
            penalty = (
                0.05 * (cut_before + cut_after)
                + 0.25 * (last in "?？:：")  # a question or a list's lead-in answers nothing
                + 0.15 * bool(_WHOLLY_QUOTED.match(shown))  # a title in a reference list
            )
            found.append(_Sentence(rank, a, shown, cut_before, cut_after, penalty))
    return found


def _overlap_scores(query: str, sentences: Sequence[_Sentence]) -> np.ndarray:
    """Share of the query's keywords in each sentence, each keyword weighted by how rare it is
    among the candidate sentences (so "the" or "的" count for little)."""
    terms = set(tokenize(query))
    if not terms:
        return np.zeros(len(sentences))
    bags = [set(tokenize(s.text)) for s in sentences]
    n = len(bags)
    weight = {t: math.log(1 + n / (1 + sum(t in bag for bag in bags))) for t in terms}
    total = sum(weight.values())
    return np.array([sum(weight[t] for t in terms & bag) / total for bag in bags])


def _near_duplicate(a: str, b: str) -> bool:
    x, y = " ".join(tokenize(a)), " ".join(tokenize(b))
    if x in y or y in x:
        return True
    sa, sb = set(x.split()), set(y.split())
    return len(sa & sb) / max(1, len(sa | sb)) >= 0.6


def _choose(sentences: list[_Sentence], scores: np.ndarray) -> list[_Sentence]:
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].rank))
    chosen: list[int] = []
    best = scores[order[0]]
    size = 0
    for i in order:
        if len(chosen) >= MAX_SENTENCES or (chosen and size > MAX_QUOTE_CHARS):
            break
        if scores[i] < best - (0.35 if len(chosen) < MIN_SENTENCES else 0.15):
            break
        if any(_near_duplicate(sentences[i].text, sentences[j].text) for j in chosen):
            continue
        chosen.append(i)
        size += len(sentences[i].text)
    return [sentences[i] for i in chosen]


def extractive_answer(
    embedder: Embedder, query: str, hits: Sequence[Hit], documents: dict[int, str] | None = None
) -> tuple[str, set[int]]:
    """Quote the sentences of `hits` most relevant to `query`, each followed by its [n].

    Sentences are scored by embedding similarity to the query plus keyword overlap, with a small
    preference for higher-ranked passages; 3 to 5 are kept (no near-duplicates from overlapping
    passages) and shown in passage order, then in reading order. `documents` (id -> text) lets
    the quote mark sentences cut by a passage boundary with "…".

    Returns:
        The text and the set of passage numbers it cites.
    """
    if not hits:
        return "", set()
    candidates = _sentences(hits, documents or {})
    if not candidates:
        first = display_text(hits[0].text)
        short = first if len(first) <= 300 else first[:299].rstrip() + "…"
        return f"{short} [1]", {1}
    try:
        vectors = embedder.embed_passages([s.text for s in candidates])
        similarity = vectors @ embedder.embed_query(query)
    except EmbeddingUnavailable:  # the notebook's embedding server is down: keywords alone
        similarity = np.zeros(len(candidates))
    penalty = np.array([RANK_PENALTY * s.rank + s.penalty for s in candidates])
    scores = similarity + KEYWORD_WEIGHT * _overlap_scores(query, candidates) - penalty
    chosen = sorted(_choose(candidates, scores), key=lambda s: (s.rank, s.position))
    paragraphs: list[list[str]] = []
    last_rank = None
    for s in chosen:
        quote = ("…" if s.cut_before else "") + s.text + ("…" if s.cut_after else "")
        if s.rank != last_rank:
            paragraphs.append([])
            last_rank = s.rank
        paragraphs[-1].append(f"{quote} [{s.rank + 1}]")
    text = "\n\n".join(" ".join(p) for p in paragraphs)
    return text, {s.rank + 1 for s in chosen}
