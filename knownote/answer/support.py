"""Support spans: for each sentence of an answer, the sentence or clause of a passage it leans on.

An answer's sentences are split (ASCII and full-width punctuation, abbreviations, list lines),
and each is compared with the sentences (long ones cut into clauses) of the passages it cites;
a sentence without a mark is compared with every passage that was in front of the model and the
best span is offered as a suggestion. The score is the share of the sentence's keywords found in
the span (CJK as character bigrams, each keyword weighted by how rare it is among the candidate
spans, bigrams of hiragana only weighted down), plus half the share found only in the sentence
just before the span (the context it leans on), lowered when a number or a name of the sentence
is missing from the span. A best score under WEAK_SCORE is flagged "no close match": a note,
never a verdict.

With a notebook model that reads across languages (CLOSE_MEANING), a sentence in another
language than its passages (py3langid reads both) is matched by meaning: the cosine of its
vector and each span's, plus how well its tokens find theirs in the span (knownote.answer.
alignment) and a little of the word score, less a little for a span lacking a number of the
sentence or close to every other span; flagged under the model's closeness.
Only the passages such sentences cite pay for embedding their spans (once per answer).

Spans are `[start, end)` into the document text, always inside the passage they come from, so
`document.text[start:end] == passage.text[start - passage.start:end - passage.start]`.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knownote.answer.alignment import TokenEncoder, token_encoder, weighted_recall
from knownote.answer.cite import MARK, SourcePassage, Support, strip_marks
from knownote.index.embed import Embedder
from knownote.index.language import language_of
from knownote.index.sentences import SKIPPED, sentence_spans
from knownote.index.tokenize import tokenize
from knownote.read.roles import Roles
from knownote.settings import MULTILINGUAL

WEAK_SCORE = 0.20  # best support under this is flagged; tuned with `knownote eval-support`
MISSING_NUMBER = 0.6  # factor per number of the sentence that the span lacks
MISSING_NAME = 0.85  # factor per capitalised name of the sentence that the span lacks
PRECISION_WEIGHT = 0.15  # a little preference for spans that hold little else
MAX_SPAN = 260  # longer document sentences are also offered clause by clause
MIN_CLAUSE = 25
MAX_SENTENCE = 400  # longer answer "sentences" (no punctuation at all) are cut at clauses
CONTEXT_WEIGHT = 0.5  # terms of the sentence found only in the span just before count this much
KANA_WEIGHT = 0.5  # factor on a term made only of hiragana: Japanese particles and endings


# Per embedding model that reads across languages, the score (cosine + WORDS_ACROSS × word score)
# under which the span of an answer sentence in another language than its passages is flagged; a
# model not named here matches by words only. Tuned on questions 1-400 of xquad.en with answer
# sentences in German, Spanish and Russian (`knownote eval-support
# ../shared/corpus/qa_en/xquad.en.json --answers-from ../shared/corpus/qa_xx/xquad.de.json
# --max-questions 400`, and xquad.es, xquad.ru): it flags 0.3-5.5% of those sentences (Russian
# the most) and 85-86% of the unrelated ones. Within a language the words decide: the model's
# cosines run higher there and differ by language (flagged below 0.86, unrelated sentences: 95%
# in English, 61% in Chinese; below this 0.80: 74% and 0%).
CLOSE_MEANING = {MULTILINGUAL: 0.80}
# Across languages the words shared (names, numbers) add to the cosine this much: accuracy@1 on
# those questions 0.850-0.865 (cosine alone), 0.848-0.870 (words, else cosine) -> 0.880-0.892;
# Russian 0.808 -> 0.828.
WORDS_ACROSS = 0.2
# Across languages the cosine between a sentence and its neighbours in a passage differs by less
# than the model's translation noise (misses on questions 1-400: the sentence that restates the
# question beats the one holding the answer by 0.001-0.03). Two corrections, same questions:
# a span lacking a number of the sentence (digits are the same in every language) loses
# NUMBER_ACROSS each, where the word score's 0.2 share of it was lost among the words no span can
# hold; and a span close to every other candidate (a clause of names, "which had previously been
# offered by BSkyB.") loses GENERIC_ACROSS times how much closer than the average candidate it is
# to the others, as hubs are corrected in cross-language retrieval. accuracy@1 German 0.878 ->
# 0.893, Spanish 0.885 -> 0.893, Russian 0.825 -> 0.840.
NUMBER_ACROSS = 0.02
GENERIC_ACROSS = 0.2
# Across languages the sentence's token alignment with each span (BERTScore's recall over the
# model's layer-9 token states, knownote.answer.alignment) adds this much: the answer's words,
# a name or a number that hardly move a sentence's vector, find their tokens in the span that
# holds them. Tuned on questions 1-400 (docs/benchmarks.md). Each token of the sentence weighs by
# how much its best span stands out from the others (alignment.weighted_recall): the misses were
# spans that restate the question, whose tokens every span of the topic matches about as well,
# beating the one that holds the answer's few tokens. Same questions, accuracy@1 German / Spanish
# / Russian 0.915 / 0.920 / 0.908 -> 0.920 / 0.930 / 0.925 (weights not square-rooted: 0.913 /
# 0.935 / 0.923; by the spread of each token's cosines: 0.915 / 0.920 / 0.910).
ALIGNMENT_ACROSS = 1.0
# With the alignment the scores run higher: flagged under this instead of CLOSE_MEANING. Same
# questions: it flags 0.3-6.5% of those sentences (plain recall under 1.41: 0-5.5%) and 91-95% of
# the unrelated ones (plain recall: 88.5-94%; Spanish 0.885 -> 0.907: an unrelated Spanish
# sentence shares word pieces with many English spans, which the plain mean counted).
CLOSE_ALIGNED = {MULTILINGUAL: 1.42}
# A sentence most of whose keywords the spans hold is in their language: its language is not
# read (py3langid takes 1-3 s to load, ~0.2 ms a text). Same questions: no answer sentence of
# another language changes span above 0.6 (0.5: German accuracy@1 -0.005); English ones: 10%
# are under 0.74.
SAME_LANGUAGE_SHARE = 0.6

NO_CLOSE_MATCH = "no close match in the cited passages"
NO_CLOSE_MATCH_ANY = "no close match in the passages"
SUGGESTED = "suggested"

_CLAUSE = re.compile(r"[；;：:，,、]+[^\S\n]*")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af"
# Vertical or narrow CJK text comes out of a PDF a character or a few per line.
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_NAME = re.compile(r"(?<=[^\W\d_] )[A-Z][^\W\d_]+|(?<=[,;:] )[A-Z][^\W\d_]+")


def terms(text: str) -> set[str]:
    """The keywords of a text for matching: tokenize's, with CJK line wraps joined first."""
    return set(tokenize(_CJK_WRAP.sub("", text)))


_HIRAGANA = re.compile("[\u3041-\u309f]+")


def _kind_weight(term: str) -> float:
    """Terms made only of hiragana (particles, verb endings: "のは", "した") are weak evidence."""
    return KANA_WEIGHT if _HIRAGANA.fullmatch(term) else 1.0


def sentence_pieces(
    text: str, *, lines: bool = False, roles: Roles | None = None, offset: int = 0
) -> list[tuple[int, int]]:
    """[start, end) of each sentence of `text` (knownote.index.sentences), whitespace trimmed;
    marks that follow a sentence stay with it, and a "sentence" longer than MAX_SENTENCE (no
    punctuation at all) is cut at its clauses. `lines`: an answer, where each line break ends a
    sentence; `roles` and `offset`: a passage at `offset` of a document with those roles.
    """
    out = []
    for a, b in sentence_spans(text, roles=roles, offset=offset, lines=lines):
        out.extend(_clauses(text, a, b, MAX_SENTENCE, MAX_SENTENCE // 4))
    return out


def shown_span(text: str, start: int, roles: Roles) -> str:
    """A span's `text` (found at `start` of its document) as a reader is shown it: a page header
    or footer inside it as "…" (the span's offsets still cover it)."""
    parts, at = [], start
    for p in roles.pieces(start, start + len(text)):
        if p.role in SKIPPED and start < p.start and p.end < start + len(text):
            parts.append(text[at - start : p.start - start])
            at = p.end
    parts.append(text[at - start :])
    return " … ".join(" ".join(part.split()) for part in parts if part.strip())


def _trim(text: str, a: int, b: int) -> list[tuple[int, int]]:
    piece = text[a:b]
    lead = len(piece) - len(piece.lstrip())
    trail = len(piece) - len(piece.rstrip())
    return [(a + lead, b - trail)] if b - a - lead - trail > 0 else []


def _clause_pieces(text: str, a: int, b: int, shortest: int) -> list[tuple[int, int]]:
    """[a, b) cut after clause punctuation into pieces of at least `shortest` characters."""
    pieces = []
    start = a
    for m in _CLAUSE.finditer(text, a, b):
        if m.end() - start >= shortest and b - m.end() >= shortest:
            pieces.append((start, m.end()))
            start = m.end()
    pieces.append((start, b))
    return [t for lo, hi in pieces for t in _trim(text, lo, hi)]


def _clauses(text: str, a: int, b: int, longest: int, shortest: int) -> list[tuple[int, int]]:
    """[a, b) as it is when short enough, else cut at clauses (and cut hard where a piece has no
    punctuation at all)."""
    if b - a <= longest:
        return [(a, b)]
    out = []
    for lo, hi in _clause_pieces(text, a, b, shortest):
        for x in range(lo, hi, longest):
            out.extend(_trim(text, x, min(hi, x + longest)))
    return out


@dataclass(frozen=True)
class _Candidate:
    n: int
    document_id: int
    start: int  # into the document text
    end: int
    text: str
    terms: frozenset[str]


def candidates(
    passages: Sequence[SourcePassage], roles: dict[int, Roles] | None = None
) -> list[_Candidate]:
    """The sentences of each passage, and the clauses of long ones, once per document range.
    With a document's `roles`, no sentence runs across a change of role (a page header between
    two halves of one is run over: its range stays an exact slice of the text)."""
    roles = roles or {}
    found: list[_Candidate] = []
    seen: set[tuple[int, int, int]] = set()
    for p in passages:
        spans = []
        for a, b in sentence_pieces(p.text, roles=roles.get(p.document_id), offset=p.start):
            spans.append((a, b))
            if b - a > MAX_SPAN:
                spans.extend(s for s in _clause_pieces(p.text, a, b, MIN_CLAUSE) if s != (a, b))
        for a, b in spans:
            key = (p.document_id, p.start + a, p.start + b)
            words = frozenset(terms(p.text[a:b]))
            if key in seen or not words:
                continue
            seen.add(key)
            found.append(_Candidate(p.n, p.document_id, key[1], key[2], p.text[a:b], words))
    return found


def _previous(spans: Sequence[_Candidate]) -> np.ndarray:
    """For each span, the index of the span just before it in its passage (-1: none); of spans
    ending at the same place, the longest (the sentence rather than its last clause)."""
    out = np.full(len(spans), -1)
    by_passage: dict[int, list[int]] = {}
    for i, c in enumerate(spans):
        by_passage.setdefault(c.n, []).append(i)
    for ids in by_passage.values():
        ids.sort(key=lambda i: (spans[i].end, spans[i].end - spans[i].start))
        ends = [spans[i].end for i in ids]
        for i in ids:
            k = bisect.bisect_right(ends, spans[i].start)
            out[i] = ids[k - 1] if k else -1
    return out


class Scorer:
    """Scores sentences against the candidate spans of one answer's passages.

    An inverted index (term -> the spans holding it) makes a sentence cost one array update per
    distinct term, whatever the number of spans.
    """

    def __init__(self, spans: Sequence[_Candidate]) -> None:
        self.spans = list(spans)
        postings: dict[str, list[int]] = {}
        for i, c in enumerate(self.spans):
            for t in c.terms:
                postings.setdefault(t, []).append(i)
        n = len(self.spans)
        self.unseen = math.log(1 + n)
        self.postings = {t: np.array(ids) for t, ids in postings.items()}
        self.weights = {
            t: math.log(1 + n / (1 + len(ids))) * _kind_weight(t) for t, ids in postings.items()
        }
        self.span_weight = np.array(
            [sum(self.weights[t] for t in c.terms) for c in self.spans], dtype=float
        )
        self.passage = np.array([c.n for c in self.spans])
        self.start = np.array([c.start for c in self.spans])
        self.previous = _previous(self.spans)

    def best(self, sentence: str, allowed: set[int] | None = None) -> tuple[int, float] | None:
        """(index into spans, score) of the best span among passages `allowed` (None: all)."""
        score = self.scores(sentence)
        return None if score is None else best_allowed(score, self.passage, allowed)

    def share(self, sentence: str) -> float:
        """The share of the sentence's keywords that some span holds."""
        words = terms(sentence)
        return sum(t in self.postings for t in words) / len(words) if words else 0.0

    def scores(self, sentence: str) -> np.ndarray | None:
        """The score of every span for `sentence` (None: no keywords, or no spans)."""
        words = terms(sentence)
        if not words or not self.spans:
            return None
        ordered = sorted(words)
        held = np.zeros((len(ordered), len(self.spans)), dtype=bool)
        w = np.empty(len(ordered))
        for k, t in enumerate(ordered):
            w[k] = self.weights[t] if t in self.weights else self.unseen * _kind_weight(t)
            if t in self.postings:
                held[k, self.postings[t]] = True
        total = float(w.sum())
        shared = w @ held
        # What the span lacks but the sentence before it holds: the context it leans on
        # ("The result: both lost." after the sentence naming the election).
        context = np.zeros(len(self.spans))
        before = self.previous >= 0
        context[before] = w @ (held[:, self.previous[before]] & ~held[:, before])
        score = (1 - PRECISION_WEIGHT) * (
            shared + CONTEXT_WEIGHT * context
        ) / total + PRECISION_WEIGHT * shared / np.maximum(self.span_weight, 1e-9)
        names = {m.casefold() for m in _NAME.findall(sentence)}
        for t in words:  # numbers and names of the sentence that a span lacks
            factor = MISSING_NUMBER if t.isdigit() else MISSING_NAME if t in names else None
            if factor is not None:
                lacking = np.ones(len(self.spans), dtype=bool)
                if t in self.postings:
                    lacking[self.postings[t]] = False
                score[lacking] *= factor
        return score


def best_allowed(
    scores: np.ndarray, passage: np.ndarray, allowed: set[int] | None
) -> tuple[int, float] | None:
    """(index, score) of the best-scored span whose passage number (`passage`) is `allowed`
    (None: any); the first of equals, the best-ranked passage's span. None when none is."""
    if allowed is not None:
        scores = np.where(np.isin(passage, list(allowed)), scores, -np.inf)
    i = int(np.argmax(scores))
    return None if scores[i] == -np.inf else (i, float(scores[i]))


class MeaningScorer:
    """Matches a sentence to the span whose meaning is closest, by the cosine of their vectors
    from a model that reads across languages: where the words of an answer and its passages
    cannot match (a Chinese answer over English passages), the meaning still can."""

    def __init__(
        self,
        spans: Sequence[_Candidate],
        embedder: Embedder,
        close: float,
        aligned_close: float | None = None,
    ) -> None:
        self.spans = list(spans)
        self.embedder = embedder
        self.cosine_close = close
        self.aligned_close = aligned_close
        self.passage = np.array([c.n for c in self.spans])
        self._vectors: np.ndarray | None = None
        self._embedded = np.zeros(len(self.spans), dtype=bool)
        self._languages: dict[int, str | None] | None = None
        self._encoder: TokenEncoder | None = None  # made when a sentence needs it
        self._tokens: dict[int, np.ndarray] = {}  # span index -> its token states

    def across(self, sentence: str, allowed: set[int] | None = None) -> bool:
        """Whether the sentence is written in another language than every passage `allowed`
        (None: all) whose language can be read."""
        if self._languages is None:
            texts: dict[int, list[str]] = {}
            for c in self.spans:
                texts.setdefault(c.n, []).append(c.text)
            self._languages = {n: language_of(" ".join(t)) for n, t in texts.items()}
        read = {
            code
            for n, code in self._languages.items()
            if code is not None and (allowed is None or n in allowed)
        }
        own = language_of(sentence) if read else None
        return own is not None and own not in read

    @property
    def close(self) -> float:
        """The score under which a span is flagged: `aligned_close` where the token alignment
        counts, else the cosine's `close`."""
        if self.aligned_close is not None and self.encoder() is not None:
            return self.aligned_close
        return self.cosine_close

    def encoder(self) -> TokenEncoder | None:
        """The model's token states, None where they cannot be read (loaded on first use:
        answers within one language never need them)."""
        if self._encoder is None:
            self._encoder = token_encoder(self.embedder)
        return self._encoder

    def cosines(self, sentence: str, allowed: set[int] | None = None) -> np.ndarray:
        """The cosine of the sentence's vector and each span's of passages `allowed` (None:
        all); 0 for the others."""
        return self._compare(sentence, allowed)[0]

    def _compare(self, sentence: str, allowed: set[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """The cosines of `cosines`, and the sentence's token alignment with each span of
        passages `allowed` (0 for the others, and where the model's token states cannot be
        read)."""
        # Spans are embedded when first needed (~10 ms each): only the passages cited by a
        # sentence that needs meaning pay.
        wanted = ~self._embedded
        if allowed is not None:
            wanted &= np.isin(self.passage, list(allowed))
        encoder = self.encoder()
        if wanted.any():
            texts = [self.spans[i].text for i in np.flatnonzero(wanted)]
            if encoder is not None:
                vectors, tokens = encoder.encode(texts, self.embedder.passage_prefix)
                self._tokens.update(zip(np.flatnonzero(wanted).tolist(), tokens, strict=True))
            else:
                vectors = self.embedder.embed_passages(texts)
            if self._vectors is None:
                self._vectors = np.zeros((len(self.spans), vectors.shape[1]), dtype=vectors.dtype)
            self._vectors[wanted] = vectors
            self._embedded |= wanted
        aligned = np.zeros(len(self.spans))
        if self._vectors is None:
            return np.zeros(len(self.spans)), aligned
        if encoder is None:
            return self._vectors @ self.embedder.embed_query(sentence), aligned
        (question,), (tokens,) = encoder.encode([sentence], self.embedder.query_prefix)
        ids = [i for i in self._tokens if allowed is None or self.spans[i].n in allowed]
        aligned[ids] = weighted_recall(tokens, [self._tokens[i] for i in ids])
        return self._vectors @ question, aligned

    def best(
        self, sentence: str, allowed: set[int] | None = None, words: np.ndarray | None = None
    ) -> tuple[int, float] | None:
        """(index into spans, score) of the closest span among passages `allowed`: the cosine
        plus ALIGNMENT_ACROSS times the token alignment, plus WORDS_ACROSS times the spans' word
        scores `words` where given."""
        if not self.spans or not sentence.strip():
            return None
        cosines, aligned = self._compare(sentence, allowed)
        scores = cosines + ALIGNMENT_ACROSS * aligned - GENERIC_ACROSS * self.generality(allowed)
        if words is not None:
            scores = scores + WORDS_ACROSS * np.maximum(words, 0.0)
        for number in (t for t in terms(sentence) if t.isdigit()):
            scores -= NUMBER_ACROSS * np.array([number not in c.terms for c in self.spans])
        return best_allowed(scores, self.passage, allowed)

    def generality(self, allowed: set[int] | None = None) -> np.ndarray:
        """How much closer than the average span of passages `allowed` each of them is to the
        others (0 for the spans of other passages): a span close to everything says little."""
        out = np.zeros(len(self.spans))
        ids = np.flatnonzero(
            self._embedded
            if allowed is None
            else self._embedded & np.isin(self.passage, list(allowed))
        )
        if len(ids) < 3 or self._vectors is None:
            return out
        vectors = self._vectors[ids]
        mean = ((vectors @ vectors.T).sum(axis=1) - (vectors * vectors).sum(axis=1)) / (
            len(ids) - 1
        )
        out[ids] = mean - mean.mean()
        return out


def meaning_scorer(spans: Sequence[_Candidate], embedder: Embedder | None) -> MeaningScorer | None:
    """A MeaningScorer for models whose closeness has been measured (CLOSE_MEANING), else None;
    its closeness is CLOSE_ALIGNED's where the token alignment counts."""
    close = CLOSE_MEANING.get(embedder.name) if embedder is not None else None
    if close is None:
        return None
    return MeaningScorer(spans, embedder, close, CLOSE_ALIGNED.get(embedder.name))


def best_support(
    scorer: Scorer, meaning: MeaningScorer | None, sentence: str, allowed: set[int] | None
) -> tuple[int, float, bool] | None:
    """(span, score, weak) of a sentence: by its words, weak under WEAK_SCORE; or, written in
    another language than its passages, by meaning and words together, weak under the model's
    CLOSE_MEANING (few words can match, and those shared by chance, "die", "war", mislead)."""
    if (
        meaning is not None
        and scorer.share(sentence) < SAME_LANGUAGE_SHARE
        and meaning.across(sentence, allowed)
    ):
        found = meaning.best(sentence, allowed, scorer.scores(sentence))
        return None if found is None else (*found, found[1] < meaning.close)
    found = scorer.best(sentence, allowed)
    return None if found is None else (found[0], found[1], found[1] < WEAK_SCORE)


def support_spans(
    text: str,
    passages: Sequence[SourcePassage],
    embedder: Embedder | None = None,
    roles: dict[int, Roles] | None = None,
) -> tuple[Support, ...]:
    """The support of each sentence of an answer (`text` with canonical `[n]` marks).

    A sentence with marks is matched inside the passages it cites; one without marks inside all
    `passages`, and its support is a suggestion. Sentences without keywords get none. With the
    notebook's `embedder`, a sentence no span matches by its words is matched by meaning.
    `roles` (document id -> its roles) keeps spans inside one role.
    """
    if not text.strip() or not passages:
        return ()
    numbers = {p.n for p in passages}
    roles = roles or {}
    spans = candidates(passages, roles)
    scorer = Scorer(spans)
    meaning = meaning_scorer(spans, embedder)
    out = []
    for i, (a, b) in enumerate(sentence_pieces(text, lines=True)):
        sentence = text[a:b]
        cited = {int(m.group(1)) for m in MARK.finditer(sentence)} & numbers
        found = best_support(scorer, meaning, strip_marks(sentence), cited or None)
        if found is None:
            continue
        span, score, weak = found
        c = scorer.spans[span]
        shown = shown_span(c.text, c.start, roles[c.document_id]) if c.document_id in roles else ""
        out.append(
            Support(
                sentence=i,
                sentence_start=a,
                sentence_end=b,
                n=c.n,
                document_id=c.document_id,
                start=c.start,
                end=c.end,
                text=c.text,
                score=round(score, 4),
                suggested=not cited,
                weak=weak,
                shown="" if shown == " ".join(c.text.split()) else shown,
            )
        )
    return tuple(out)
