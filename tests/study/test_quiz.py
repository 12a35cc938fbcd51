"""Quizzes: choices of the same kind from the same notebook, and the spans to reread."""

from __future__ import annotations

import random
from dataclasses import replace

from knownote.study.cards import NAME, NUMBER, WORD, cards
from knownote.study.quiz import CHOICES, distractors, grade, make_quiz


def test_each_question_has_its_right_answer_among_other_answers_of_the_notebook(studied):
    store, notebook, _ = studied
    made = cards(store, notebook.id)
    quiz = make_quiz(store, notebook.id, n=5, seed=7)
    assert len(quiz) == 5 and len({q.card.id for q in quiz}) == 5
    answers = {c.answer for c in made}
    for q in quiz:
        assert q.choices[q.right] == q.card.answer and q.prompt == q.card.front
        assert 2 <= len(q.choices) <= CHOICES and set(q.choices) <= answers
        folded = [c.casefold() for c in q.choices]
        assert len(set(folded)) == len(folded)


def test_the_same_seed_gives_the_same_quiz(studied):
    store, notebook, _ = studied
    first = make_quiz(store, notebook.id, seed=3)
    assert [(q.card.id, q.choices) for q in make_quiz(store, notebook.id, seed=3)] == [
        (q.card.id, q.choices) for q in first
    ]


def test_distractors_are_numbers_for_a_number_and_names_for_a_name(studied):
    store, notebook, _ = studied
    card = cards(store, notebook.id)[0]
    pool = [
        replace(card, id=i, answer=a, answer_kind=k)
        for i, (a, k) in enumerate(
            [("1999", NUMBER), ("Disney", NAME), ("2004", NUMBER), ("Lessig", NAME),
             ("piracy", WORD), ("42", NUMBER), ("Hollywood", NAME), ("1,000", NUMBER)],
            start=100,
        )
    ]  # fmt: skip
    number = replace(card, answer="1789", answer_kind=NUMBER)
    name = replace(card, answer="Mickey", answer_kind=NAME)
    assert set(distractors(number, pool, 3, random.Random(1))) <= {"1999", "2004", "42", "1,000"}
    assert set(distractors(name, pool, 3, random.Random(1))) == {"Disney", "Lessig", "Hollywood"}


def test_distractors_keep_to_the_card_s_language_and_never_repeat_the_answer(studied):
    store, notebook, _ = studied
    card = cards(store, notebook.id)[0]
    pool = [
        replace(card, id=200, answer="propriété", language="fr"),
        replace(card, id=201, answer=card.answer.upper()),
        replace(card, id=202, answer="culture"),
    ]
    assert distractors(card, pool, 3, random.Random(0)) == (
        [] if card.answer.casefold() == "culture" else ["culture"]
    )


def test_the_result_names_the_spans_to_reread(studied):
    store, notebook, _ = studied
    quiz = make_quiz(store, notebook.id, n=4, seed=11)
    chosen = [q.right for q in quiz[:2]] + [(quiz[2].right + 1) % len(quiz[2].choices), None]
    result = grade(quiz, chosen)
    assert (result.right, result.total) == (2, 4)
    assert [c.id for c in result.reread] == [quiz[2].card.id, quiz[3].card.id]
    for c in result.reread:
        assert store.document_text(c.document_id)[c.start : c.end]
        assert c.citation.startswith(c.title)
