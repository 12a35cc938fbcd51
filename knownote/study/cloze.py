"""Cloze cards without a model: a source's central sentences, each with its weightiest term blanked.

The sentences are the overview's (`central_sentences`: nearest the centre of the document's passage
vectors, drawn from its body text), so each is an exact range of the stored text; a page header or
footer a sentence runs over is shown as "…" and never blanked. The term blanked is the one the
keyword index weighs most: how many of this source's passages hold it (1 + log), times how rare it
is in the notebook (the log of passages per passage holding it), stop words left out, times a
preference for what makes an answer worth recalling (`preference`: numbers first, short words last;
in a notebook of two sources "also" is as rare as "gravity"). Its own range is kept too:
`text[answer_start:answer_end]` is the answer as written.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from knownote.answer.overview import Quote, central_sentences
from knownote.answer.quotes import display_text
from knownote.index.analyze import BODY, LANGUAGES, WORDS, stop_words
from knownote.index.embed import Embedder
from knownote.index.tokenize import mostly_cjk
from knownote.read.roles import Roles
from knownote.store.db import Document, Store, term_key
from knownote.study.cards import BLANK, CLOZE, NAME, NUMBER, SENTENCES, WORD, NewCard

CARDS_PER_SOURCE = 6
CANDIDATES = 16  # central sentences looked at for each source's cards
MIN_LETTERS = 3  # shorter words are not worth a card ("a", "of", "TV")
FULL_LETTERS = 6  # a shorter word's weight is cut in proportion ("also" 4/6, "gravity" whole)
NUMBER_PREFERENCE = 1.5
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"([{_CJK}]+)|((?:(?![{_CJK}])[^\W_])+)")
# What a card does not show (display_text drops Markdown link targets and images): never blanked.
_HIDDEN = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)|\]\([^)\s]*\)|https?://\S+")


@dataclass(frozen=True)
class Token:
    """A blankable term of a sentence: `[start, end)` into the sentence; `term` as indexed."""

    start: int
    end: int
    term: str


def fold(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def tokens(sentence: str) -> list[Token]:
    """The sentence's words (CJK runs as character pairs, as the index holds them), but not
    those of link targets and addresses."""
    found = []
    for match in _TOKEN.finditer(sentence):
        if match.group(1):
            run = match.group(1)
            found += [
                Token(match.start() + i, match.start() + i + 2, fold(run[i : i + 2]))
                for i in range(len(run) - 1)
            ]
        else:
            found.append(Token(match.start(), match.end(), fold(match.group(2))))
    hidden = [m.span() for m in _HIDDEN.finditer(sentence)]
    return [t for t in found if not any(a < t.end and t.start < b for a, b in hidden)]


def answer_kind(answer: str, sentence_start: bool = False) -> str:
    """'number' (it holds a digit), 'name' (capitalised, not only for starting a sentence) or
    'word': quizzes offer answers of the same kind."""
    if any(ch.isdigit() for ch in answer):
        return NUMBER
    words = answer.split()
    if words and all(w[:1].isupper() for w in words) and not (sentence_start and len(words) == 1):
        return NAME
    return WORD


def _stored(term: str, analyzer: str) -> str:
    return term if analyzer == WORDS else BODY + term


def blankable(token: Token, language: str) -> bool:
    if token.term.isdigit():
        return len(token.term) >= 2
    if mostly_cjk(token.term):
        return True
    stops = stop_words(language) if language in LANGUAGES else frozenset()
    return len(token.term) >= MIN_LETTERS and token.term not in stops


def preference(term: str) -> float:
    """How much a term is preferred as an answer, beside its keyword weight."""
    if term.isdigit():
        return NUMBER_PREFERENCE
    return 1.0 if mostly_cjk(term) else min(1.0, len(term) / FULL_LETTERS)


def term_weights(store: Store, document: Document, terms: set[str]) -> dict[str, float]:
    """The keyword weight of each term in this source's notebook (see the module's doc)."""
    if not terms:
        return {}
    stored = {_stored(t, document.terms_as): t for t in terms}
    keys = ", ".join(str(term_key(t)) for t in stored)
    with store.lock:
        (passages,) = store.db.execute(
            "SELECT count(*) FROM passages WHERE notebook_id = ?", [document.notebook_id]
        ).fetchall()[0]
        rows = store.db.execute(
            f"SELECT t.term, count(*), count(*) FILTER (WHERE p.document_id = ?) "
            f"FROM passage_terms t JOIN passages p ON p.id = t.passage_id "
            f"WHERE t.term_key IN ({keys}) AND t.notebook_id = ? GROUP BY t.term",
            [document.id, document.notebook_id],
        ).fetchall()
    weights = {}
    for term, held, here in rows:
        if term in stored and here:
            term = stored[term]
            weights[term] = (1 + math.log(here)) * math.log(1 + passages / held) * preference(term)
    return weights


def _blanked(sentence: str, same: list[Token]) -> str:
    front, cut = sentence, len(sentence)
    for t in sorted(same, key=lambda t: -t.start):  # every occurrence, or the answer shows
        if t.end <= cut:  # CJK pairs of one run may overlap ("aaa")
            front, cut = front[: t.start] + BLANK + front[t.end :], t.start
    return front


def _shown(quote: Quote, same: list[Token]) -> str:
    """The sentence as the card shows it, `same` blanked and page furniture inside it as "…"."""
    parts, at = [], 0
    for a, b in [(a - quote.start, b - quote.start) for a, b in quote.skipped]:
        parts.append((at, a))
        at = b
    parts.append((at, len(quote.text)))
    shown = []
    for a, b in parts:
        inside = [Token(t.start - a, t.end - a, t.term) for t in same if a <= t.start < b]
        part = _blanked(quote.text[a:b], inside)
        if part.strip():
            shown.append(display_text(part))
    return " … ".join(shown)


def _card(document: Document, quote: Quote, token: Token, same: list[Token]) -> NewCard:
    sentence = quote.text
    answer = sentence[token.start : token.end]
    first = not sentence[: token.start].strip()
    return NewCard(
        document_id=document.id,
        start=quote.start,
        end=quote.end,
        kind=CLOZE,
        front=_shown(quote, same),
        back=quote.shown,
        answer=answer,
        answer_kind=answer_kind(answer, sentence_start=first),
        language=(document.languages or ("",))[0],
        made_by=SENTENCES,
        answer_start=quote.start + token.start,
        answer_end=quote.start + token.end,
    )


def _said(quote: Quote, token: Token) -> bool:
    """Whether the token is the sentence's own, not a page header's or footer's inside it."""
    at = quote.start + token.start
    return not any(a <= at < b for a, b in quote.skipped)


def cloze_cards(
    store: Store,
    embedder: Embedder,
    document_id: int,
    n: int = CARDS_PER_SOURCE,
    roles: Roles | None = None,
) -> list[NewCard]:
    """Up to `n` cloze cards of the source's most central sentences of prose (by its `roles`,
    read from the store when not given), in reading order."""
    document = store.document(document_id)
    language = (document.languages or ("",))[0]
    quotes = central_sentences(store, embedder, document_id, n=CANDIDATES, roles=roles)
    found = {
        id(q): [t for t in tokens(q.text) if blankable(t, language) and _said(q, t)] for q in quotes
    }
    weights = term_weights(store, document, {t.term for ts in found.values() for t in ts})
    made: list[NewCard] = []
    blanked: set[str] = set()  # a term blanked once is not asked again in this source
    for quote in sorted(quotes, key=lambda q: -q.score):
        weighed = [t for t in found[id(quote)] if t.term in weights]
        if not [t for t in weighed if t.term not in blanked]:
            continue
        best = max(
            (t for t in weighed if t.term not in blanked), key=lambda t: (weights[t.term], -t.start)
        )
        blanked.add(best.term)
        made.append(_card(document, quote, best, [t for t in weighed if t.term == best.term]))
        if len(made) == n:
            break
    return sorted(made, key=lambda c: c.start)
