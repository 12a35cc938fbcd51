"""The script of an audio overview: what its hosts say, each claim tied to an exact range.

With an answer model (`brief`, `deep-dive`, `debate`), the script is written as reports are
(knownote.study.report_writer): from the passages nearest each source's centre, the model is asked
for the points the conversation should cover; retrieval finds passages for each; then each part
of the conversation is written from its point's passages and the central ones, numbered `[1]`…`[k]`
like an answer's, one host's turn a line ("HOST 1: …"). Each sentence becomes a line of the
script and is checked as a report's sentences are (`report_writer.Checker`): one whose marks name
no passage it was given, or that has no close match in what it cites, is dropped and counted in
`dropped`; an unmarked sentence that closely matches a passage it was given cites it. A short
unmarked question or exclamation ("What makes it look uphill?", "Welcome back!") makes no claim
and stays where a line that cites follows it in its part; any other sentence must cite.

Without a model (`read-aloud`), each source is introduced by its title and its central sentences
(knownote.answer.overview.central_sentences) are read as quotes, said to be quotes, not a summary:
each quote's citation is the sentence's exact range, `text[start:end] == quote`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from knownote.answer.audio_overview import (
    FORMAT_NAMES,
    FORMATS,
    LENGTHS,
    QUOTED_FORMATS,
    AudioLine,
    AudioOverview,
)
from knownote.answer.cite import MARK, SourcePassage, clock, strip_marks
from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.overview import Quote, central_sentences
from knownote.answer.prompts import (
    AUDIO_FOCUS,
    AUDIO_FORMS,
    AUDIO_HOSTS,
    AUDIO_MAIN_POINTS,
    AUDIO_PART_PROMPT,
    AUDIO_TASKS,
    AUDIO_WHAT,
    REPORT_QUESTIONS_PROMPT,
    Chat,
    without_thinking,
)
from knownote.answer.quotes import display_text
from knownote.answer.report import ReportCite
from knownote.answer.support import sentence_pieces
from knownote.errors import KnowNoteError, ModelError
from knownote.index.embed import Embedder
from knownote.index.language import language_name
from knownote.index.tokenize import mostly_cjk
from knownote.store.db import Document, Store
from knownote.study.report_writer import (
    CENTRAL,
    QUESTION_TOKENS,
    Checker,
    Pool,
    Progress,
    central_of,
    fitted,
    parse_questions,
    passages_text,
    report_language,
    retrieved,
)
from knownote.study.reports import report_sources

MINUTES = {"short": 2, "default": 5, "long": 10}
BRIEF_MINUTES = {"short": 1, "default": 2, "long": 3}
WORDS_PER_MINUTE = 150  # spoken English
CHARS_PER_MINUTE = 300  # spoken Japanese or Chinese
# One part a request: a reply of 256 tokens at most (OpenAIChat.complete) holds ~180 words.
WORDS_PER_PART = 180
PART_TOKENS = 256
PART_PASSAGES = 6  # a part's point's passages first, then the central ones
WORDS_PER_LEAD = 5  # "From <title>, page 4:" before each quote
MAX_QUOTES = 12  # of one source: its central sentences come from its six central passages
# An unmarked sentence without a close match stays as talk only when it makes no claim: a short
# question or exclamation, or a few words ("Right.", "Welcome back.").
TALK_WORDS = 10
TALK_CJK_CHARS = 30
TALK_ANY = 4  # words of a short statement that stays
TALK_ENDS = ("?", "!", "？", "！")
HOSTS = {"deep-dive": 2, "debate": 2, "brief": 1}
KIND = {"deep-dive": "conversation", "debate": "debate", "brief": "brief"}

# What a read-aloud brief says around its quotes, in the overview's language (else English).
PHRASES = {
    "en": {
        "opening": "These are quotes from the sources, read as they are written: not a summary.",
        "source": "Quotes from {title}.",
        "page": "From {title}, page {page}:",
        "time": "From {title}, at {time}:",
        "plain": "From {title}:",
        "quote": "“{quote}”",
    },
    "ja": {
        "opening": "以下は資料の文をそのまま読み上げた引用です。要約ではありません。",
        "source": "『{title}』からの引用です。",
        "page": "『{title}』{page}ページより。",
        "time": "『{title}』{time}の箇所より。",
        "plain": "『{title}』より。",
        "quote": "「{quote}」",
    },
    "zh": {
        "opening": "以下是资料原文的引文，照原文朗读，不是摘要。",
        "source": "下面是《{title}》中的引文。",
        "page": "摘自《{title}》第{page}页：",
        "time": "摘自《{title}》{time}处：",
        "plain": "摘自《{title}》：",
        "quote": "“{quote}”",
    },
}

NO_SOURCES = (
    "This notebook has no sources in use to make an audio overview from: import sources, or "
    "switch them on, then make it again."
)
NO_BODY_TEXT = (
    "None of these sources has body text to read from (only tables, code or captions): choose "
    "other sources, then make the audio overview again."
)
NEEDS_MODEL = (
    "The {name} is written by an answer model: connect one (Ollama or an OpenAI-compatible "
    "server) and choose it, or choose the read-aloud brief, which needs no model."
)
NO_REPLY = "{model} sent back nothing for this audio overview; try again, or choose another model."
NO_LINE = (
    "{model} wrote {written} sentences, and none cites a passage it was given (or closely "
    "matches one), so no audio overview was made. Try again, a larger model, or the read-aloud "
    "brief."
)

_SPEAKER = re.compile(
    r"^[*_\s]*(?:(?:host|speaker|voice)\s*([12１２])|([AB])|(?:ホスト|主持人|司会)\s*([12１２AB]))"
    r"[*_\s]*[:：][*_\s]*",
    re.I,
)
_HEADER = re.compile(r"^\s*[\[［【]\s*\d+\s*[\]］】]\s*(.*)$")  # the model echoes "[3] Title"
_LABEL = re.compile(
    r"^[*#\s]*(?:passages?|conversation|transcript|podcast|script)\s*[:：]?[*\s]*$", re.I
)
_FILE_EXTENSION = re.compile(
    r"\.(?:pdf|txt|md|markdown|html?|docx|pptx|epub|csv|json|mp3|m4a|wav|ogg|opus|flac)$", re.I
)
_CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # no spaces
_BULLET = re.compile(r"^(?:[-*•·]|\d+[.)])\s+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_FORMATTING = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")


def write_script(
    store: Store,
    notebook_id: int,
    *,
    format: str,
    llm: Chat | None = None,
    model: str | None = None,
    document_ids: Sequence[int] = (),
    focus: str = "",
    length: str = "default",
    language: str | None = None,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> AudioOverview:
    """Write the script of an audio overview of the notebook (or of the sources `document_ids`).

    Args:
        store: the open database.
        notebook_id: the notebook.
        format: one of FORMATS: "deep-dive", "brief" and "debate" are written by `model`;
            "read-aloud" quotes the sources without one.
        llm: the answer servers (or one Ollama client); model: the model that writes it.
        document_ids: the sources to speak of, in this order; () for every source in use.
        focus: what the hosts should dwell on.
        length: "short" (about 2 minutes), "default" (5) or "long" (10); a brief is shorter.
        language: the language it is written in (a code: "en", "ja"); by default the sources'.
        progress: called with (what is being done, steps done, steps in all).
        embedder: the notebook's embedding model (by default the one it was made with).

    Returns:
        The script (not kept, not spoken: no id, no times, no voices): its lines with their
        marks, its citations, and `dropped`, the sentences the model wrote that were left out.

    Raises:
        KnowNoteError for an unknown format or length, no sources, no body text, or a written
        format without a model; ModelError when the model cannot be used, sends back nothing,
        or writes no line citing a passage it was given.
    """
    if format not in FORMATS:
        raise KnowNoteError(
            f"Unknown audio overview format “{format}”; use one of {', '.join(FORMATS)}."
        )
    if length not in LENGTHS:
        raise KnowNoteError(f"Unknown length “{length}”; use one of {', '.join(LENGTHS)}.")
    if format not in QUOTED_FORMATS and (llm is None or not model):
        raise KnowNoteError(NEEDS_MODEL.format(name=FORMAT_NAMES[format]))
    step = progress or (lambda what, done, total: None)
    notebook = store.notebook(notebook_id)
    documents = [d for d in report_sources(store, notebook_id, document_ids) if d.passages]
    if not documents:
        raise KnowNoteError(NO_SOURCES)
    if embedder is None:
        from knownote.index.embedders import get_embedder

        embedder = get_embedder(notebook.embedding_model)
    code = language or report_language(documents) or "en"
    title = f"{FORMAT_NAMES[format]}: "
    title += documents[0].title if len(documents) == 1 else notebook.name
    head = AudioOverview(
        id=None,
        notebook_id=notebook_id,
        format=format,
        title=title,
        language=code,
        voices=(),
        lines=(),
        cites=(),
        focus=focus.strip(),
        length=length,
        document_ids=tuple(document_ids),
    )
    if format in QUOTED_FORMATS:
        lines, cites = read_aloud(store, embedder, documents, code, length, step)
        return replace(head, lines=tuple(lines), cites=tuple(cites))
    assert llm is not None and model is not None
    writer = _Writer(store, llm, model, embedder, documents, head, step)
    return writer.write()


def spoken_size(code: str, minutes: float) -> tuple[int, str]:
    """How much is said in `minutes`: (English-word equivalents, as said in a prompt)."""
    words = round(minutes * WORDS_PER_MINUTE)
    if code in ("ja", "zh"):
        return words, f"{round(minutes * CHARS_PER_MINUTE, -1)} characters"
    return words, f"{round(words, -1)} words"


# --- read aloud, without a model ------------------------------------------------------------


def spoken_words(text: str) -> float:
    """How long a text is to say, in English words: a CJK character is half a word."""
    cjk = len(_CJK_CHAR.findall(text))
    return len(_CJK_CHAR.sub(" ", text).split()) + cjk / 2


def chosen_quotes(quotes: Sequence[Quote], words: float) -> list[Quote]:
    """The most central of `quotes` that fit in `words` (at least one), in reading order; a
    sentence said twice in the source, or found again inside an overlapping passage, is read
    once."""
    chosen: list[Quote] = []
    used, seen = 0.0, set()
    for q in sorted(quotes, key=lambda q: -q.score):
        size = spoken_words(q.shown) + WORDS_PER_LEAD
        overlaps = any(q.start < c.end and c.start < q.end for c in chosen)
        # A passage that begins inside a sentence offers its end as one ("cues can affect…").
        cut = q.shown[:1].islower()
        if q.shown in seen or overlaps or cut or (chosen and used + size > words):
            continue
        chosen.append(q)
        seen.add(q.shown)
        used += size
    return sorted(chosen, key=lambda q: q.start)


def said_title(title: str) -> str:
    """A title as a voice says it: a file name without its extension, underscores as spaces."""
    return " ".join(_FILE_EXTENSION.sub("", title).replace("_", " ").split()) or title


def read_aloud(
    store: Store,
    embedder: Embedder,
    documents: Sequence[Document],
    code: str,
    length: str,
    step: Progress,
) -> tuple[list[AudioLine], list[ReportCite]]:
    """A read-aloud brief: an opening that says these are quotes, then each source's title and
    its central sentences, each quoted exactly and cited by its range. The length's words are
    shared out among the sources (five minutes over ten sources: about three quotes each)."""
    said = PHRASES.get(code, PHRASES["en"])
    share = MINUTES[length] * WORDS_PER_MINUTE / len(documents)
    lines = [AudioLine(said["opening"], spoken=said["opening"])]
    cites: list[ReportCite] = []
    for i, document in enumerate(documents):
        step(f"Choosing quotes of {document.title}", i, len(documents))
        found = central_sentences(store, embedder, document.id, n=MAX_QUOTES)
        quotes = chosen_quotes(found, share)
        if not quotes:
            continue
        title = said_title(document.title)
        lines.append(
            AudioLine(
                said["source"].format(title=document.title),
                spoken=said["source"].format(title=title),
            )
        )
        for q in quotes:
            seconds = store.time_range(document.id, q.start, q.end)
            cite = ReportCite(
                len(cites) + 1, document.id, document.title, q.start, q.end, q.text, q.page,
                seconds,
            )  # fmt: skip
            cites.append(cite)
            if seconds is not None:
                where = said["time"].format(title=title, time=clock(seconds[0]))
            elif q.page is not None:
                where = said["page"].format(title=title, page=q.page)
            else:
                where = said["plain"].format(title=title)
            shown = q.shown
            lines.append(
                AudioLine(
                    f"{said['quote'].format(quote=shown)} [{cite.n}]",
                    0,
                    (cite.n,),
                    f"{where} {spoken(shown)}",
                )
            )
    step("Quotes chosen", len(documents), len(documents))
    if not cites:
        raise KnowNoteError(NO_BODY_TEXT)
    return lines, cites


# --- written by a model ---------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """A line of the model's reply: who says it (0 or 1) and what, marks and all."""

    speaker: int
    text: str


def parse_turns(reply: str, hosts: int, titles: Sequence[str] = (), first: int = 0) -> list[Turn]:
    """The turns of a reply, one a line. A line led by "HOST 2:" (or "Host 2:", "Speaker 2:",
    "B:", "ホスト2：", "主持人2：") is the second host's; a line without one goes on with the
    host before it, or, where no line of the reply names one (a small model's plain prose),
    the hosts take turns line by line from `first`. Echoed passage headers ("[3] Title"),
    labels ("Conversation:") and code fences are left out."""
    raw = [line.strip() for line in without_thinking(reply).splitlines()]
    raw = [line for line in raw if line and not line.startswith(("```", "~~~"))]
    named = any(_SPEAKER.match(line) for line in raw)
    turns: list[Turn] = []
    speaker = first
    for line in raw:
        found = _SPEAKER.match(line)
        if found:
            who = next(g for g in found.groups() if g is not None)
            speaker = 0 if who in "1１Aa" else 1
            line = line[found.end() :].strip()
        elif not named and hosts > 1 and turns:
            speaker = 1 - turns[-1].speaker
        line = _BULLET.sub("", line)
        header = _HEADER.match(line)
        if _LABEL.match(line) or (header and header.group(1).strip(" *") in titles):
            continue
        if line:
            turns.append(Turn(speaker if hosts > 1 else 0, line))
    return turns


def spoken(text: str) -> str:
    """A line as a voice says it: no marks, no Markdown, an address said by its host name."""
    text = display_text(text)  # a Markdown link as its text
    text = _URL.sub(_host, text)
    return " ".join(_FORMATTING.sub("", text).split())


def _host(match: re.Match[str]) -> str:
    """An address as its host name, the punctuation after it kept."""
    url = match.group(0)
    tail = url[len(url.rstrip(".,;:!?)]’”")) :]
    url = url[: len(url) - len(tail)]
    return (urlsplit(url if "://" in url else f"http://{url}").hostname or "") + tail


def is_talk(sentence: str) -> bool:
    """Whether an unmarked sentence makes no claim: a short question or exclamation without
    numbers, or a few words ("Right.", "Welcome back.")."""
    plain = " ".join(strip_marks(sentence).split())
    if not plain or any(ch.isdigit() for ch in plain):
        return False
    if mostly_cjk(plain):
        return len(plain) <= TALK_CJK_CHARS and plain.endswith(TALK_ENDS)
    words = len(plain.split())
    return words <= TALK_ANY or (words <= TALK_WORDS and plain.endswith(TALK_ENDS))


class _Writer:
    """One written script: the passages, the model's replies, the check of every sentence."""

    def __init__(
        self,
        store: Store,
        llm: Chat,
        model: str,
        embedder: Embedder,
        documents: Sequence[Document],
        head: AudioOverview,
        step: Progress,
    ) -> None:
        self.store, self.llm, self.model, self.embedder = store, llm, model, embedder
        self.documents, self.head, self.step = documents, head, step
        self.replies: list[str] = []

    def ask(self, system: str, user: str, tokens: int) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        limit = self.llm.context_length(self.model)
        reply = without_thinking(
            self.llm.complete(self.model, messages, num_ctx_for(messages, tokens, limit=limit))
        )
        self.replies.append(reply)
        return reply

    def write(self) -> AudioOverview:
        head, fmt, model = self.head, self.head.format, self.model
        minutes = (BRIEF_MINUTES if fmt == "brief" else MINUTES)[head.length]
        words, _ = spoken_size(head.language, minutes)
        parts = max(1, round(words / WORDS_PER_PART))
        part_size = spoken_size(head.language, minutes / parts)[1]
        total = parts + 3  # passages, points, each part, the check
        self.step("Choosing passages", 0, total)
        central_all = [p for d in self.documents for p in central_of(self.store, d, self.documents)]
        pool = Pool(central_all[:CENTRAL])
        central = pool.passages()
        if not central:
            raise KnowNoteError(NO_BODY_TEXT)
        language = language_name(head.language)
        focus = AUDIO_FOCUS.format(focus=head.focus) if head.focus else ""
        what = AUDIO_WHAT[fmt]

        self.step(f"Waiting for {model}: the points to cover", 1, total)
        system = REPORT_QUESTIONS_PROMPT.format(what=what, n=parts, focus=focus, language=language)
        points = parse_questions(self.ask(system, passages_text(central), QUESTION_TOKENS))[:parts]
        found: dict[str, list[SourcePassage]] = {}
        for query in [*points, *([head.focus] if head.focus else [])]:
            found[query] = pool.add(
                retrieved(self.store, self.embedder, head.notebook_id, query, self.documents)
            )
        if head.focus:  # the listener's focus leads every part's passages
            central = list(dict.fromkeys([*found[head.focus], *central]))

        hosts = HOSTS[fmt]
        titles = {d.title for d in self.documents}
        written: list[tuple[list[Turn], tuple[SourcePassage, ...]]] = []
        speaker = 0
        for i in range(parts):
            point = points[i] if i < len(points) else AUDIO_MAIN_POINTS
            where = (
                "only"
                if parts == 1
                else "first"
                if i == 0
                else "last"
                if i == parts - 1
                else "middle"
            )
            task = AUDIO_TASKS[where].format(kind=KIND[fmt], point=point)
            system = AUDIO_PART_PROMPT.format(
                what=what, hosts=AUDIO_HOSTS[fmt], language=language, size=part_size,
                focus=focus, form=AUDIO_FORMS[hosts], task=task,
            )  # fmt: skip
            given = list(dict.fromkeys([*found.get(point, []), *central]))[:PART_PASSAGES]
            given = fitted(self.llm, model, system, given, "")
            self.step(f"Waiting for {model}: part {i + 1} of {parts}", 2 + i, total)
            reply = self.ask(system, passages_text(given), PART_TOKENS)
            turns = parse_turns(reply, hosts, titles, first=speaker)
            if turns:
                speaker = 1 - turns[-1].speaker if hosts > 1 else 0
            written.append((turns, tuple(given)))
        if not any(r.strip() for r in self.replies):
            raise ModelError(NO_REPLY.format(model=model))
        self.step("Checking every line against its passages", total - 1, total)
        lines, cites, dropped = self.checked(pool.passages(), written)
        if not cites:
            raise ModelError(NO_LINE.format(model=model, written=dropped + len(lines)))
        self.step("Written", total, total)
        return replace(head, lines=tuple(lines), cites=tuple(cites), model=model, dropped=dropped)

    def checked(
        self,
        pool: Sequence[SourcePassage],
        written: Sequence[tuple[Sequence[Turn], Sequence[SourcePassage]]],
    ) -> tuple[list[AudioLine], list[ReportCite], int]:
        """Each sentence of the turns as a line of the script, checked against the passages its
        part was given (`report_writer.Checker`); the lines kept, their citations, the count of
        sentences dropped (a sentence said again word for word is dropped too)."""
        check = Checker(self.store, pool, self.embedder)
        lines: list[AudioLine] = []
        said: set[str] = set()
        dropped = 0
        for turns, given in written:
            numbers = {p.n for p in given}
            start = len(lines)
            for turn in turns:
                for a, b in sentence_pieces(turn.text, lines=True):
                    sentence = turn.text[a:b]
                    plain = " ".join(strip_marks(sentence).split())
                    if not re.search(r"\w", plain):
                        continue  # marks alone, or punctuation
                    if plain.casefold() in said:
                        dropped += 1
                        continue
                    if not MARK.search(sentence) and is_talk(sentence):
                        said.add(plain.casefold())
                        lines.append(AudioLine(plain, turn.speaker, (), spoken(plain)))
                        continue
                    found = check.sentence(sentence, numbers)
                    if found is None or found[2]:
                        dropped += 1
                        continue
                    text, spans, _ = found
                    text, cites = check.numbered(text, spans)
                    said.add(plain.casefold())
                    lines.append(AudioLine(text, turn.speaker, cites, spoken(text)))
            # Talk leads into what is said ("How does that work?"); after a part's last claim it
            # is a small model's chatter ("I'd love to help with that!").
            while len(lines) > start and not lines[-1].cites:
                lines.pop()
                dropped += 1
        cites = sorted(check.cites.values(), key=lambda c: c.n)
        return lines, cites, dropped
