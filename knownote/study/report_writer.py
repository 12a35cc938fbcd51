"""Reports an answer model writes from a notebook: briefing, study guide, FAQ and custom; and a
model's one-line labels for a timeline's entries.

A report is written from the passages nearest each source's centre and from what retrieval finds
for the questions the report raises (the model is asked for them first: the FAQ's questions, the
study guide's short-answer questions). All of them are numbered `[1]`…`[k]` like an answer's
passages, and each part of the report is written by the model from the passages it is given,
every sentence with its marks. Then each sentence is checked as answers are
(knownote.answer.support): a sentence whose marks name no passage it was given is dropped; one
without marks is kept only where a passage it was given holds a close match, which it then cites
(as an answer's unmarked sentence gets a suggested span); a sentence with no close match in what
it cites is marked `unsupported` (or left out). Each citation of the report is a passage's range
with the support span found in it: `text[start:end]` is the passage, `span` lies inside it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from knownote.answer.cite import (
    MARK,
    SourcePassage,
    normalize_marks,
    sources_from_hits,
    strip_marks,
)
from knownote.answer.ollama_chat import ANSWER_ROOM, estimate_tokens, num_ctx_for
from knownote.answer.overview import central_passages
from knownote.answer.prompts import (
    REPORT_ESSAY_PROMPT,
    REPORT_PART_PROMPT,
    REPORT_QUESTIONS_PROMPT,
    REPORT_TASKS,
    TIMELINE_LABEL_PROMPT,
    Chat,
    passage_header,
    without_thinking,
)
from knownote.answer.report import KIND_NAMES, WRITTEN_KINDS, Report, ReportCite, ReportLine
from knownote.answer.servers import AnswerServers
from knownote.answer.support import (
    Scorer,
    best_support,
    candidates,
    meaning_scorer,
    sentence_pieces,
)
from knownote.errors import EmbeddingUnavailable, KnowNoteError, ModelError
from knownote.index.embed import Embedder
from knownote.index.language import language_name
from knownote.read.extracted import Page, page_of
from knownote.read.roles import Roles
from knownote.search.retrieve import search
from knownote.store.db import Document, Store

Progress = Callable[[str, int, int], None]  # (what is being done, steps done, steps in all)

CENTRAL = 6  # passages nearest the sources' centres, shared out among the sources in use
PER_QUESTION = 3  # passages retrieved for each question the report raises
QUESTIONS = {"briefing": 3, "study-guide": 3, "faq": 4, "custom": 3}
ESSAYS = 3
ANSWER_TOKENS = 600  # room for one part of a report
QUESTION_TOKENS = 300
MAX_QUESTION = 300  # characters: a longer "question" is the model rambling
MAX_LABEL = 120
LABEL_BATCH = 10  # timeline entries labelled in one request
WHAT = {
    "briefing": "a briefing document",
    "study-guide": "a study guide",
    "faq": "a list of frequently asked questions with their answers",
    "custom": "a report",
}
# The report's own headings, in the notebook's language (English where it has none here).
HEADINGS = {
    "en": ("Summary", "Key points", "Key terms", "Short-answer questions", "Essay questions"),
    "zh": ("摘要", "要点", "关键术语", "简答题", "论述题"),
    "ja": ("要約", "要点", "重要語句", "短答問題", "論述問題"),
    "de": ("Zusammenfassung", "Kernpunkte", "Schlüsselbegriffe", "Kurzfragen", "Essayfragen"),
    "es": ("Resumen", "Puntos clave", "Términos clave", "Preguntas breves", "Preguntas de ensayo"),
    "fr": ("Résumé", "Points clés", "Termes clés", "Questions courtes", "Sujets de dissertation"),
    "ru": ("Краткое содержание", "Главное", "Ключевые термины", "Короткие вопросы", "Темы эссе"),
}
SUMMARY, POINTS, TERMS, SHORT, ESSAY = range(5)

NO_SOURCES = (
    "This notebook has no sources in use to write a report from: import sources, or switch "
    "them on, then make the report again."
)
NO_REPLY = "{model} sent back nothing for this report; try again, or choose another model."
NO_SENTENCE = (
    "{model} wrote {written} sentences, and none cites a passage it was given (or closely "
    "matches one), so no report was made. Try again, or a larger model."
)

_BULLET = re.compile(r"^(?:[-*+•·▪◦–—]+|\(?\d+[.)．、]|\(?[a-zA-Z][.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BOLD_LINE = re.compile(r"^\*\*([^*]+)\*\*\s*[:：]?$")
_LABEL_LINE = re.compile(r"^[^\[\]【】]{1,60}[:：]$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TERM = re.compile(r"^\**([^:：*]{1,60}?)\**\s*(?:[:：]|\s[–—-]\s)\s*\**\s*(.+)$")
_NUMBERED = re.compile(r"^\s*(?:entry\s*)?\(?(\d+)\s*[:.)：、\-–]\s*(.+?)\s*$", re.I)
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_SPACED_CANONICAL = re.compile(r"[ \t]*\[(\d+)\]")
QUESTION_ENDS = ("?", "？", "؟")


@dataclass(frozen=True)
class Written:
    """A line of the model's reply as parsed: its style, its text with marks, a term's label."""

    style: str
    text: str
    label: str | None = None
    claims: bool = True  # checked sentence by sentence; False for headings and questions
    answered: bool = False  # a question: left out when no sentence of its answer is kept


@dataclass(frozen=True)
class Part:
    """One request to the model for a part of the report, and the passages it is given."""

    system: str
    user: str
    given: tuple[SourcePassage, ...]
    style: str  # "paragraph", "item", "terms" or "free": how the reply's lines are read


def write_report(
    store: Store,
    llm: Chat,
    model: str,
    notebook_id: int,
    kind: str,
    instructions: str = "",
    document_ids: Sequence[int] = (),
    progress: Progress | None = None,
    keep_unsupported: bool = True,
    embedder: Embedder | None = None,
) -> Report:
    """Write a report of the notebook (or of the sources `document_ids`) with `model`.

    Args:
        store: the open database.
        llm: the answer servers (or one Ollama client).
        model: the model that writes the report.
        notebook_id: the notebook.
        kind: "briefing", "study-guide", "faq" or "custom".
        instructions: a custom report's instructions; for the other kinds, a focus.
        document_ids: the sources to write from; () for every source in use.
        progress: called with (what is being done, steps done, steps in all).
        keep_unsupported: keep a sentence with no close match, marked; False leaves it out.
        embedder: the notebook's embedding model (by default the one it was made with).

    Returns:
        The report (not kept: `knownote.study.reports.keep` keeps it). `written` counts the
        sentences the model wrote, `kept` those in the report and `marked` those with no close
        match in what they cite (in the report marked `unsupported`, or left out).

    Raises:
        KnowNoteError when the kind is unknown, a custom report has no instructions or there
        are no sources in use; ModelError (or LLMUnavailable) when the model cannot be used,
        sends back nothing, or writes no sentence citing a passage it was given.
    """
    if kind not in WRITTEN_KINDS:
        raise KnowNoteError(f"Unknown report kind “{kind}”; use one of {', '.join(WRITTEN_KINDS)}.")
    instructions = instructions.strip()
    if kind == "custom" and not instructions:
        raise KnowNoteError("Say what the custom report should be: write its instructions.")
    step = progress or (lambda what, done, total: None)
    notebook = store.notebook(notebook_id)
    documents = sources_in_use(store, notebook_id, document_ids)
    if not documents:
        raise KnowNoteError(NO_SOURCES)
    if embedder is None:
        from knownote.index.embedders import get_embedder

        embedder = get_embedder(notebook.embedding_model)
    code = report_language(documents)
    language = language_name(code) if code else "the language of the passages"
    headings = HEADINGS.get(code or "en", HEADINGS["en"])
    focus = f"\nFocus on what the user asks: {instructions}" if instructions else ""
    what = WHAT[kind]
    parts = {"briefing": 2, "faq": QUESTIONS[kind], "study-guide": 2 + QUESTIONS[kind]}
    total = 3 + parts.get(kind, 1)  # passages, questions, each part, the check
    step("Choosing passages", 0, total)
    pool = Pool([p for d in documents for p in central_of(store, d, documents)][:CENTRAL])
    central = pool.passages()
    replies: list[str] = []

    def ask(system: str, user: str, tokens: int) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        num_ctx = num_ctx_for(messages, tokens, limit=llm.context_length(model))
        reply = without_thinking(llm.complete(model, messages, num_ctx))
        replies.append(reply)
        return reply

    step(f"Waiting for {model}: the questions", 1, total)
    system = REPORT_QUESTIONS_PROMPT.format(
        what=what, n=QUESTIONS[kind], focus=focus, language=language
    )
    questions = parse_questions(ask(system, passages_text(central), QUESTION_TOKENS))
    questions = questions[: QUESTIONS[kind]]
    if kind == "faq" and not questions:
        raise ModelError(
            f"{model} wrote no question for the FAQ, so no report was made. Try again, or a "
            "larger model."
        )
    found: dict[str, list[SourcePassage]] = {}
    for query in [*questions, *([instructions] if instructions else [])]:
        found[query] = pool.add(retrieved(store, embedder, notebook_id, query, documents))

    def part(task: str, given: Sequence[SourcePassage], style: str, question: str = "") -> Part:
        system = REPORT_PART_PROMPT.format(what=what, language=language, focus=focus, task=task)
        tail = f"\n\nQuestion: {question}" if question else ""
        given = fitted(llm, model, system, list(given), tail)
        return Part(system, passages_text(given) + tail, tuple(given), style)

    everything = pool.passages()
    plan: list[tuple[tuple[Written, ...], Part]] = []
    if kind == "briefing":
        plan.append(
            ((heading(headings[SUMMARY]),), part(REPORT_TASKS["summary"], everything, "paragraph"))
        )
        plan.append(
            ((heading(headings[POINTS]),), part(REPORT_TASKS["points"], everything, "item"))
        )
    elif kind == "faq":
        for q in questions:
            asked = Written("heading", q, claims=False, answered=True)
            plan.append(
                ((asked,), part(REPORT_TASKS["answer"], found[q] or central, "paragraph", q))
            )
    elif kind == "study-guide":
        plan.append(((heading(headings[TERMS]),), part(REPORT_TASKS["terms"], everything, "terms")))
        for i, q in enumerate(questions):
            lead = (heading(headings[SHORT]),) if i == 0 else ()
            asked = Written("item", q, claims=False, answered=True)
            short = part(REPORT_TASKS["short"], found[q] or central, "paragraph", q)
            plan.append(((*lead, asked), short))
    else:
        task = REPORT_TASKS["custom"].format(instructions=instructions)
        plan.append(((), part(task, everything, "free")))

    written: list[tuple[tuple[Written, ...], list[Written], tuple[SourcePassage, ...]]] = []
    for i, (lead, request) in enumerate(plan, start=1):
        step(f"Waiting for {model}: part {i} of {len(plan)}", 1 + i, total)
        reply = ask(request.system, request.user, ANSWER_TOKENS)
        written.append((lead, parse_part(reply, request.style), request.given))
    if kind == "study-guide":
        step(f"Waiting for {model}: essay questions", total - 2, total)
        system = REPORT_ESSAY_PROMPT.format(n=ESSAYS, focus=focus, language=language)
        essays = parse_essays(ask(system, passages_text(central), QUESTION_TOKENS))[:ESSAYS]
        listed = [Written("item", e, claims=False) for e in essays]
        written.append(((heading(headings[ESSAY]), *listed), [], ()))
    if not any(r.strip() for r in replies):
        raise ModelError(NO_REPLY.format(model=model))
    step("Checking every sentence against its passages", total - 1, total)
    check = Checker(store, pool.passages(), embedder)
    lines, cites, counts = check.report(written, keep_unsupported)
    if counts.kept == 0:
        raise ModelError(NO_SENTENCE.format(model=model, written=counts.written))
    step("Written", total, total)
    title = f"{KIND_NAMES[kind]}: {notebook.name}"
    if kind == "custom":
        title = f"{notebook.name}: {shortened(instructions, 80)}"
    return Report(
        kind=kind,
        title=title,
        notebook_id=notebook_id,
        lines=tuple(drop_empty_headings(lines)),
        cites=tuple(cites),
        model=model,
        instructions=instructions,
        written=counts.written,
        kept=counts.kept,
        marked=counts.marked,
        document_ids=tuple(document_ids),
    )


def retrieved(
    store: Store, embedder: Embedder, notebook_id: int, query: str, documents: Sequence[Document]
) -> list[SourcePassage]:
    """The PER_QUESTION passages of the sources that best match `query`; by keywords alone when
    the notebook's embedding server cannot embed it now."""
    ids = [d.id for d in documents]
    try:
        hits = search(store, embedder, notebook_id, query, k=PER_QUESTION, document_ids=ids)
    except EmbeddingUnavailable:
        hits = search(
            store, embedder, notebook_id, query, k=PER_QUESTION, mode="keyword", document_ids=ids
        )
    return sources_from_hits(hits)


def heading(text: str) -> Written:
    return Written("heading", text, claims=False)


def shortened(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- the sources and their passages ----------------------------------------------------------


def sources_in_use(
    store: Store, notebook_id: int, document_ids: Sequence[int] = ()
) -> list[Document]:
    """The notebook's enabled sources with passages (only `document_ids`, when given)."""
    chosen = set(document_ids)
    return [
        d
        for d in store.documents(notebook_id)
        if d.enabled and d.passages and (not chosen or d.id in chosen)
    ]


def report_language(documents: Sequence[Document]) -> str | None:
    """The main language of the sources: of their main languages, the one most of their passages
    are in; None when no source's language is known."""
    held: Counter[str] = Counter()
    for d in documents:
        if d.languages:
            held[d.languages[0]] += d.passages
    return held.most_common(1)[0][0] if held else None


def central_of(
    store: Store, document: Document, documents: Sequence[Document]
) -> list[SourcePassage]:
    """The source's share of the CENTRAL passages: those nearest its centre, mostly prose, in
    reading order (knownote.answer.overview.central_passages)."""
    share = max(1, CENTRAL // len(documents))
    passages = store.passages(document.id)
    return [
        SourcePassage(
            0, p.id, document.id, document.title, p.idx, p.start, p.end, p.page_start,
            p.page_end, p.text, True, section=p.section,
        )
        for p in (passages[i] for i in central_passages(store, document.id, share))
    ]  # fmt: skip


class Pool:
    """The report's passages, numbered [1]…[k] in the order they were first chosen."""

    def __init__(self, first: Sequence[SourcePassage]) -> None:
        self._by_id: dict[tuple[int, int], SourcePassage] = {}
        self.add(first)

    def add(self, passages: Sequence[SourcePassage]) -> list[SourcePassage]:
        """Number the new passages; all of `passages` as numbered in the pool."""
        out = []
        for p in passages:
            key = (p.document_id, p.start)
            if key not in self._by_id:
                self._by_id[key] = replace(p, n=len(self._by_id) + 1, cited=True)
            out.append(self._by_id[key])
        return out

    def passages(self) -> list[SourcePassage]:
        return list(self._by_id.values())


def passages_text(passages: Sequence[SourcePassage]) -> str:
    blocks = [f"{passage_header(p.n, p)}\n{p.text.strip()}" for p in passages]
    return "Passages:\n\n" + "\n\n".join(blocks)


def fitted(
    llm: Chat, model: str, system: str, passages: list[SourcePassage], tail: str
) -> list[SourcePassage]:
    """The passages that fit the model's context with the prompt and room for the answer: the
    last chosen are left out first (a question's own passages come before the rest)."""
    limit = llm.context_length(model)
    if limit is None:
        return passages
    room, estimate = ANSWER_ROOM, estimate_tokens
    if isinstance(llm, AnswerServers):
        room, estimate = llm.room(model), llm.estimator(model)
    while len(passages) > 1:
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": passages_text(passages) + tail},
        ]
        if num_ctx_for(messages, answer_tokens=room, estimate=estimate) <= limit:
            break
        passages = passages[:-1]
    return passages


# --- reading the model's replies -------------------------------------------------------------


def _body_lines(reply: str) -> list[str]:
    """The reply's lines that hold anything, without its thinking and code fences."""
    lines = []
    for raw in without_thinking(reply).splitlines():
        if not _FENCE.match(raw) and raw.strip():
            lines.append(raw.strip())
    return lines


def _clean(text: str) -> str:
    return " ".join(_EMPHASIS.sub("", text).split()).strip()


def parse_questions(reply: str) -> list[str]:
    """The questions of a reply, one a line (bullets, numbers and marks removed), in order."""
    out: list[str] = []
    for line in _body_lines(reply):
        text = _clean(strip_marks(_BULLET.sub("", line, count=1)))
        text = re.sub(r"^(?:Q\d*|Question\s*\d*)\s*[:：.]\s*", "", text, flags=re.I)
        if text.endswith(QUESTION_ENDS) and len(text) <= MAX_QUESTION and text not in out:
            out.append(text)
    return out


def parse_essays(reply: str) -> list[str]:
    """Essay questions: each line of the reply that is not a heading ("Essay questions:")."""
    out: list[str] = []
    for line in _body_lines(reply):
        if _HEADING.match(line) or _BOLD_LINE.match(line) or _LABEL_LINE.match(line):
            continue
        text = _clean(strip_marks(_BULLET.sub("", line, count=1)))
        if 10 <= len(text) <= MAX_QUESTION and text not in out:
            out.append(text)
    return out


def parse_part(reply: str, style: str) -> list[Written]:
    """The lines of one part of a report: in "free" parts headings, list items and paragraphs
    as written; elsewhere the model's own headings are left out ("Summary:") and each line is
    read as a `style` line ("terms": items `term: definition`, the term as the label)."""
    out: list[Written] = []
    for line in _body_lines(reply):
        head = _HEADING.match(line) or _BOLD_LINE.match(line)
        if head or (_LABEL_LINE.match(line) and not MARK.search(line)):
            if style == "free":
                text = _clean(strip_marks(head.group(1) if head else line.rstrip(":：")))
                if text:
                    out.append(Written("heading", text, claims=False))
            continue
        bulleted = bool(_BULLET.match(line))
        text = _BULLET.sub("", line, count=1).strip()
        if style == "terms":
            term = _TERM.match(text)
            if term and not MARK.search(term.group(1)):
                out.append(Written("item", term.group(2).strip(), _clean(term.group(1))))
            else:
                out.append(Written("item", text))
        elif style == "free":
            out.append(Written("item" if bulleted else "paragraph", text))
        else:
            out.append(Written(style, text))
    return out


# --- checking each sentence ------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    written: int
    kept: int
    marked: int


class Checker:
    """Checks the sentences of a report against the passages they cite, and numbers the report's
    citations: one per passage and support span, in order of first appearance."""

    def __init__(
        self, store: Store, pool: Sequence[SourcePassage], embedder: Embedder | None
    ) -> None:
        self.store = store
        self.pool = {p.n: p for p in pool}
        self.roles = {i: Roles(store.roles(i)) for i in {p.document_id for p in pool}}
        spans = candidates(pool, self.roles)
        self.scorer = Scorer(spans)
        self.meaning = meaning_scorer(spans, embedder)
        self.cites: dict[tuple[int, tuple[int, int] | None], ReportCite] = {}
        self._pages: dict[int, tuple[list[int], list[Page]]] = {}

    def report(
        self,
        parts: Sequence[tuple[Sequence[Written], Sequence[Written], Sequence[SourcePassage]]],
        keep_unsupported: bool,
    ) -> tuple[list[ReportLine], list[ReportCite], Counts]:
        """The report's lines and citations from its parts: (lines before a reply, e.g. its
        heading and question; the reply's lines; the passages the reply was written from)."""
        out: list[ReportLine] = []
        written = kept = marked = 0
        for lead, body, given in parts:
            numbers = {p.n for p in given}
            lines: list[ReportLine] = []
            for line in body:
                if not line.claims:
                    lines.append(ReportLine(line.text, line.style, label=line.label))
                    continue
                label = line.label
                continues = False  # a sentence after the line's first goes on its paragraph
                for a, b in sentence_pieces(line.text, lines=True):
                    sentence = line.text[a:b]
                    if not re.search(r"\w", strip_marks(sentence)):
                        continue  # marks alone, or punctuation
                    written += 1
                    checked = self.sentence(sentence, numbers, label)
                    if checked is None:
                        continue  # its marks name no passage it was given
                    text, spans, unsupported = checked
                    marked += unsupported
                    if unsupported and not keep_unsupported:
                        continue
                    kept += 1
                    text, cites = self.numbered(text, spans)
                    lines.append(
                        ReportLine(text, line.style, cites, label, None, unsupported, continues)
                    )
                    label, continues = None, True  # a term's label goes with its first sentence
            answered = any(line.cites for line in lines)
            out.extend(
                ReportLine(w.text, w.style, label=w.label)
                for w in lead
                if answered or not w.answered
            )
            out.extend(lines)
        return out, sorted(self.cites.values(), key=lambda c: c.n), Counts(written, kept, marked)

    def sentence(
        self, sentence: str, given: set[int], label: str | None = None
    ) -> tuple[str, dict[int, tuple[int, int] | None], bool] | None:
        """The sentence with canonical marks, the support span in each passage it cites (None:
        no close match there) and whether it has no close match in any; None when it is to be
        dropped: its marks name no passage it was given, or it has none and no passage it was
        given holds a close match (then it cites that passage)."""
        text, numbers, _ = normalize_marks(sentence, max(self.pool, default=0))
        cited = [n for n in numbers if n in given]
        plain = strip_marks(text).strip()
        if label:  # a key term's definition is matched with its term
            plain = f"{label}: {plain}"
        if MARK.search(sentence) and not cited:
            return None
        if not cited:
            found = best_support(self.scorer, self.meaning, plain, given)
            if found is None or found[2]:
                return None
            n = self.scorer.spans[found[0]].n
            text, cited = f"{text.rstrip()} [{n}]", [n]
        spans: dict[int, tuple[int, int] | None] = {}
        for n in cited:
            found = best_support(self.scorer, self.meaning, plain, {n})
            close = found is not None and not found[2]
            c = self.scorer.spans[found[0]] if close else None
            spans[n] = (c.start, c.end) if c is not None else None
        text = _SPACED_CANONICAL.sub(lambda m: m.group(0) if int(m.group(1)) in spans else "", text)
        return text.strip(), spans, all(span is None for span in spans.values())

    def numbered(
        self, text: str, spans: dict[int, tuple[int, int] | None]
    ) -> tuple[str, tuple[int, ...]]:
        """The sentence with each passage's mark `[n]` as the report numbers its citation."""
        mapped = {n: self.cite(n, span).n for n, span in spans.items()}

        def renumber(match: re.Match[str]) -> str:
            return match.group(0).replace(f"[{match.group(1)}]", f"[{mapped[int(match.group(1))]}]")

        return _SPACED_CANONICAL.sub(renumber, text), tuple(dict.fromkeys(mapped.values()))

    def cite(self, n: int, span: tuple[int, int] | None) -> ReportCite:
        """The report's citation of passage `n` with `span`, numbered on first use."""
        key = (n, span)
        if key not in self.cites:
            p = self.pool[n]
            starts, pages = self._pages_of(p.document_id)
            at, to = span or (p.start, p.end)
            self.cites[key] = ReportCite(
                n=len(self.cites) + 1,
                document_id=p.document_id,
                title=p.title,
                start=p.start,
                end=p.end,
                quote=p.text,
                page=page_of(starts, pages, at),
                seconds=self.store.time_range(p.document_id, at, to),
                span=span,
            )
        return self.cites[key]

    def _pages_of(self, document_id: int) -> tuple[list[int], list[Page]]:
        if document_id not in self._pages:
            pages = self.store.pages(document_id)
            self._pages[document_id] = ([g.start for g in pages], pages)
        return self._pages[document_id]


def drop_empty_headings(lines: Sequence[ReportLine]) -> list[ReportLine]:
    """The lines without headings that nothing follows before the next heading (a part whose
    every sentence was dropped)."""
    out: list[ReportLine] = []
    for line in lines:
        if line.style == "heading" and out and out[-1].style == "heading":
            out.pop()
        out.append(line)
    if out and out[-1].style == "heading":
        out.pop()
    return out


# --- a timeline's labels ---------------------------------------------------------------------


def label_timeline(
    report: Report, llm: Chat, model: str, progress: Progress | None = None
) -> Report:
    """The timeline with a model's one-line label for each dated entry (`ReportLine.label`); the
    quotes, dates and citations unchanged. Raises KnowNoteError for a report without dated
    entries, ModelError when the model cannot be used or labels none of them."""
    step = progress or (lambda what, done, total: None)
    entries = [i for i, line in enumerate(report.lines) if line.date]
    if not entries:
        raise KnowNoteError("This report has no dated entries to label; make a timeline first.")
    batches = [entries[i : i + LABEL_BATCH] for i in range(0, len(entries), LABEL_BATCH)]
    labels: dict[int, str] = {}
    for done, batch in enumerate(batches):
        step(f"Waiting for {model}: labels", done, len(batches))
        listed = "\n".join(
            f"{j}. {report.lines[i].date}: {' '.join(strip_marks(report.lines[i].text).split())}"
            for j, i in enumerate(batch, start=1)
        )
        messages = [
            {"role": "system", "content": TIMELINE_LABEL_PROMPT},
            {"role": "user", "content": f"Entries:\n{listed}"},
        ]
        reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=40 * len(batch)))
        for j, label in parse_labels(reply, len(batch)).items():
            # A label that repeats its entry's date first ("2003: A 2003 study…"): the rest.
            date = report.lines[batch[j - 1]].date or ""
            label = re.sub(rf"^{re.escape(date)}\s*[:：]\s*", "", label)
            if label:
                labels[batch[j - 1]] = label
    step("Labelled", len(batches), len(batches))
    if not labels:
        raise ModelError(
            f"{model} wrote no label in the form asked for; the timeline is kept without labels. "
            "Try again, or a larger model."
        )
    lines = tuple(
        replace(line, label=labels[i]) if i in labels else line
        for i, line in enumerate(report.lines)
    )
    return replace(report, lines=lines, model=model)


def parse_labels(reply: str, k: int) -> dict[int, str]:
    """Entry number (1..k) -> its label, from lines such as "3: The bridge opens"."""
    out: dict[int, str] = {}
    for line in _body_lines(reply):
        found = _NUMBERED.match(_BULLET.sub("", line, count=1) if not line[0].isdigit() else line)
        if not found:
            continue
        n = int(found.group(1))
        label = _clean(strip_marks(found.group(2))).strip("\"'“”「」").rstrip(".。")
        if 1 <= n <= k and label and n not in out:
            out[n] = shortened(label, MAX_LABEL)
    return out
