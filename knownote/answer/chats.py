"""Saved chats: questions, answers and the passages each answer had in front of it.

A turn is written in two steps so that a process killed mid-answer never leaves a half-written
row: the question first (one statement), then the answer with all its passages in one
transaction. A question without an answer loads as an unanswered turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import astuple, dataclass, replace
from datetime import datetime

import duckdb

from knownote.answer.cite import Answer, SourcePassage, Support, normalize_marks, time_label
from knownote.answer.ranges import SpanLinks, library_links
from knownote.answer.support import NO_CLOSE_MATCH, NO_CLOSE_MATCH_ANY, shown_span
from knownote.errors import KnowNoteError, NotFound
from knownote.read.roles import Roles
from knownote.read.sections import section_label
from knownote.store.db import Store

EXTRACTIVE_NOTICE = (
    "Not a written answer: these are sentences quoted from your sources, because no answer "
    "model was available. Start Ollama (`ollama serve`, then `ollama pull llama3.2`) for "
    "written answers."
)
INCOMPLETE_NOTICE = "This answer stopped before it was finished; what arrived is kept."
UNANSWERED_NOTICE = "This question was not answered: the app stopped before the answer arrived."
TITLE_CHARS = 80


@dataclass(frozen=True)
class Chat:
    id: int
    notebook_id: int | None  # None: a chat of the library, asked across notebooks
    title: str
    created_at: datetime


def chat_title(question: str) -> str:
    """The first line of the first question, shortened."""
    line = " ".join(question.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


# --- writing --------------------------------------------------------------------------------


def add_question(
    store: Store, notebook_id: int | None, chat_id: int | None, question: str
) -> tuple[int, int]:
    """Save a question, creating the chat when `chat_id` is None. Returns (chat id, message id).
    `notebook_id` None: a chat of the library (asked across notebooks), which belongs to none."""
    with store.transaction() as db:
        known = db.execute("SELECT 1 FROM notebooks WHERE id = ?", [notebook_id]).fetchone()
        if notebook_id is not None and not known:
            raise NotFound(f"The notebook {notebook_id} was deleted; the question was not saved.")
        if chat_id is None:
            (chat_id,) = db.execute(
                "INSERT INTO chats (notebook_id, title) VALUES (?, ?) RETURNING id",
                [notebook_id, chat_title(question)],
            ).fetchone()
        else:
            row = db.execute("SELECT notebook_id FROM chats WHERE id = ?", [chat_id]).fetchone()
            if row is None:
                raise NotFound(f"There is no chat {chat_id}.")
            if row[0] != notebook_id:
                raise KnowNoteError(
                    f"Chat {chat_id} belongs to another notebook."
                    if row[0] is not None
                    else f"Chat {chat_id} was asked of the library; continue it there."
                )
        (message_id,) = db.execute(
            "INSERT INTO messages (chat_id, role, content) VALUES (?, 'user', ?) RETURNING id",
            [chat_id, question],
        ).fetchone()
    return chat_id, message_id


def add_answer(
    store: Store,
    chat_id: int,
    text: str,
    *,
    model: str | None,
    extractive: bool,
    incomplete: bool,
    passages: Sequence[SourcePassage],
    supports: Sequence[Support] = (),
    notice: str | None = None,
    searched: Sequence[str] = (),
) -> int:
    """Save an answer (its text as the model wrote it), why it fell short (`notice`, if it did),
    what was searched beside the question (`searched`: a follow-up's rewrite, translations),
    its passages and the support span of each sentence in one transaction."""
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM chats WHERE id = ?", [chat_id]).fetchone():
            raise NotFound(f"The chat {chat_id} was deleted while it was being answered.")
        (message_id,) = db.execute(
            "INSERT INTO messages "
            "(chat_id, role, content, model, extractive, incomplete, notice, searched) "
            "VALUES (?, 'assistant', ?, ?, ?, ?, ?, ?) RETURNING id",
            # One query a line (a query is one line): rows written before hold one query.
            [chat_id, text, model, extractive, incomplete, notice, "\n".join(searched) or None],
        ).fetchone()
        insert_citations(db, "answer", message_id, passages, supports)
    return message_id


# The tables holding what an answer (or a note kept from one) had in front of it and where each
# sentence leans: passages and spans of an answer by message id, of a note by note id.
CITATION_TABLES = {
    "answer": ("answer_passages", "answer_supports", "message_id"),
    "note": ("note_passages", "note_supports", "note_id"),
}


def insert_citations(
    db: duckdb.DuckDBPyConnection,
    owner: str,
    key: int,
    passages: Sequence[SourcePassage],
    supports: Sequence[Support],
) -> None:
    """Store the passages and support spans of an answer or a note (`owner`, in CITATION_TABLES)
    inside the caller's transaction."""
    passages_table, supports_table, key_column = CITATION_TABLES[owner]
    # Each record's first 11 fields, in the order of its columns here.
    for table, columns, records in (
        (passages_table, _PASSAGE_COLUMNS, passages),
        (supports_table, _SUPPORT_COLUMNS, supports),
    ):
        if records:
            db.executemany(
                f"INSERT INTO {table} ({key_column}, {columns}) VALUES ({', '.join('?' * 12)})",
                [(key, *astuple(r)[:11]) for r in records],
            )


_PASSAGE_COLUMNS = (
    'n, passage_id, document_id, title, passage_index, start, "end", page_start, page_end, '
    "text, cited"
)
_SUPPORT_COLUMNS = (
    'sentence, sentence_start, sentence_end, n, document_id, start, "end", text, score, '
    "suggested, weak"
)


def citations_by_key(
    passage_rows: Sequence[tuple], support_rows: Sequence[tuple]
) -> tuple[dict[int, tuple[SourcePassage, ...]], dict[int, tuple[Support, ...]]]:
    """Rows read by the re-checking queries (the key, the record's fields, then whether it is
    stale), grouped by the answer's or note's key."""
    passages: dict[int, list[SourcePassage]] = {}
    for row in passage_rows:
        passages.setdefault(row[0], []).append(
            SourcePassage(*row[1:12], stale=bool(row[12]), section=row[13] or "")
        )
    supports: dict[int, list[Support]] = {}
    for row in support_rows:
        supports.setdefault(row[0], []).append(Support(*row[1:12], stale=bool(row[12])))
    return (
        {k: tuple(v) for k, v in passages.items()},
        {k: tuple(v) for k, v in supports.items()},
    )


def shown_supports(
    store: Store, supports: dict[int, tuple[Support, ...]]
) -> dict[int, tuple[Support, ...]]:
    """Supports as a reader is shown them: a page header or footer inside a span as "…"."""
    roles: dict[int, Roles] = {}

    def shown(s: Support) -> Support:
        if s.stale:
            return s
        if s.document_id not in roles:
            roles[s.document_id] = Roles(store.roles(s.document_id))
        text = shown_span(s.text, s.start, roles[s.document_id])
        return s if text == " ".join(s.text.split()) else replace(s, shown=text)

    return {k: tuple(shown(s) for s in v) for k, v in supports.items()}


def delete_chat(store: Store, chat_id: int) -> None:
    get_chat(store, chat_id)
    with store.transaction() as db:
        delete_chat_rows(db, chat_id)


def delete_notebook_chats(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    """Delete every chat of a notebook (inside the caller's transaction)."""
    chats = db.execute("SELECT id FROM chats WHERE notebook_id = ?", [notebook_id]).fetchall()
    for (chat_id,) in chats:
        delete_chat_rows(db, chat_id)


def delete_chat_rows(db: duckdb.DuckDBPyConnection, chat_id: int) -> None:
    """Delete a chat with its messages and their passages (inside the caller's transaction)."""
    db.execute(
        "DELETE FROM answer_supports WHERE message_id IN "
        "(SELECT id FROM messages WHERE chat_id = ?)",
        [chat_id],
    )
    db.execute(
        "DELETE FROM answer_passages WHERE message_id IN "
        "(SELECT id FROM messages WHERE chat_id = ?)",
        [chat_id],
    )
    db.execute("DELETE FROM messages WHERE chat_id = ?", [chat_id])
    db.execute("DELETE FROM chats WHERE id = ?", [chat_id])


# --- reading --------------------------------------------------------------------------------


def list_chats(store: Store, notebook_id: int | None) -> list[Chat]:
    """The notebook's chats (None: the library's), newest first."""
    with store.lock:
        rows = store.db.execute(
            "SELECT id, notebook_id, title, created_at FROM chats "
            "WHERE notebook_id IS NOT DISTINCT FROM ? "
            "ORDER BY created_at DESC, id DESC",
            [notebook_id],
        ).fetchall()
    return [Chat(*row) for row in rows]


def get_chat(store: Store, chat_id: int) -> Chat:
    with store.lock:
        row = store.db.execute(
            "SELECT id, notebook_id, title, created_at FROM chats WHERE id = ?", [chat_id]
        ).fetchone()
    if row is None:
        raise NotFound(f"There is no chat {chat_id}.")
    return Chat(*row)


def stale_sql(alias: str) -> str:
    """True when row `alias` (a cited passage or span, its document joined as `d`) no longer
    matches: the document is gone or holds other text at [start, end). DuckDB's substring counts
    code points from 1, as Python's str indexes do from 0."""
    return (
        f'd.id IS NULL OR substring(d.text, {alias}.start + 1, {alias}."end" - {alias}.start) '
        f"IS DISTINCT FROM {alias}.text"
    )


_PASSAGES_SQL = f"""
    SELECT ap.message_id, ap.n, ap.passage_id, ap.document_id, ap.title, ap.passage_index,
           ap.start, ap."end", ap.page_start, ap.page_end, ap.text, ap.cited, {stale_sql("ap")},
           p.section
    FROM answer_passages ap
    JOIN messages m ON m.id = ap.message_id
    LEFT JOIN documents d ON d.id = ap.document_id
    LEFT JOIN passages p ON p.id = ap.passage_id AND p.document_id = ap.document_id
    WHERE m.chat_id = ?
    ORDER BY ap.message_id, ap.n
"""


# Support spans are re-checked like passages: stale when the document no longer holds the text.
_SUPPORTS_SQL = f"""
    SELECT s.message_id, s.sentence, s.sentence_start, s.sentence_end, s.n, s.document_id,
           s.start, s."end", s.text, s.score, s.suggested, s.weak, {stale_sql("s")}
    FROM answer_supports s
    JOIN messages m ON m.id = s.message_id
    LEFT JOIN documents d ON d.id = s.document_id
    WHERE m.chat_id = ?
    ORDER BY s.message_id, s.sentence
"""


def load_chat(store: Store, chat_id: int) -> list[Answer]:
    """The chat's turns in order, each an Answer carrying its question.

    Citations are re-checked against the stored document text: a passage whose text no longer
    matches (or whose document was deleted) comes back with `stale=True`.
    """
    get_chat(store, chat_id)
    with store.lock:
        messages = store.db.execute(
            "SELECT id, role, content, model, extractive, incomplete, notice, searched "
            "FROM messages "
            "WHERE chat_id = ? ORDER BY id",
            [chat_id],
        ).fetchall()
        rows = store.db.execute(_PASSAGES_SQL, [chat_id]).fetchall()
        support_rows = store.db.execute(_SUPPORTS_SQL, [chat_id]).fetchall()
    passages, supports = citations_by_key(rows, support_rows)
    supports = shown_supports(store, supports)
    answers: list[Answer] = []
    question: str | None = None
    for message_id, role, content, model, extractive, incomplete, stored, rewrite in messages:
        if role == "user":
            if question is not None:
                answers.append(_unanswered(question, chat_id))
            question = content
            continue
        own = passages.get(message_id, ())
        text, _, dropped = normalize_marks(content, len(own))
        notice = EXTRACTIVE_NOTICE if extractive else None
        if incomplete:
            notice = f"{notice} {INCOMPLETE_NOTICE}" if notice else INCOMPLETE_NOTICE
        if stored:  # the reason given when the answer was given (saved since m009)
            notice = stored
        answers.append(
            Answer(
                question=question or "",
                text=text,
                model=model,
                extractive=extractive,
                incomplete=incomplete,
                passages=own,
                chat_id=chat_id,
                message_id=message_id,
                dropped_marks=dropped,
                notice=notice,
                supports=supports.get(message_id, ()),
                searched=(question or "", *rewrite.split("\n")) if rewrite else (),
            )
        )
        question = None
    if question is not None:
        answers.append(_unanswered(question, chat_id))
    return answers


def _unanswered(question: str, chat_id: int) -> Answer:
    return Answer(
        question=question,
        text="",
        model=None,
        extractive=False,
        incomplete=True,
        passages=(),
        chat_id=chat_id,
        notice=UNANSWERED_NOTICE,
    )


# --- Markdown export ------------------------------------------------------------------------

_MD_SPECIALS = re.compile(r"([\\`*_\[\]<>|#])")
_CANONICAL_MARK = re.compile(r"\[(\d+)\]")


def escape(text: str) -> str:
    """Text shown literally in Markdown."""
    return _MD_SPECIALS.sub(r"\\\1", text)


def origin_label(store: Store, document_id: int) -> str:
    """'fetched from ADDRESS (ending at FINAL) on 2026-12-02 05:10 UTC' for a web page, else ''."""
    origin = store.web_origin(document_id)
    if origin is None:
        return ""
    ended = "" if origin.final_address == origin.address else f" (ending at {origin.final_address})"
    return f"fetched from {origin.address}{ended} on {origin.fetched_at:%Y-%m-%d %H:%M} UTC"


def located(store: Store, answer: Answer) -> Answer:
    """The answer with its passages' times in their recording and their web pages' origins."""
    passages = tuple(
        replace(
            p,
            seconds=store.time_range(p.document_id, p.start, p.end),
            origin=origin_label(store, p.document_id),
        )
        for p in answer.passages
    )
    return replace(answer, passages=passages)


def _where(p: SourcePassage) -> str:
    parts = [f"“{escape(p.title)}”"]
    if p.section:
        parts.append(escape(section_label(p.section)))
    if p.pages:
        parts.append(p.pages)
    if p.seconds is not None:
        parts.append(time_label(p.seconds))
    parts.append(p.chars)
    if p.origin:
        parts.append(escape(p.origin))
    return ", ".join(parts)


def _quote(text: str, indent: str) -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join(f"{indent}> {escape(line)}".rstrip() for line in lines)


def _footnote_marks(text: str, label: dict[int, str]) -> str:
    """[n] -> [^turn-n], so each answer's marks point at its own footnotes."""

    def mark(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[^{label[n]}]" if n in label else ""

    return _CANONICAL_MARK.sub(mark, text)


def _support_quotes(answer: Answer, p: SourcePassage) -> list[str]:
    """Under a footnote: the span of the passage each answer sentence leans on, with offsets."""
    out = []
    for s in answer.supports:
        if s.n != p.n or s.weak or s.suggested:
            continue
        stale = " (stale: the document changed)" if s.stale else ""
        out += ["", f"    Sentence {s.sentence + 1} leans on {s.chars}{stale}:", ""]
        out.append(_quote(s.display, "    "))
    return out


def _flags(answer: Answer) -> list[str]:
    return [
        f"*Sentence {s.sentence + 1}: {NO_CLOSE_MATCH_ANY if s.suggested else NO_CLOSE_MATCH}.*"
        for s in answer.supports
        if s.weak and not s.stale
    ]


def export_markdown(store: Store, chat_id: int, label: str = "", app_url: str | None = None) -> str:
    """The chat as Markdown: each question and answer, then footnotes for its citations with the
    document, page, character range, the quoted passage text and, given the app's address
    (`app_url`), a link that opens the range in the app."""
    chat = get_chat(store, chat_id)
    links = None
    if app_url and chat.notebook_id is not None:
        links = SpanLinks(app_url, chat.notebook_id)
    elif app_url:  # a chat of the library: each link opens its document's notebook
        cited = {p.document_id for a in load_chat(store, chat_id) for p in a.passages}
        links = library_links(store, app_url, cited)
    out = [
        f"# {escape(chat.title)}",
        "",
        f"Chat {chat.id}, started {chat.created_at:%Y-%m-%d %H:%M}.",
    ]
    for turn, answer in enumerate(load_chat(store, chat_id), start=1):
        out += answer_markdown(located(store, answer), answer.question, f"{label}{turn}", links)
    return "\n".join(out) + "\n"


def searched_also(answer: Answer) -> str:
    """“the rewrite”, “a translation” … : what was searched beside the question, escaped."""
    return ", ".join(f"“{escape(query)}”" for query in answer.searched[1:])


def answer_markdown(
    answer: Answer, heading: str, prefix: str, links: SpanLinks | None = None
) -> list[str]:
    """One answer as Markdown lines under a `##` heading, its footnotes labelled `prefix-n`;
    with `links`, each footnote links to its range in the app."""
    label = {p.n: f"{prefix}-{p.n}" for p in answer.passages}
    out = ["", f"## {escape(' '.join(heading.split()))}", ""]
    if answer.notice:
        out += [f"*{answer.notice}*", ""]
    if len(answer.searched) > 1:
        out += [f"*Searched for {searched_also(answer)} and the question.*", ""]
    if answer.text:
        out.append(_footnote_marks(answer.text, label).strip())
        flags = _flags(answer)
        if flags:
            out += ["", *flags]
    if answer.model:
        out += ["", f"— {answer.model}"]
    for p in answer.citations:
        stale = " (stale: the document changed or was removed since this answer)" if p.stale else ""
        opens = ""
        if links and not p.stale:
            opens = f" [open in KnowNote](<{links.link(p.document_id, p.start, p.end)}>)"
        out += [
            "",
            f"[^{label[p.n]}]: {_where(p)}{stale}{opens}",
            "",
            _quote(p.text, "    "),
        ]
        out += _support_quotes(answer, p)
    others = [p for p in answer.passages if not p.cited]
    if others:
        out += ["", "Also given to the model, not cited:", ""]
        out += [f"- [{p.n}] {_where(p)}" for p in others]
    return out
