"""Each source's most central sentences: exact slices of its text, in reading order."""

from __future__ import annotations

import re

import pytest

from knownote.answer.ollama_chat import OllamaChat
from knownote.answer.overview import (
    MAX_CHARS,
    MIN_CHARS,
    Quote,
    central_sentences,
    load_overview,
    parse_overview,
    write_overview,
)
from knownote.errors import ModelError
from knownote.pipeline.ingest import import_file
from knownote.store.check import orphan_rows
from tests.conftest import corpus_file
from tests.ollama_standin import OllamaStandIn, free_port


def imported(store, notebook, settings, embedder, relative: str) -> int:
    path = corpus_file(relative)
    result = import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
    )
    assert result.status == "imported", result.error
    return result.document_id


def test_a_quote_shows_a_word_hyphenated_at_a_wrap_whole():
    quote = Quote(1, 0, 44, "We are compar-\ning two  models\nof well-known form.", 3, 0.9)
    assert quote.shown == "We are comparing two models of well-known form."
    assert quote.text == "We are compar-\ning two  models\nof well-known form."


def test_the_pdf_quotes_of_a_paper_show_no_broken_words(store, notebook, settings, embedder):
    document_id = imported(
        store, notebook, settings, embedder, "docs/pdf/paper_dpr_2004.04906_2col.pdf"
    )
    quotes = central_sentences(store, embedder, document_id, n=12)
    assert quotes and not [q.shown for q in quotes if re.search(r"[a-z]- [a-z]", q.shown)]


@pytest.mark.parametrize(
    "relative",
    ["docs/pdf/paper_dpr_2004.04906_2col.pdf", "docs/web_text/md_wikipedia_gravity_hill.md"],
)
def test_central_sentences_are_exact_slices_in_reading_order(
    store, notebook, settings, embedder, relative
):
    document_id = imported(store, notebook, settings, embedder, relative)
    quotes = central_sentences(store, embedder, document_id)
    text = store.document_text(document_id)
    assert len(quotes) == 3
    assert [q.start for q in quotes] == sorted(q.start for q in quotes)
    for q in quotes:
        assert text[q.start : q.end] == q.text
        assert MIN_CHARS <= len(q.text) <= MAX_CHARS
    pages = store.pages(document_id)
    for q in quotes:
        if pages:
            page = next(p for p in pages if p.number == q.page)
            assert page.start <= q.start < page.end
        else:
            assert q.page is None


def test_the_quotes_say_what_the_document_is_about(store, notebook, settings, embedder):
    document_id = imported(
        store, notebook, settings, embedder, "docs/web_text/md_wikipedia_gravity_hill.md"
    )
    quotes = central_sentences(store, embedder, document_id)
    assert any("illusion" in q.text or "gravity" in q.text for q in quotes)


def test_a_document_without_sentences_to_quote_has_none(store, notebook, settings, embedder):
    data = b"Short.\n\nTiny.\n"
    result = import_file(store, notebook, "tiny.txt", data, settings=settings, embedder=embedder)
    assert central_sentences(store, embedder, result.document_id) == []


# --- roles: quotes from body text ------------------------------------------------------------


def test_a_quote_shows_a_page_footer_inside_it_as_an_ellipsis():
    text = "这本书讲的是分布式训练\n\n— 7 —\n\n如何在多台机器上进行。"
    footer = (text.index("— 7 —"), text.index("— 7 —") + 5)
    quote = Quote(1, 0, len(text), text, None, 0.9, (footer,))
    assert quote.shown == "这本书讲的是分布式训练 … 如何在多台机器上进行。"
    assert quote.text == text


def test_a_quote_shows_bold_markdown_as_its_text():
    text = "每块GPU上存一份完整的参数，对梯度做一次 **AllReduce** 得到 **完整的梯度**。"
    assert Quote(1, 0, len(text), text, None, 0.9).shown == (
        "每块GPU上存一份完整的参数，对梯度做一次 AllReduce 得到 完整的梯度。"
    )


def test_the_quotes_are_body_text_not_a_table_or_references(store, notebook, settings, embedder):
    from knownote.read.roles import PROSE, RoleRange, Roles

    relative = "docs/web_text/md_wikipedia_gravity_hill.md"
    document_id = imported(store, notebook, settings, embedder, relative)
    text = store.document_text(document_id)
    every = central_sentences(store, embedder, document_id, n=12, roles=Roles(()))
    # Say two of the sentences it quotes without roles were a table and a reference entry.
    table, reference = every[0], every[1]
    labelled = Roles(
        [
            RoleRange(table.start, table.end, "table"),
            RoleRange(reference.start, reference.end, "reference"),
        ]
    )
    quotes = central_sentences(store, embedder, document_id, n=12, roles=labelled)
    assert quotes and all(labelled.at(q.start) in PROSE for q in quotes)
    assert {(q.start, q.end) for q in quotes} & {(q.start, q.end) for q in every[2:]}
    assert all(text[q.start : q.end] == q.text for q in quotes)


# --- a model's overview -----------------------------------------------------------------------

REPLY = (
    "SUMMARY: A gravity hill is a place where a slight downhill looks uphill [1]. "
    "The effect is an optical illusion [2][7].\n"
    "QUESTIONS:\n- What is a gravity hill?\n- Why does the slope look uphill?\n"
    "- Where are gravity hills found?\n- One too many?"
)


def test_parse_keeps_the_summary_marks_in_range_and_three_questions():
    summary, questions = parse_overview(REPLY, 5)
    assert summary.endswith("optical illusion [2].")  # [7] was not a passage given
    assert questions == [
        "What is a gravity hill?",
        "Why does the slope look uphill?",
        "Where are gravity hills found?",
    ]


def test_parse_reads_numbered_and_full_width_questions():
    reply = "**Summary:** 关于重力坡 [1]。\n**Questions:**\n1. 什么？"
    summary, questions = parse_overview(reply, 2)
    assert (summary, questions) == ("关于重力坡 [1]。", ["什么？"])


def test_parse_of_a_reply_without_the_form_keeps_its_text_and_no_questions():
    assert parse_overview("Gravity hills are illusions [1].", 3) == (
        "Gravity hills are illusions [1].",
        [],
    )


def test_a_written_overview_is_kept_and_cites_exact_passages(store, notebook, settings, embedder):
    document_id = imported(
        store, notebook, settings, embedder, "docs/web_text/md_wikipedia_gravity_hill.md"
    )
    with OllamaStandIn(reply=REPLY) as server:
        overview = write_overview(store, OllamaChat(server.url, 10), "llama3.2", document_id)
        [request] = server.chats()
    assert "[1]" in request["messages"][1]["content"]
    assert overview.questions[0] == "What is a gravity hill?"
    assert [p.n for p in overview.passages if p.cited] == [1, 2]
    text = store.document_text(document_id)
    assert all(text[p.start : p.end] == p.text for p in overview.passages)
    assert load_overview(store, document_id) == overview
    with OllamaStandIn(reply="SUMMARY: Hills [1].\nQUESTIONS:\n- Why?") as server:
        again = write_overview(store, OllamaChat(server.url, 10), "llama3.2", document_id)
    assert (again.summary, again.questions) == ("Hills [1].", ("Why?",))  # written again
    store.delete_document(document_id)
    assert load_overview(store, document_id) is None
    assert orphan_rows(store.db) == {}


def test_a_model_that_fails_keeps_no_overview(store, notebook, settings, embedder):
    document_id = imported(
        store, notebook, settings, embedder, "docs/web_text/md_wikipedia_gravity_hill.md"
    )
    with pytest.raises(ModelError):
        write_overview(store, OllamaChat(f"http://127.0.0.1:{free_port()}", 2), "m", document_id)
    assert load_overview(store, document_id) is None
