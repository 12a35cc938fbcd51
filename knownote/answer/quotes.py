"""The answer without a model: the sentences of the passages most relevant to the question,
each followed by its [n], quoted as they stand (cut sentences marked with "…").

The sentence that scores best leads, so the first thing a reader sees is most likely the answer;
the rest follow passage by passage. In a notebook of several languages a multilingual model
scores any sentence in the question's own language higher than a better one in another, so
there each sentence's vector is centred on its passage's language mean and the question's on
its own (knownote.index.centring), as retrieval does: on held-out German questions over English
answers beside German sources, the best sentence held the answer for 0.53 of them with plain
cosines, 0.64 centred, 0.70 with the weights below; the question's token alignment with each
sentence (knownote.answer.alignment) adds to that (docs/benchmarks.md). A sentence in another
language than the question is preceded by its language's name, "(English)", so a reader knows
why it is there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knownote.answer.alignment import recall, token_encoder
from knownote.answer.cite import strip_marks
from knownote.errors import EmbeddingUnavailable
from knownote.index.centring import LanguageMeans
from knownote.index.embed import Embedder
from knownote.index.language import language_name, language_of, question_language
from knownote.index.sentences import Sentence, shown_parts
from knownote.index.sentences import sentences as split_sentences
from knownote.index.tokenize import tokenize
from knownote.read.roles import MINOR, PROSE, Roles
from knownote.search.retrieve import Hit

MAX_SENTENCES = 5
MIN_SENTENCES = 3
MAX_QUOTE_CHARS = 1500
MAX_CANDIDATES = 60  # sentences embedded per extractive answer
KEYWORD_WEIGHT = 0.3  # keyword overlap (0..1) added to the cosine similarity
RANK_PENALTY = 0.02  # per place a passage is below the top one
# In a notebook of several languages, scored by centred cosines, shared words count only for
# sentences in the question's language, and less: counted for all, the question's grammar words
# ("die", "welchem") lift every sentence of a source in its language, the very bias centring
# removes; not counted at all, a question asked in its answer's language loses what its words
# tell. Passage rank counts less too.
MIXED_KEYWORD_WEIGHT = 0.15
MIXED_RANK_PENALTY = 0.01
# Across languages cosines are flat, and a sentence close to all its neighbours (one that sums up
# the topic) outscores the one that answers: the hubness of cross-lingual retrieval (CSLS, Conneau
# et al. 2018). There each sentence loses HUB_WEIGHT times its mean cosine with its closest
# HUB_NEIGHBOURS candidates. Within one language words carry the specifics: no change there, so
# not used.
# The mixed weights were chosen on held-out questions (101-632 of the German, Russian and Spanish
# mixed sets; 101-300 of the German one asked in English): first quote 0.693 with the weights of
# one language, 0.699 with the two above, 0.718 with hubness too (docs/benchmarks.md).
HUB_WEIGHT = 0.4
HUB_NEIGHBOURS = 5
# There too, each sentence gains this times its token alignment with the question (BERTScore's
# recall over the model's layer-9 token states, knownote.answer.alignment), less the mean of the
# sentences of its language. On held-out questions (101-300 of the German, Russian and Spanish
# mixed sets) the first quote held the answer for 0.725 of them without it, 0.760 with it
# (weights 0.5 and 1.5: 0.753 and 0.747; layers 8 and 10: 0.753 and 0.745; docs/benchmarks.md).
ALIGNMENT_WEIGHT = 1.0

_ENDERS = ".!?…。！？｡．"
_CLOSERS = "\"'”’»)\\]}」』）》〉】〕"
_CJK_CHAR = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_MD_EMPHASIS = re.compile(r"\*\*(?=\S)([^\n]+?)(?<=\S)\*\*")
_WHOLLY_QUOTED = re.compile(r"[\"“«「『].*[\"”»」』][.。]?$")
TABLE_CHARS = 600  # of a table quoted (its rows)
# Not quoted as sentences when the passages hold prose (knownote.read.roles).
UNQUOTED = MINOR | {"heading", "formula", "code", "figure"}
_BULLET = re.compile(r"^(?:[-*•·▪]|\d+[.)])\s+")
# What precedes a quote from a source in another language than the question: "(English) ".
LANGUAGE_MARK = re.compile(r"^\((\w+)\) ")


@dataclass(frozen=True)
class _Sentence:
    rank: int  # 0-based passage rank
    position: int  # start within the passage text
    text: str  # as shown
    cut_before: bool
    cut_after: bool
    penalty: float  # cut by a passage boundary, a question, a lead-in to a list
    language: str | None = None  # its passage's language


def display_text(text: str) -> str:
    """A sentence as quoted: links shown as their text, bold Markdown as its text, citation-like
    marks removed, line wraps joined (a hyphen at a wrap before a lower-case letter is dropped)."""
    text = _MD_EMPHASIS.sub(r"\1", _MD_LINK.sub(r"\1", _MD_IMAGE.sub("", text)))
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


def shown_sentence(text: str, sentence: Sentence) -> str:
    """A sentence as quoted (`display_text`), a page header or footer it runs over shown as
    "…"."""
    return " … ".join(display_text(part) for part in shown_parts(text, sentence))


def _table_rows(text: str, sentence: Sentence) -> str:
    """A table's range as quoted: its rows (lines) on one line, cells as they stand, cut after
    TABLE_CHARS."""
    rows = [" ".join(line.split()) for line in text[sentence.start : sentence.end].splitlines()]
    shown = " · ".join(row for row in rows if row)
    return shown if len(shown) <= TABLE_CHARS else shown[: TABLE_CHARS - 1].rstrip() + "…"


def _sentences(
    hits: Sequence[Hit], documents: dict[int, str], roles: dict[int, Roles] | None = None
) -> list[_Sentence]:
    """Candidate sentences of the passages, best-ranked passages first, at most MAX_CANDIDATES.

    With the documents' `roles`, a table is quoted as a table (its rows), never as sentences, and
    parts that are not read as prose (an author block, a reference entry, navigation, a page
    header) are left out when the passages hold prose."""
    roles = roles or {}
    split = [
        split_sentences(hit.text, roles=roles.get(hit.document_id), offset=hit.start)
        for hit in hits
    ]
    prose = any(s.role in PROSE for spans in split for s in spans)
    found: list[_Sentence] = []
    for rank, (hit, spans) in enumerate(zip(hits, split, strict=True)):
        if len(found) >= MAX_CANDIDATES:
            break
        document = documents.get(hit.document_id, hit.text)
        base = hit.start if documents.get(hit.document_id) is not None else 0
        spans = _tables_whole(spans)
        for i, sentence in enumerate(spans):
            a, b = sentence.start, sentence.end
            table = sentence.role == "table"
            if prose and sentence.role in UNQUOTED:
                continue
            shown = _table_rows(hit.text, sentence) if table else shown_sentence(hit.text, sentence)
            words = tokenize(shown)
            last = shown.rstrip(_CLOSERS)[-1:]
            if len(words) < 4 or (last not in _ENDERS and len(words) < 8 and not table):
                continue  # headings, captions, stray numbers
            if not table and _mostly_numbers(shown):
                continue  # table rows, figure axes (of a document without roles)
            cut_before = i == 0 and not _starts_sentence(hit.text[a:b], document, base + a)
            cut_after = i == len(spans) - 1 and not _ends_sentence(
                hit.text[a:b], document, base + b
            )
            penalty = (
                0.05 * (cut_before + cut_after)
                + 0.25 * (last in "?？:：")  # a question or a list's lead-in answers nothing
                + 0.15 * bool(_WHOLLY_QUOTED.match(shown))  # a title in a reference list
            )
            found.append(_Sentence(rank, a, shown, cut_before, cut_after, penalty, hit.language))
    return found


def _mostly_numbers(shown: str) -> bool:
    """Whether a sentence reads as a table row or a figure's axis: more numbers than words, or
    four numbers in a row. Numbers are counted as written ("711,988", "56.2%", "20–18" one
    each): counted as the tokenizer's pieces, "Tesla died on 7 January 1943." and a census
    sentence of figures were taken for table rows and never quoted."""
    kinds = [
        "9" if any(c.isdigit() for c in w) and not any(c.isalpha() for c in w) else "a"
        for w in shown.split()
        if any(c.isalnum() for c in w)
    ]
    numbers = kinds.count("9")
    return numbers > len(kinds) - numbers or "9999" in "".join(kinds)


def _tables_whole(spans: list[Sentence]) -> list[Sentence]:
    """Each table's consecutive pieces as one."""
    out: list[Sentence] = []
    for s in spans:
        if out and s.role == "table" and out[-1].role == "table":
            out[-1] = Sentence(out[-1].start, s.end, "table")
        else:
            out.append(s)
    return out


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


def _similarity(
    embedder: Embedder, query: str, candidates: Sequence[_Sentence], means: LanguageMeans | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sentence's cosine with the query, its hubness and its token alignment (both 0 unless
    centred): in a notebook of several languages, cosines of vectors centred per language, the
    mean cosine of each sentence with its HUB_NEIGHBOURS closest candidates, and how well the
    query's tokens find theirs in the sentence, less the mean of the sentences of its language
    (knownote.answer.alignment; 0 where the model's token states cannot be read)."""
    texts = [s.text for s in candidates]
    none = np.zeros(len(candidates))
    encoder = token_encoder(embedder) if means is not None and means.mixed else None
    if encoder is None:
        vectors, question = embedder.embed_passages(texts), embedder.embed_query(query)
        aligned = none
    else:
        vectors, tokens = encoder.encode(texts, embedder.passage_prefix)
        (question,), (asked,) = encoder.encode([query], embedder.query_prefix)
        aligned = _by_language(recall(asked, tokens), [s.language for s in candidates])
    if means is None or not means.mixed or means.means.shape[1] != vectors.shape[1]:
        return vectors @ question, none, none
    rows = means.rows([s.language for s in candidates])
    vectors = np.asarray(vectors, np.float32)
    similarity = means.scores(vectors, rows, means.query(question, query))
    centred = vectors - means.means[rows]
    centred /= np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-6)
    near = centred @ centred.T
    np.fill_diagonal(near, -np.inf)
    k = min(HUB_NEIGHBOURS, len(candidates) - 1)
    hubness = np.sort(near, axis=1)[:, -k:].mean(axis=1) if k > 0 else none
    return similarity, hubness, aligned


def _by_language(scores: np.ndarray, languages: Sequence[str | None]) -> np.ndarray:
    """`scores` less the mean of the scores of the same language: a sentence in the question's
    language aligns token for token more than any sentence in another, whatever it says."""
    out = scores.copy()
    groups = np.array([language or "" for language in languages])
    for language in set(groups):
        same = groups == language
        out[same] -= scores[same].mean()
    return out


def question_language_among(
    query: str, hits: Sequence[Hit], means: LanguageMeans | None = None
) -> str | None:
    """The question's language: of the notebook's and the passages' languages, the one it reads
    as, else the one it reads as at all (a German question over English sources); None when it
    cannot be told."""
    held = {h.language for h in hits if h.language}
    if means is not None:
        held |= set(means.held)
    return question_language(query, sorted(held)) or language_of(query)


def _arranged(chosen: Sequence[_Sentence]) -> list[list[_Sentence]]:
    """Paragraphs of the chosen sentences (best first): the best leads, followed by the other
    sentences of its passage in reading order; then each other passage's sentences in reading
    order, the passage of the better sentence first."""
    by_passage: dict[int, list[_Sentence]] = {}
    for s in chosen:
        by_passage.setdefault(s.rank, []).append(s)
    paragraphs = []
    for i, sentences in enumerate(by_passage.values()):
        if i == 0:
            lead, rest = sentences[0], sentences[1:]
            paragraphs.append([lead, *sorted(rest, key=lambda s: s.position)])
        else:
            paragraphs.append(sorted(sentences, key=lambda s: s.position))
    return paragraphs


def _quoted(s: _Sentence, asked: str | None) -> str:
    quote = ("…" if s.cut_before else "") + s.text + ("…" if s.cut_after else "")
    if asked is not None and s.language is not None and s.language != asked:
        # Before the sentence, not after its mark: what follows a mark starts the next sentence
        # where answers are split (support spans, knownote.answer.support).
        quote = f"({language_name(s.language)}) {quote}"
    return f"{quote} [{s.rank + 1}]"


def extractive_answer(
    embedder: Embedder,
    query: str,
    hits: Sequence[Hit],
    documents: dict[int, str] | None = None,
    means: LanguageMeans | None = None,
    roles: dict[int, Roles] | None = None,
) -> tuple[str, set[int]]:
    """Quote the sentences of `hits` most relevant to `query`, each followed by its [n].

    Sentences are scored by embedding similarity to the query plus keyword overlap, with a small
    preference for higher-ranked passages; 3 to 5 are kept (no near-duplicates from overlapping
    passages). The best leads, then the rest of its passage, then the other passages' (see
    `_arranged`). `documents` (id -> text) lets the quote mark sentences cut by a passage
    boundary with "…". With the notebook's language `means` (knownote.search.retrieve.
    language_means), sentences of different languages are scored on the same footing; a sentence
    in another language than the question is marked with its language's name. With the
    documents' `roles` (id -> Roles), quotes are drawn from prose (see `_sentences`).

    Returns:
        The text and the set of passage numbers it cites.
    """
    if not hits:
        return "", set()
    candidates = _sentences(hits, documents or {}, roles)
    if not candidates:
        first = display_text(hits[0].text)
        short = first if len(first) <= 300 else first[:299].rstrip() + "…"
        whole = _Sentence(0, 0, short, False, False, 0.0, hits[0].language)
        return _quoted(whole, question_language_among(query, hits, means)), {1}
    mixed = means is not None and means.mixed
    try:
        similarity, hubness, aligned = _similarity(embedder, query, candidates, means)
    except EmbeddingUnavailable:  # the notebook's embedding server is down: keywords alone
        similarity = hubness = aligned = np.zeros(len(candidates))
        mixed = False
    keywords, per_rank = (
        (MIXED_KEYWORD_WEIGHT, MIXED_RANK_PENALTY) if mixed else (KEYWORD_WEIGHT, RANK_PENALTY)
    )
    asked = question_language_among(query, hits, means)
    overlap = _overlap_scores(query, candidates)
    if mixed:
        overlap *= np.array([s.language == asked for s in candidates])
    penalty = np.array([per_rank * s.rank + s.penalty for s in candidates])
    scores = (
        similarity
        + keywords * overlap
        - penalty
        - HUB_WEIGHT * hubness
        + ALIGNMENT_WEIGHT * aligned
    )
    chosen = _choose(candidates, scores)
    text = "\n\n".join(
        " ".join(_quoted(s, asked) for s in paragraph) for paragraph in _arranged(chosen)
    )
    return text, {s.rank + 1 for s in chosen}
