"""Keyword terms of the search index: light stemming and stop words for Latin-script languages.

A document's terms are made by one *analyzer*, recorded with the document (`documents.terms_as`):

- "words": the terms of `tokenize` as they are (documents indexed before stemming; a notebook
  keeps searching them correctly until the background re-index has done them);
- "stem:<code>": lower-cased words without the language's stop words, stemmed with its Snowball
  stemmer (PyStemmer); "stem:" when no supported language was recognised (no stemming, no stop
  words). CJK runs stay character bigrams in every analyzer.

Terms of a stemming analyzer are stored with a mark naming their field: the word as written
("|trained"), its stem when different, with its language ("en~train"), and the words of the
title and section path ("^train"). They never mix with the unmarked terms of "words": a query is
analysed once per analyzer of its scope, and each document matches only its own kind of term.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

import Stemmer
import stopwords

from knownote.index.tokenize import tokenize

WORDS = "words"  # the analyzer of documents indexed before stemming
# Latin-script languages with both a Snowball stemmer and a stop-word list: ISO code -> name.
LANGUAGES = {
    "en": "english",
    "fr": "french",
    "de": "german",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "sv": "swedish",
    "da": "danish",
    "no": "norwegian",
    "fi": "finnish",
    "hu": "hungarian",
    "ro": "romanian",
    "tr": "turkish",
    "id": "indonesian",
    "ca": "catalan",
}
BODY, STEM, HEADING = "|", "~", "^"  # the field marks in a stored term
# Recognising a language: its stop words must be at least this share of the Latin words read.
MIN_STOP_SHARE = 0.12
MIN_WORDS = 30  # fewer Latin words (a CJK text quoting a few names): no stemming
SAMPLE_CHARS = 20_000
MAX_DROPPED_LENGTH = 3
_LATIN_WORD = re.compile(r"[a-zà-ÿāăąćčďđēėęěğīįıķļľłńņňőœŕřśşšţťūůűųźżž]")


def _fold(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


@functools.cache
def stop_words(code: str) -> frozenset[str]:
    """The language's stop words, folded as the tokenizer folds text (apostrophes dropped)."""
    words = set()
    for line in stopwords.get_stopwords(LANGUAGES[code]):
        words.update(tokenize(line))
    return frozenset(words)


@functools.cache
def dropped_words(code: str) -> frozenset[str]:
    """The stop words left out of the index: the short ones (articles, pronouns, the commonest
    prepositions and auxiliaries). Longer ones ("during", "between", "against") are kept: on
    held-out SQuAD questions, dropping them cost keyword search 5 points of MRR (README)."""
    return frozenset(w for w in stop_words(code) if len(w) <= MAX_DROPPED_LENGTH)


@functools.cache
def _stemmer(code: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(LANGUAGES[code])


def analyzer_for(text: str) -> str:
    """The analyzer for a document: "stem:<code>" of the language whose stop words are most
    frequent among its first words, or "stem:" when none is frequent enough."""
    words = [w for w in tokenize(text[:SAMPLE_CHARS]) if _LATIN_WORD.match(w)]
    if len(words) < MIN_WORDS:
        return "stem:"
    counts = Counter(words)
    best, hits = "", 0
    for code in LANGUAGES:
        n = sum(c for w, c in counts.items() if w in stop_words(code))
        if n > hits:
            best, hits = code, n
    return f"stem:{best}" if hits >= MIN_STOP_SHARE * len(words) else "stem:"


def _language(analyzer: str) -> str:
    """The language code of a stemming analyzer ('' for none, and for "words")."""
    return analyzer.removeprefix("stem:") if analyzer.startswith("stem:") else ""


def analyze(text: str, analyzer: str) -> list[tuple[str, str | None]]:
    """(word, its stem or None) for each term of a text: stop words out; the stem of a Latin
    word, None for CJK bigrams, numbers and every term of "words" or "stem:"."""
    tokens = tokenize(text)
    code = _language(analyzer)
    if analyzer == WORDS or not code:
        return [(t, None) for t in tokens]
    stops = dropped_words(code)
    kept = [t for t in tokens if t not in stops]
    stems: list[str | None] = [None] * len(kept)
    words = [i for i, t in enumerate(kept) if _LATIN_WORD.match(t)]
    if words:
        for i, stem in zip(words, _stemmer(code).stemWords([kept[i] for i in words]), strict=True):
            stems[i] = stem
    return list(zip(kept, stems, strict=True))


def text_terms(text: str, analyzer: str) -> tuple[dict[str, int], int]:
    """(stored terms of a passage's text with their counts, its length in terms).

    A stemming analyzer stores each word as written ("|trained", the same for every language,
    so that CJK bigrams, numbers and names are one term across a notebook) and, when its stem
    differs, the stem in a field of its own ("en~train"): an exact match counts fully, a match
    through the stem less (STEM_WEIGHT in knownote.search.retrieve).
    """
    terms = analyze(text, analyzer)
    if analyzer == WORDS:
        return dict(Counter(word for word, _ in terms)), len(terms)
    code = _language(analyzer)
    counts: Counter[str] = Counter()
    for word, stem in terms:
        counts[BODY + word] += 1
        if stem is not None and stem != word:
            counts[code + STEM + stem] += 1
    return dict(counts), len(terms)


def heading_terms(heading: str, analyzer: str) -> dict[str, int]:
    """Stored terms of a heading (document title and section path), words as written."""
    if analyzer == WORDS:
        return {}
    return dict(Counter(HEADING + word for word, _ in analyze(heading, analyzer)))


def passage_terms(text: str, heading: str, analyzer: str) -> tuple[dict[str, int], int]:
    """(stored terms of a passage, its length in text terms): its text's terms and its
    heading's (document title and section path), a field of their own. The length is the
    text's alone: BM25 normalises the text fields by it."""
    terms, n_terms = text_terms(text, analyzer)
    if analyzer != WORDS and heading:
        terms.update(_heading_terms(heading, analyzer))
    return terms, n_terms


@functools.lru_cache(maxsize=256)
def _heading_terms(heading: str, analyzer: str) -> tuple[tuple[str, int], ...]:
    """A heading's terms (the same for many passages in a row, so analysed once)."""
    return tuple(heading_terms(heading, analyzer).items())


# A query row: (stored term, count in the query, the query word it stands for, field weight,
# whether the field is normalised by the passage's length). Rows of one word add up (BM25F) and
# count once in its document frequency, whichever analyzer indexed the passage.
QueryRow = tuple[str, int, str, float, bool]


def query_terms(
    query: str, analyzers: Iterable[str], stem_weight: float, heading_weight: float
) -> list[QueryRow]:
    """The rows of a query for every analyzer of a scope (see `QueryRow`).

    A word that one of the scope's languages leaves out of its index is left out of the query
    for all (otherwise it would match only the passages of the other languages, as a rare word).
    """
    analyzers = sorted(set(analyzers))
    dropped = frozenset().union(*(dropped_words(_language(a)) for a in analyzers if _language(a)))
    fields: dict[str, dict[str, tuple[float, bool]]] = {}
    counts: dict[str, int] = {}
    for analyzer in analyzers:
        code = _language(analyzer)
        words = Counter(
            (w, s) for w, s in analyze(query, analyzer) if w not in dropped or analyzer == WORDS
        )
        for (word, stem), n in words.items():
            counts[word] = max(counts.get(word, 0), n)
            wanted = fields.setdefault(word, {})
            if analyzer == WORDS:
                wanted[word] = (1.0, True)
                continue
            wanted[BODY + word] = (1.0, True)
            wanted[HEADING + word] = (heading_weight, False)
            if stem is not None:
                wanted[code + STEM + stem] = (stem_weight, True)
                if stem != word:
                    wanted.setdefault(BODY + stem, (stem_weight, True))
    return [
        (term, counts[word], word, weight, normalise)
        for word, wanted in fields.items()
        for term, (weight, normalise) in wanted.items()
        if weight > 0
    ]
