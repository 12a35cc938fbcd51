"""The script of an audio overview: every spoken claim cites a passage it was given, at exact
ranges; without a model, the sources' central sentences read as quotes of exact ranges.

The stand-in answer server (tests/ollama_standin.py) replies as a model would, from the passages
in each request: host lines copied from them with their marks, and lines that cite a passage
never given or say what no passage says. The real small engine writes one short deep dive.
"""

from __future__ import annotations

import re

import pytest

from knownote.answer.audio_overview import AudioOverview
from knownote.answer.ollama_chat import OllamaChat
from knownote.answer.prompts import AUDIO_PART_PROMPT
from knownote.errors import KnowNoteError, ModelError
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.audio_script import is_talk, parse_turns, spoken, write_script
from tests.answer.test_overview import imported
from tests.ollama_standin import OllamaStandIn
from tests.study.conftest import copy_of
from tests.study.test_report_writer import given, longest_sentence

CHINESE = "docs/web_text/md_zh_distributed_training_notes.md"
JAPANESE_PDF = "docs/pdf/cjk_ja_miyazawa_preface_vertical.pdf"
MODEL = "llama3.2"
PART_START = AUDIO_PART_PROMPT.split("{")[0]
POINTS = "1. Why does a car seem to roll uphill on a gravity hill?\n2. Who is Anna Pavlovna?"
UNRELATED = "Cheerful penguins juggle violet marmalade tins on the summit of the hill"
MARK = re.compile(r"\[\d+\]")


@pytest.fixture
def settings(two_sources_home, tmp_path) -> Settings:
    """A copy of the two sources' data folder (GRAVITY, WAR) for each test."""
    return copy_of(two_sources_home, tmp_path)


@pytest.fixture
def notebook(store):
    (notebook,) = store.notebooks()
    return notebook


def hosts(messages: list[dict]) -> str:
    """Two hosts: the first copies the longest sentence of the first passage it is given, marked;
    the second asks a short question, then cites a passage never given ([99]) and says, citing
    the first passage, what no passage says; the first copies the second passage unmarked."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You plan"):
        return POINTS
    if not system.startswith(PART_START):
        return ""
    passages = given(user)
    first, second, *_ = passages
    return "\n".join(
        [
            f"HOST 1: {longest_sentence(passages[first])} [{first}]",
            "HOST 2: Wait, how does that work?",
            "HOST 2: Gravity hills are found on the moon. [99]",
            f"**Host 2:** {UNRELATED}. [{first}]",
            f"HOST 1: {longest_sentence(passages[second])}",
        ]
    )


def written(store, notebook, embedder, reply=hosts, **options) -> AudioOverview:
    options.setdefault("format", "deep-dive")
    options.setdefault("length", "short")
    with OllamaStandIn(reply=reply) as server:
        return write_script(
            store, notebook.id, llm=OllamaChat(server.url, 10), model=MODEL, embedder=embedder,
            **options,
        )  # fmt: skip


def assert_exact(store: Store, overview: AudioOverview) -> None:
    """Every citation is a range of its document's text, numbered 1..k in order of first use;
    every line's marks are its cites, and what is spoken has no marks."""
    assert [c.n for c in overview.cites] == list(range(1, len(overview.cites) + 1))
    for c in overview.cites:
        assert store.document_text(c.document_id)[c.start : c.end] == c.quote
        if c.span is not None:
            assert c.start <= c.span[0] < c.span[1] <= c.end
    first_use = []
    for line in overview.lines:
        marks = tuple(int(n) for n in re.findall(r"\[(\d+)\]", line.text))
        assert tuple(dict.fromkeys(marks)) == line.cites
        assert line.spoken and not MARK.search(line.spoken) and "**" not in line.spoken
        first_use += [n for n in line.cites if n not in first_use]
    assert first_use == [c.n for c in overview.cites]
    assert overview.id is None and overview.lines[0].start_s is None


# --- written by a model ----------------------------------------------------------------------


def test_a_deep_dive_keeps_lines_citing_given_passages_and_drops_the_rest(
    store, notebook, embedder
):
    overview = written(store, notebook, embedder)
    # Two parts (a short deep dive), from different passages: each keeps the copied line and the
    # unmarked copy (now cited) and drops the line citing [99] and the unsupported claim; the
    # question is kept once, and dropped when said again.
    assert overview.dropped == 5
    assert len(overview.lines) == 5
    assert {line.speaker for line in overview.lines} == {0, 1}
    question = "Wait, how does that work?"
    assert [line.text for line in overview.lines].count(question) == 1  # said once
    talk = next(line for line in overview.lines if line.text == question)
    assert talk.speaker == 1 and talk.cites == () and talk.spoken == question
    claims = [line for line in overview.lines if line.cites]
    assert claims and all(line.speaker == 0 for line in claims)
    assert not any("moon" in line.text or "penguins" in line.text for line in overview.lines)
    for line in claims:
        (cite,) = [overview.cite(n) for n in line.cites]
        span = store.document_text(cite.document_id)[cite.span[0] : cite.span[1]]
        assert " ".join(span.split()) == MARK.sub("", line.text).strip()
    assert overview.model == MODEL and overview.format == "deep-dive"
    assert overview.language == "en" and overview.voices == ()
    assert_exact(store, overview)


def test_talk_stays_only_where_a_claim_follows_it(store, notebook, embedder):
    def reply(messages):
        if not messages[0]["content"].startswith(PART_START):
            return hosts(messages)
        passages = given(messages[-1]["content"])
        first = next(iter(passages))
        return (
            f"HOST 1: Welcome back!\nHOST 2: {longest_sentence(passages[first])} [{first}]\n"
            "HOST 1: I'd love to help with that!\nHOST 2: Just let me know what exactly?"
        )

    overview = written(store, notebook, embedder, reply, format="brief", length="short")
    assert overview.lines[0].text == "Welcome back!"
    assert [bool(line.cites) for line in overview.lines] == [False, True]
    assert overview.dropped == 2


def test_the_length_sets_the_parts_and_progress_is_said(store, notebook, embedder):
    steps = []
    with OllamaStandIn(reply=hosts) as server:
        write_script(
            store, notebook.id, format="deep-dive", llm=OllamaChat(server.url, 10), model=MODEL,
            embedder=embedder, progress=lambda *s: steps.append(s),
        )  # fmt: skip
        parts = [c for c in server.chats() if c["messages"][0]["content"].startswith(PART_START)]
    assert len(parts) == 4  # five minutes, about 180 words a part
    assert "about 190 words" in parts[0]["messages"][0]["content"]
    assert "Open the conversation" in parts[0]["messages"][0]["content"]
    assert "close the conversation" in parts[-1]["messages"][0]["content"]
    assert steps[0][1] == 0 and steps[-1][1] == steps[-1][2]


def test_the_focus_reaches_every_prompt_and_leads_the_passages(store, notebook, embedder):
    prompts = []

    def reply(messages):
        prompts.append(messages[0]["content"])
        return hosts(messages)

    overview = written(store, notebook, embedder, reply, focus="Anna Pavlovna's soirée")
    assert overview.focus == "Anna Pavlovna's soirée"
    assert all("Anna Pavlovna's soirée" in p for p in prompts)
    war = next(d.id for d in store.documents(notebook.id) if "war" in d.title.lower())
    assert war in {c.document_id for c in overview.cites}


def test_a_brief_has_one_host(store, notebook, embedder):
    overview = written(store, notebook, embedder, format="brief")
    assert {line.speaker for line in overview.lines} == {0}
    assert overview.title.startswith("Brief: ")
    assert_exact(store, overview)


def test_japanese_reaches_the_prompt(store, notebook, embedder):
    prompts = []

    def reply(messages):
        prompts.append(messages[0]["content"])
        return hosts(messages)

    overview = written(store, notebook, embedder, reply, language="ja")
    assert overview.language == "ja"
    assert all("Write them in Japanese." in p or "Write in Japanese" in p for p in prompts)
    assert "characters" in prompts[-1]
    assert_exact(store, overview)


def test_a_chinese_notebook_gets_a_chinese_deep_dive(store, settings, embedder):
    notebook = store.create_notebook("分布式训练", embedder.name, embedder.dim)
    document_id = imported(store, notebook, settings, embedder, CHINESE)
    prompts = []

    def reply(messages):
        prompts.append(messages[0]["content"])
        if messages[0]["content"].startswith("You plan"):
            return "1. 什么是数据并行？\n2. 什么是模型并行？"
        return hosts(messages)

    overview = written(store, notebook, embedder, reply)
    assert overview.language == "zh"
    assert all("Write them in Chinese." in p or "Write in Chinese" in p for p in prompts)
    claims = [line for line in overview.lines if line.cites]
    assert claims and all(re.search(r"[\u4e00-\u9fff]", line.text) for line in claims)
    assert {c.document_id for c in overview.cites} == {document_id}
    assert overview.dropped >= 4  # [99] and the unsupported claim, in each part
    assert_exact(store, overview)


def test_a_written_format_without_a_model_says_what_to_do(store, notebook, embedder):
    with pytest.raises(KnowNoteError, match=r"connect one.*read-aloud brief"):
        write_script(store, notebook.id, format="deep-dive", embedder=embedder)


def test_a_reply_with_no_usable_line_fails_in_words(store, notebook, embedder):
    def reply(messages):
        if messages[0]["content"].startswith("You plan"):
            return POINTS
        return f"HOST 1: The moon is cheese. [99]\nHOST 2: {UNRELATED}."

    with pytest.raises(ModelError, match="4 sentences, and none cites"):
        written(store, notebook, embedder, reply)
    with pytest.raises(ModelError, match="sent back nothing"):
        written(store, notebook, embedder, "")


def test_replies_are_read_forgivingly():
    reply = (
        "Conversation:\n**HOST 1:** Hi. [1]\nhost 2： Yes!\nAnd more. [2]\n[3] Gravity hill\nB: No."
    )
    assert [(t.speaker, t.text) for t in parse_turns(reply, 2, ["Gravity hill"])] == [
        (0, "Hi. [1]"),
        (1, "Yes!"),
        (1, "And more. [2]"),
        (1, "No."),
    ]
    # A small model's plain prose: the hosts take turns line by line.
    assert [t.speaker for t in parse_turns("One.\nTwo.\nThree.", 2, first=1)] == [1, 0, 1]
    assert [t.speaker for t in parse_turns("ホスト2：はい。\n主持人1：好。", 1)] == [0, 0]
    assert spoken("**Bold** at https://en.wikipedia.org/wiki/X, [a link](http://a.b) [3][4]") == (
        "Bold at en.wikipedia.org, a link"
    )
    assert is_talk("Welcome back!") and is_talk("Right.") and is_talk("どうしてでしょう？")
    assert not is_talk("Gravity hills are found in many places on Earth.")
    assert not is_talk("Is it 2003?")


# --- read aloud, without a model -------------------------------------------------------------


def assert_quotes(store: Store, overview: AudioOverview, titles: set[str]) -> None:
    assert_exact(store, overview)
    assert overview.model is None and overview.dropped == 0
    quotes = [line for line in overview.lines if line.cites]
    assert quotes and len(quotes) == len(overview.cites)
    for line, cite in zip(quotes, overview.cites, strict=True):
        assert cite.span is None and line.text.startswith(("“", "「"))
        assert line.text.endswith(f" [{cite.n}]")
    assert {c.title for c in overview.cites} == titles
    intros = [line for line in overview.lines if not line.cites][1:]
    assert len(intros) == len(titles)


def test_read_aloud_quotes_each_english_source_by_its_title(studied, embedder):
    store, notebook, documents = studied
    overview = write_script(store, notebook.id, format="read-aloud", embedder=embedder)
    titles = {store.document(i).title for i in documents.values()}
    assert_quotes(store, overview, titles)
    assert overview.lines[0].text.startswith("These are quotes from the sources")
    assert "not a summary" in overview.lines[0].spoken
    quotes = [line for line in overview.lines if line.cites]
    book = [
        line for line in quotes if overview.cite(line.cites[0]).document_id == documents["book"]
    ]
    page = overview.cite(book[0].cites[0]).page
    book_title = store.document(documents["book"]).title
    assert book[0].spoken.startswith(f"From {book_title}, page {page}: ")
    gravity = next(line for line in quotes if line not in book)
    assert gravity.spoken.startswith("From Gravity hill: ")
    # Five minutes shared by two sources: a few quotes each, the sources in the notebook's order.
    assert 3 <= len(book) <= 12 and quotes.index(book[-1]) < quotes.index(gravity)
    short = write_script(store, notebook.id, format="read-aloud", embedder=embedder, length="short")
    assert len(short.cites) < len(overview.cites)


def test_read_aloud_of_a_japanese_source_is_introduced_in_japanese(store, settings, embedder):
    notebook = store.create_notebook("春と修羅", embedder.name, embedder.dim)
    document_id = imported(store, notebook, settings, embedder, JAPANESE_PDF)
    title = store.document(document_id).title
    overview = write_script(store, notebook.id, format="read-aloud", embedder=embedder)
    assert overview.language == "ja"
    assert_quotes(store, overview, {title})
    assert overview.lines[0].text.endswith("要約ではありません。")
    assert overview.lines[1].text == f"『{title}』からの引用です。"
    assert overview.lines[2].spoken.startswith("『cjk ja miyazawa preface vertical』1ページより。")
    assert overview.lines[2].text.startswith("「")
    assert re.search(r"[\u3040-\u30ff]", overview.lines[2].text)


def test_read_aloud_of_chosen_sources_in_their_order(store, notebook, embedder):
    documents = store.documents(notebook.id)
    chosen = [d.id for d in reversed(documents)]
    overview = write_script(
        store, notebook.id, format="read-aloud", document_ids=chosen, embedder=embedder
    )
    order = list(dict.fromkeys(c.document_id for c in overview.cites))
    assert order == chosen and overview.document_ids == tuple(chosen)
    gravity = next(d.id for d in documents if d.title == "Gravity hill")
    only = write_script(
        store, notebook.id, format="read-aloud", document_ids=[gravity], embedder=embedder,
        language="zh",
    )  # fmt: skip
    assert only.title == "Read-aloud brief (quotes): Gravity hill"
    assert only.lines[1].text == "下面是《Gravity hill》中的引文。"
    assert only.lines[2].spoken.startswith("摘自《Gravity hill》：")


def test_a_notebook_without_sources_says_so(store, embedder):
    empty = store.create_notebook("Empty", embedder.name, embedder.dim)
    with pytest.raises(KnowNoteError, match="no sources in use"):
        write_script(store, empty.id, format="read-aloud", embedder=embedder)


# --- the real small engine -------------------------------------------------------------------


@pytest.mark.engine
def test_the_real_small_engine_writes_a_short_deep_dive_with_exact_citations(
    store, notebook, embedder, llama_server, settings
):
    """SmolLM2-135M (tests/llama_server.py) rarely follows the form or cites: whatever it writes,
    what is kept cites only passages it was given, at exact ranges; else it says so."""
    from knownote.answer.openai_chat import OpenAIChat
    from knownote.answer.servers import AnswerServers
    from tests.llama_server import CHAT_MODEL, CONTEXT

    chat = OpenAIChat.from_settings(
        settings.with_(openai_base_url=llama_server.url, openai_context=CONTEXT)
    )
    llm, model = AnswerServers(None, chat), f"openai:{CHAT_MODEL}"
    try:
        overview = write_script(
            store, notebook.id, format="deep-dive", llm=llm, model=model, length="short",
            embedder=embedder,
        )  # fmt: skip
    except ModelError as e:
        assert re.search("none cites a passage|sent back nothing", str(e))
        return
    assert overview.model == model and any(line.cites for line in overview.lines)
    assert_exact(store, overview)
