"""Multiple-choice quizzes from a notebook's cards; the result names the spans to reread.

Each question is a card's front; the wrong choices are other cards' answers from the same
notebook, of the same kind (numbers with numbers, names with names, other words with words), in
the same language, and from cards of the same kind (a cloze term against cloze terms, a written
answer against written answers) when there are enough; never one that reads the same as the
right answer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from knownote.store.db import Store
from knownote.study.cards import Card, cards
from knownote.study.cloze import fold

QUESTIONS = 5
CHOICES = 4


@dataclass(frozen=True)
class Question:
    card: Card
    choices: tuple[str, ...]
    right: int  # index into choices

    @property
    def prompt(self) -> str:
        return self.card.front


@dataclass(frozen=True)
class QuizResult:
    right: int
    total: int
    reread: tuple[Card, ...]  # the cards answered wrongly (or not at all): their spans to reread


def _same(answer: str) -> str:
    return " ".join(fold(answer).split()).strip(" .,;:!?。")


def distractors(card: Card, pool: Sequence[Card], n: int, rng: random.Random) -> list[str]:
    """Up to `n` answers of other cards of the same kind, the closest kinds first."""
    right = _same(card.answer)
    tiers = [
        lambda c: c.answer_kind == card.answer_kind and c.kind == card.kind,
        lambda c: c.answer_kind == card.answer_kind,
        lambda c: c.kind == card.kind,
    ]
    chosen: list[str] = []
    seen = {right}
    for fits in tiers:
        found = [c.answer for c in pool if c.language == card.language and fits(c)]
        rng.shuffle(found)
        for answer in found:
            if len(chosen) == n:
                return chosen
            if _same(answer) not in seen:
                seen.add(_same(answer))
                chosen.append(answer)
    return chosen


def make_quiz(
    store: Store, notebook_id: int, n: int = QUESTIONS, seed: int | None = None
) -> list[Question]:
    """Up to `n` questions of the notebook's shown cards, each with up to CHOICES choices; a
    card no other answer can stand against is left out."""
    rng = random.Random(seed)
    pool = cards(store, notebook_id)
    order = list(pool)
    rng.shuffle(order)
    questions = []
    for card in order:
        wrong = distractors(card, pool, CHOICES - 1, rng)
        if not wrong:
            continue
        choices = [card.answer, *wrong]
        rng.shuffle(choices)
        questions.append(Question(card, tuple(choices), choices.index(card.answer)))
        if len(questions) == n:
            break
    return questions


def grade(questions: Sequence[Question], chosen: Sequence[int | None]) -> QuizResult:
    """The right answers among `chosen` (an index into each question's choices, None: not
    answered), and the cards of the others, whose spans are worth reading again."""
    wrong = tuple(q.card for q, c in zip(questions, chosen, strict=True) if c != q.right)
    return QuizResult(len(questions) - len(wrong), len(questions), wrong)
