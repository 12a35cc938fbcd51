"""Question-and-answer cards a model writes: each answer checked against its passage, the card's
range the span it leans on; with Ollama's API (the stand-in) and the real small engine."""

from __future__ import annotations

import pytest

from knownote.answer.ollama_chat import OllamaChat
from knownote.answer.openai_chat import OpenAIChat
from knownote.answer.servers import AnswerServers
from knownote.settings import Settings
from knownote.study.cards import QA, cards
from knownote.study.written import parse_card, written_cards
from tests.llama_server import CHAT_MODEL, CONTEXT
from tests.ollama_standin import OllamaStandIn

MODEL = "llama3.2"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Q: What is a gravity hill?\nA: An illusion", ("What is a gravity hill?", "An illusion")),
        ("**Q:** Where?\n**A:** In Scotland.", ("Where?", "In Scotland.")),
        ("Question: How long?\nAnswer: 503 metres", ("How long?", "503 metres")),
        ("<think>hmm</think>\nQ1: Who?\nA1: Lessig", ("Who?", "Lessig")),
        ("Q：何ですか？\nA：重力", ("何ですか？", "重力")),
        ("A gravity hill is a place where the layout produces an illusion.", None),
        ("Q: What is it?\nA:", None),
        ("Q: " + "x" * 400 + "?\nA: y", None),
    ],
)  # fmt: skip
def test_a_reply_gives_a_question_and_answer_only_in_the_prompt_s_form(reply, expected):
    assert parse_card(reply) == expected


def passage_phrase(messages: list[dict]) -> str:
    """A stand-in model that asks about the passage it is given, answering with its words."""
    passage = messages[-1]["content"].removeprefix("Passage:\n\n")
    words = passage.split()
    return f"Q: What does the passage say first?\nA: {' '.join(words[2:9])}"


def test_an_answer_the_passage_holds_is_kept_with_the_span_it_leans_on(store, notebook, gravity):
    with OllamaStandIn(models={MODEL: 8192}, reply=passage_phrase) as server:
        written = written_cards(store, OllamaChat(server.url, 30), MODEL, gravity, k=3)
    text = store.document_text(gravity)
    assert written.asked == 3 and len(written.cards) == 3
    passages = store.passages(gravity)
    for card in written.cards:
        assert card.kind == QA and card.made_by == MODEL and card.supported and card.score >= 0.2
        span = text[card.start : card.end]
        assert " ".join(card.answer.split()[:3]) in " ".join(span.split())
        assert any(p.start <= card.start and card.end <= p.end for p in passages)


def test_an_answer_the_passage_does_not_hold_is_marked_never_supported(store, notebook, gravity):
    reply = "Q: How long is the bridge?\nA: 503 metres, opened by Queen Victoria in 1932"
    with OllamaStandIn(models={MODEL: 8192}, reply=reply) as server:
        written = written_cards(store, OllamaChat(server.url, 30), MODEL, gravity, k=2)
    assert len(written.cards) == 2 and not any(c.supported for c in written.cards)


def test_a_reply_out_of_form_makes_no_card(store, notebook, gravity):
    with OllamaStandIn(models={MODEL: 8192}, reply="I cannot help with that.") as server:
        written = written_cards(store, OllamaChat(server.url, 30), MODEL, gravity, k=2)
    assert (written.cards, written.asked) == ((), 2)


@pytest.mark.engine
def test_the_real_small_engine_s_cards_are_kept_only_with_close_support(
    llama_server, store, notebook, gravity, embedder
):
    from knownote.study.make import make_cards

    settings = Settings().with_(openai_base_url=llama_server.url, openai_context=CONTEXT)
    llm = AnswerServers(None, OpenAIChat.from_settings(settings))
    model = f"openai:{CHAT_MODEL}"
    made = make_cards(store, embedder, notebook.id, llm=llm, model=model, passages=3)
    written = next(m for m in made if m.made_by == model)
    assert written.sources == 1 and written.kept <= written.written <= 3
    text = store.document_text(gravity)
    every = [c for c in cards(store, notebook.id, shown_only=False) if c.made_by == model]
    assert len(every) == written.written
    for card in every:
        assert 0 <= card.start < card.end <= len(text)
        assert card.supported == (card in cards(store, notebook.id))
