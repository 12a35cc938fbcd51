"""Reports a model writes: every kept sentence cites a passage it was given, at exact ranges.

The stand-in answer server (tests/ollama_standin.py) replies as a model would, from the passages
in each request: sentences copied from them with their marks, and sentences that cite a passage
never given, cite nothing, or say what no passage says. The real small engine writes one report
of each kind (tests/llama_server.py).
"""

from __future__ import annotations

import re

import pytest

from knownote.answer.cite import strip_marks
from knownote.answer.ollama_chat import OllamaChat
from knownote.answer.prompts import REPORT_PART_PROMPT, TIMELINE_LABEL_PROMPT
from knownote.answer.report import WRITTEN_KINDS, Report, ReportCite, ReportLine
from knownote.errors import KnowNoteError, ModelError
from knownote.index.sentences import sentence_spans
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.report_writer import (
    HEADINGS,
    label_timeline,
    parse_labels,
    parse_part,
    parse_questions,
    write_report,
)
from tests.answer.test_overview import imported
from tests.ollama_standin import OllamaStandIn, free_port
from tests.study.conftest import copy_of

CHINESE = "docs/web_text/md_zh_distributed_training_notes.md"
MODEL = "llama3.2"
QUESTIONS = "1. Why does a car seem to roll uphill on a gravity hill?\n2. Who is Anna Pavlovna?"
UNSUPPORTED = "Bananas ripen faster beside apples in a paper bag"
UNRELATED = "Cheerful penguins juggle violet marmalade tins"
PART_START = REPORT_PART_PROMPT.split("{")[0]


def given(user: str) -> dict[int, str]:
    """The passages of a request by number: the text below each `[n] title` header."""
    found = re.split(r"(?m)^\[(\d+)\] .*$", user.split("\n\nQuestion:")[0])
    return {int(n): text.strip() for n, text in zip(found[1::2], found[2::2], strict=True)}


def longest_sentence(text: str) -> str:
    """A passage's longest sentence, on one line as a model would copy it."""
    spans = [(a, b) for a, b in sentence_spans(text) if b - a < 300]
    a, b = max(spans, key=lambda s: s[1] - s[0])
    return " ".join(text[a:b].split())


def copying(messages: list[dict]) -> str:
    """A model that copies the longest sentence of the first passage it is given, marked; and
    of the second, unmarked; then writes a sentence citing [99], one citing the first passage
    that no passage holds, and one unmarked that none holds."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You plan"):
        return QUESTIONS
    if system.startswith("You write essay questions"):
        return "Essay questions:\n- Discuss how a horizon shapes what we see.\n- Compare the two."
    if not system.startswith(PART_START):
        return ""
    passages = given(user)
    first, *rest = passages
    lines = [
        f"{longest_sentence(passages[first])} [{first}]",
        f"{UNSUPPORTED}. [{first}]",
        "Gravity hills are found on the moon. [99]",
        f"{UNRELATED}.",
    ]
    if rest:
        lines.insert(1, longest_sentence(passages[rest[0]]))
    if "- term:" in system:
        return "\n".join(f"- Term {chr(65 + i)}: {line}" for i, line in enumerate(lines))
    return "\n".join(lines)


@pytest.fixture
def settings(two_sources_home, tmp_path) -> Settings:
    return copy_of(two_sources_home, tmp_path)


@pytest.fixture
def notebook(store):
    (notebook,) = store.notebooks()
    return notebook


def written(store, notebook, embedder, kind="custom", reply=copying, **options) -> Report:
    instructions = options.pop("instructions", "What the sources say" if kind == "custom" else "")
    with OllamaStandIn(reply=reply) as server:
        return write_report(
            store, OllamaChat(server.url, 10), MODEL, notebook.id, kind, instructions,
            embedder=embedder, **options,
        )  # fmt: skip


def assert_exact(store: Store, report: Report) -> None:
    """Every citation is a passage's range of its document's text, its span inside it; every
    mark of a line is one of the report's citations, each numbered once."""
    assert [c.n for c in report.cites] == list(range(1, len(report.cites) + 1))
    for c in report.cites:
        text = store.document_text(c.document_id)
        assert text[c.start : c.end] == c.quote
        assert c.quote in {p.text for p in store.passages(c.document_id)}
        if c.span is not None:
            assert c.start <= c.span[0] < c.span[1] <= c.end
    used = set()
    for line in report.lines:
        marks = tuple(int(n) for n in re.findall(r"\[(\d+)\]", line.text))
        assert tuple(dict.fromkeys(marks)) == line.cites
        used.update(line.cites)
        if line.style != "heading" and not line.cites:
            assert not re.search(r"\[\d+\]", line.text)
    assert used == {c.n for c in report.cites}


def claims(report: Report) -> list[ReportLine]:
    return [line for line in report.lines if line.cites]


def test_only_sentences_citing_a_given_passage_are_kept_and_the_unsupported_marked(
    store, notebook, embedder
):
    report = written(store, notebook, embedder)
    # Written: the copied sentence, the unmarked copy, the unsupported one, the one citing [99]
    # and the unmarked unrelated one; the last two are dropped.
    assert (report.written, report.kept, report.marked) == (5, 3, 1)
    assert report.kind == "custom" and report.model == MODEL
    assert report.instructions == "What the sources say"
    copied, unmarked, unsupported = claims(report)
    assert not copied.unsupported and not unmarked.unsupported and unsupported.unsupported
    assert unsupported.text.startswith(UNSUPPORTED)
    assert not any(UNRELATED in line.text or "moon" in line.text for line in report.lines)
    for line in (copied, unmarked):
        (cite,) = [report.cite(n) for n in line.cites]
        span = store.document_text(cite.document_id)[cite.span[0] : cite.span[1]]
        assert " ".join(span.split()) == re.sub(r" \[\d+\]$", "", line.text)
    (cite,) = [report.cite(n) for n in unsupported.cites]
    assert cite.span is None
    assert_exact(store, report)


def test_a_paragraphs_later_sentences_are_kept_as_going_on_it(store, notebook, embedder):
    def one_paragraph(messages: list[dict]) -> str:
        if not messages[0]["content"].startswith(PART_START):
            return copying(messages)
        passages = given(messages[-1]["content"])
        first, second, *_ = passages
        return (
            f"{longest_sentence(passages[first])} [{first}] "
            f"{longest_sentence(passages[second])} [{second}]\n"
            f"{longest_sentence(passages[first])} [{first}]"
        )

    report = written(store, notebook, embedder, reply=one_paragraph)
    assert [line.continues for line in claims(report)] == [False, True, False]
    assert_exact(store, report)


def test_sentences_with_no_close_match_are_left_out_when_asked(store, notebook, embedder):
    report = written(store, notebook, embedder, keep_unsupported=False)
    assert (report.written, report.kept, report.marked) == (5, 2, 1)
    assert not any(line.unsupported for line in report.lines)
    assert not any(UNSUPPORTED in line.text for line in report.lines)
    assert_exact(store, report)


@pytest.mark.parametrize("kind", WRITTEN_KINDS)
def test_each_kind_has_its_parts_and_exact_citations(store, notebook, embedder, kind):
    steps = []
    report = written(store, notebook, embedder, kind, progress=lambda *s: steps.append(s))
    assert_exact(store, report)
    assert steps[0][1] == 0 and steps[-1][1] == steps[-1][2]
    headings = [line.text for line in report.lines if line.style == "heading"]
    english = HEADINGS["en"]
    if kind == "briefing":
        assert headings == [english[0], english[1]]
        assert {line.style for line in claims(report)} == {"paragraph", "item"}
    elif kind == "faq":
        assert headings == [q.split(". ", 1)[1] for q in QUESTIONS.splitlines()]
    elif kind == "study-guide":
        assert headings == [english[2], english[3], english[4]]
        terms = [line for line in report.lines if line.label]
        assert terms and all(t.label.startswith("Term ") for t in terms)
        essays = report.lines[report.lines.index(ReportLine(english[4], "heading")) + 1 :]
        assert [e.text for e in essays] == [
            "Discuss how a horizon shapes what we see.",
            "Compare the two.",
        ]
        assert all(e.style == "item" and not e.cites for e in essays)
    # Each part drops two sentences and marks one.
    parts = {"briefing": 2, "faq": 2, "study-guide": 3, "custom": 1}[kind]
    assert (report.written, report.kept, report.marked) == (5 * parts, 3 * parts, parts)


def test_each_question_is_answered_from_the_passages_found_for_it(store, notebook, embedder):
    with OllamaStandIn(reply=copying) as server:
        report = write_report(
            store, OllamaChat(server.url, 10), MODEL, notebook.id, "faq", embedder=embedder
        )
        asked = [c for c in server.chats() if "Question: " in c["messages"][-1]["content"]]
    assert len(asked) == 2
    war = next(d.id for d in store.documents(notebook.id) if "war" in d.title.lower())
    answer = report.lines[report.lines.index(ReportLine("Who is Anna Pavlovna?", "heading")) + 1]
    assert report.cite(answer.cites[0]).document_id == war
    assert any(
        "Anna Pavlovna" in text for text in given(asked[1]["messages"][-1]["content"]).values()
    )


def test_chosen_sources_only(store, notebook, embedder):
    gravity = next(d.id for d in store.documents(notebook.id) if "ravity" in d.title)
    report = written(store, notebook, embedder, "briefing", document_ids=[gravity])
    assert report.document_ids == (gravity,)
    assert {c.document_id for c in report.cites} == {gravity}


def test_a_chinese_notebook_gets_a_chinese_report(store, settings, embedder):
    notebook = store.create_notebook("分布式训练", embedder.name, embedder.dim)
    document_id = imported(store, notebook, settings, embedder, CHINESE)
    prompts = []

    def reply(messages):
        prompts.append(messages[0]["content"])
        if messages[0]["content"].startswith("You plan"):
            return "1. 什么是数据并行？\n2. 什么是模型并行？"
        return copying(messages)

    report = written(store, notebook, embedder, "briefing", reply=reply)
    assert all("Write them in Chinese." in p or "Write in Chinese." in p for p in prompts)
    assert [line.text for line in report.lines if line.style == "heading"] == ["摘要", "要点"]
    assert report.kept >= 2 and {c.document_id for c in report.cites} == {document_id}
    copied = claims(report)[0]
    assert re.search(r"[\u4e00-\u9fff]", copied.text) and not copied.unsupported
    cite = report.cite(copied.cites[0])
    span = store.document_text(document_id)[cite.span[0] : cite.span[1]]
    # The copied line is a list item: the reply's bullet was read as a bullet, the span keeps it.
    assert " ".join(span.split()).removeprefix("- ") == re.sub(r" \[\d+\]$", "", copied.text)
    assert_exact(store, report)


def test_a_notebook_without_sources_says_so(store, embedder):
    empty = store.create_notebook("Empty", embedder.name, embedder.dim)
    with pytest.raises(KnowNoteError, match="no sources in use"):
        written(store, empty, embedder, "briefing")


def test_a_custom_report_needs_instructions(store, notebook, embedder):
    with pytest.raises(KnowNoteError, match="instructions"):
        written(store, notebook, embedder, "custom", instructions="  ")


def test_a_model_that_sends_nothing_fails_in_words(store, notebook, embedder):
    with pytest.raises(ModelError, match="sent back nothing"):
        written(store, notebook, embedder, "briefing", reply="")


def test_a_reply_with_no_usable_sentence_fails_in_words(store, notebook, embedder):
    def reply(messages):
        if messages[0]["content"].startswith("You plan"):
            return QUESTIONS
        return f"The moon is cheese. [99]\n{UNRELATED}."

    with pytest.raises(ModelError, match="4 sentences, and none cites"):
        written(store, notebook, embedder, "briefing", reply=reply)


def test_no_model_server_fails_in_words(store, notebook, embedder):
    chat = OllamaChat(f"http://127.0.0.1:{free_port()}", 2)
    with pytest.raises(ModelError):
        write_report(store, chat, MODEL, notebook.id, "faq", embedder=embedder)


def test_questions_and_parts_are_read_forgivingly():
    assert parse_questions("<think>x</think>Questions:\n1) Why? [2]\n- **How so?**\n- No.") == [
        "Why?",
        "How so?",
    ]
    assert parse_questions("1. 为什么？\n2. 为什么？") == ["为什么？"]
    (term,) = parse_part("Key terms:\n- **Horizon**: the line where sky meets land. [2]", "terms")
    assert (term.label, term.text) == ("Horizon", "the line where sky meets land. [2]")
    free = parse_part("# Overview\nSome text. [1]\n- an item [2]\n```\n", "free")
    assert [(w.style, w.text) for w in free] == [
        ("heading", "Overview"),
        ("paragraph", "Some text. [1]"),
        ("item", "an item [2]"),
    ]
    assert [w.style for w in parse_part("Summary:\nA. [1]\nB. [2]", "item")] == ["item", "item"]


# --- a timeline's labels ---------------------------------------------------------------------


def timeline_report(entries: int) -> Report:
    lines = tuple(
        ReportLine(f"In {1990 + i} event number {i} happened. [{i + 1}]", "item", (i + 1,),
                   date=f"{1990 + i}")
        for i in range(entries)
    )  # fmt: skip
    cites = tuple(ReportCite(i + 1, 1, "Doc", 10 * i, 10 * i + 9, "x" * 9) for i in range(entries))
    return Report("timeline", "Timeline: T", 1, (ReportLine("1990s", "heading"), *lines), cites)


def test_each_timeline_entry_gets_a_label_and_keeps_its_quote():
    report = timeline_report(12)

    def reply(messages):
        assert messages[0]["content"] == TIMELINE_LABEL_PROMPT
        entries = re.findall(
            r"(?m)^(\d+)\. (\d{4}): In \d{4} event number (\d+)", messages[1]["content"]
        )
        return "\n".join(f"{n}: **Event {i}** [3]" for n, _, i in entries if i != "4")

    with OllamaStandIn(reply=reply) as server:
        labelled = label_timeline(report, OllamaChat(server.url, 10), MODEL)
        assert len(server.chats()) == 2  # twelve entries, ten a request
    assert labelled.model == MODEL and labelled.cites == report.cites
    assert [line.text for line in labelled.lines] == [line.text for line in report.lines]
    assert [line.date for line in labelled.lines] == [line.date for line in report.lines]
    assert [line.label for line in labelled.lines] == [None] + [
        None if i == 4 else f"Event {i}" for i in range(12)
    ]


def test_the_timeline_of_the_sources_gets_labels_and_keeps_its_quotes(store, notebook):
    from knownote.study.reports import timeline

    made = timeline(store, notebook.id)
    entries = [line for line in made.lines if line.date]
    assert entries  # "A 2003 study", "July, 1805"

    def reply(messages):
        listed = re.findall(r"(?m)^(\d+)\. [^:]+: (.*)$", messages[-1]["content"])
        return "\n".join(f"{n}: {' '.join(text.split()[:3])}" for n, text in listed)

    with OllamaStandIn(reply=reply) as server:
        labelled = label_timeline(made, OllamaChat(server.url, 10), MODEL)
    assert [(x.text, x.date, x.cites) for x in labelled.lines] == [
        (x.text, x.date, x.cites) for x in made.lines
    ]
    assert labelled.cites == made.cites
    assert all(x.label for x in labelled.lines if x.date)
    for x in labelled.lines:
        if x.date:
            assert x.label in " ".join(strip_marks(x.text).split())


def test_a_timeline_label_reply_without_labels_fails_in_words():
    with (
        OllamaStandIn(reply="I cannot do that.") as server,
        pytest.raises(ModelError, match="no label"),
    ):
        label_timeline(timeline_report(2), OllamaChat(server.url, 10), MODEL)
    with pytest.raises(KnowNoteError, match="no dated entries"):
        label_timeline(Report("briefing", "B", 1, (ReportLine("x"),), ()), None, MODEL)


def test_a_label_that_repeats_its_date_keeps_the_rest():
    with OllamaStandIn(reply="1: 1990: The first event") as server:
        labelled = label_timeline(timeline_report(1), OllamaChat(server.url, 10), MODEL)
    assert labelled.lines[1].label == "The first event"


def test_labels_are_read_forgivingly():
    reply = "Labels:\n1. The bridge opens.\n- 2: “桥梁开通”\n3) \n9: out of range\n1: again"
    assert parse_labels(reply, 3) == {1: "The bridge opens", 2: "桥梁开通"}


# --- the real small engine -------------------------------------------------------------------


@pytest.mark.engine
@pytest.mark.parametrize("kind", WRITTEN_KINDS)
def test_the_real_small_engine_writes_each_kind_with_exact_citations(
    store, notebook, embedder, llama_server, settings, kind
):
    """SmolLM2-135M (tests/llama_server.py) rarely cites well: whatever it writes, what is kept
    cites only passages it was given, at exact ranges; when nothing is usable, it says so."""
    from knownote.answer.openai_chat import OpenAIChat
    from knownote.answer.servers import AnswerServers
    from tests.llama_server import CHAT_MODEL, CONTEXT

    chat = OpenAIChat.from_settings(
        settings.with_(
            openai_base_url=llama_server.url, openai_context=CONTEXT, max_answer_tokens=256
        )
    )
    llm, model = AnswerServers(None, chat), f"openai:{CHAT_MODEL}"
    instructions = "A one-paragraph note on gravity hills" if kind == "custom" else ""
    try:
        report = write_report(store, llm, model, notebook.id, kind, instructions, embedder=embedder)
    except ModelError as e:
        assert re.search("none cites a passage|no question|sent back nothing", str(e))
        return
    assert report.written >= report.kept >= 1 and report.kept >= report.marked
    assert report.model == model
    assert_exact(store, report)
