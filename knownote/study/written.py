"""Question-and-answer cards a model writes from a source's central passages, each answer checked.

The model gets one passage at a time and writes one question and its short answer. The answer
is then matched against that passage with the support spans answers get (`support_spans`): the
card's range is the span it leans on, an exact range of the stored text. A card whose answer has
no close match in its passage is kept marked (`supported` false) and never shown, reviewed,
quizzed or exported: a model's card is shown only with the words of the source behind it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knownote.answer.cite import SourcePassage
from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.overview import central_passages
from knownote.answer.prompts import Chat, without_thinking
from knownote.answer.quotes import display_text
from knownote.answer.support import support_spans
from knownote.read.roles import Roles
from knownote.store.db import Document, Passage, Store
from knownote.study.cards import QA, NewCard
from knownote.study.cloze import answer_kind

PASSAGES_PER_SOURCE = 4
ANSWER_TOKENS = 160
MAX_QUESTION = 300  # characters: a longer "question" is the model rambling
MAX_ANSWER = 300
CARD_PROMPT = """\
You write one flashcard for studying a document, from one passage of it.
Reply in exactly this form, in the language of the passage, and nothing else:
Q: a question that the passage answers
A: the answer, in a few words taken from the passage"""
# One worked example: small models follow a form shown far better than a form described.
EXAMPLE = [
    {"role": "user", "content": "Passage:\n\nThe bridge was opened in 1932 after eight years of "
     "work, and its steel arch spans 503 metres."},
    {"role": "assistant", "content": "Q: How long is the steel arch of the bridge?\nA: 503 metres"},
]  # fmt: skip
_Q = re.compile(r"^\s*\**\s*(?:Q|Question)\s*\d*\s*\**\s*[:：.]\**\s*(.+?)\s*$", re.I | re.M)
_A = re.compile(r"^\s*\**\s*(?:A|Answer)\s*\d*\s*\**\s*[:：.]\**\s*(.+?)\s*$", re.I | re.M)


@dataclass(frozen=True)
class Written:
    """What a model wrote for a source: its cards (supported or marked) and the passages asked."""

    cards: tuple[NewCard, ...]
    asked: int


def parse_card(reply: str) -> tuple[str, str] | None:
    """(question, answer) of a reply in the prompt's form; None when it holds no such pair."""
    text = without_thinking(reply)
    question, answer = _Q.search(text), _A.search(text)
    if question is None or answer is None:
        return None
    q, a = question.group(1).strip(), answer.group(1).strip()
    if not q or not a or len(q) > MAX_QUESTION or len(a) > MAX_ANSWER:
        return None
    return q, a


def checked_card(
    document: Document,
    passage: Passage,
    question: str,
    answer: str,
    model: str,
    roles: Roles | None = None,
) -> NewCard:
    """The card with its range: the span of `passage` its answer leans on (inside one role of
    the document's `roles`); marked unsupported when that span is no close match (or the answer
    has no words to match)."""
    source = SourcePassage(
        1, passage.id, document.id, document.title, passage.idx, passage.start, passage.end,
        passage.page_start, passage.page_end, passage.text, True,
    )  # fmt: skip
    in_roles = {document.id: roles} if roles else None
    supports = support_spans(f"{answer} [1]", [source], roles=in_roles)
    supported = bool(supports) and not any(s.weak for s in supports)
    start = min((s.start for s in supports), default=passage.start)
    end = max((s.end for s in supports), default=passage.end)
    return NewCard(
        document_id=document.id,
        start=start,
        end=end,
        kind=QA,
        front=display_text(question),
        back=display_text(answer),
        answer=answer,
        answer_kind=answer_kind(answer),
        language=(document.languages or ("",))[0],
        made_by=model,
        supported=supported,
        score=min((s.score for s in supports), default=0.0),
    )


def written_cards(
    store: Store, llm: Chat, model: str, document_id: int, k: int = PASSAGES_PER_SOURCE
) -> Written:
    """A card from each of the source's `k` most central passages that the model answers in
    the prompt's form. Raises ModelError or LLMUnavailable when the model cannot be used."""
    document = store.document(document_id)
    passages = store.passages(document_id)
    roles = Roles(store.roles(document_id))
    made = []
    indexes = central_passages(store, document_id, k)
    for i in indexes:
        passage = passages[i]
        messages = [
            {"role": "system", "content": CARD_PROMPT},
            *EXAMPLE,
            {"role": "user", "content": f"Passage:\n\n{passage.text.strip()}"},
        ]
        reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=ANSWER_TOKENS))
        pair = parse_card(reply)
        if pair is not None:
            made.append(checked_card(document, passage, *pair, model, roles))
    return Written(tuple(made), len(indexes))
