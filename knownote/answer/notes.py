"""Notes: answers kept with their citations, and a person's own notes in Markdown.

A note saved from an answer keeps copies of the answer's text, passages and support spans, so it
outlives its chat; its cards are re-checked against the stored document text exactly like a
chat's (a changed document marks them stale). Editing such a note re-derives which passages it
cites and where each sentence leans from the new text. A note can also become a source of its
notebook: its Markdown, with the passages it cites quoted as footnotes, imported like a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import duckdb

from knownote.answer.chats import (
    answer_markdown,
    chat_title,
    citations_by_key,
    escape,
    export_markdown,
    insert_citations,
    list_chats,
    located,
    shown_supports,
    stale_sql,
)
from knownote.answer.cite import Answer, SourcePassage, Support, normalize_marks
from knownote.answer.ranges import SpanLinks
from knownote.answer.support import support_spans
from knownote.errors import KnowNoteError, NotFound
from knownote.index.embed import Embedder
from knownote.read.roles import Roles
from knownote.store.db import Store

NOTE_KIND = "note"


@dataclass(frozen=True)
class Note:
    """A note. `question` is set when it was saved from an answer; then `body` is the answer's
    text with canonical `[n]` marks and `passages` are the passages it had in front of it."""

    id: int
    notebook_id: int
    title: str
    body: str
    question: str | None
    model: str | None
    created_at: datetime
    updated_at: datetime
    passages: tuple[SourcePassage, ...] = ()
    supports: tuple[Support, ...] = ()

    @property
    def from_answer(self) -> bool:
        return self.question is not None

    def as_answer(self) -> Answer:
        """The note in the shape of an answer, so it renders and exports like one."""
        return Answer(
            question=self.question or self.title,
            text=self.body,
            model=self.model,
            extractive=False,
            incomplete=False,
            passages=self.passages,
            message_id=self.id,
            supports=self.supports,
        )


# --- writing --------------------------------------------------------------------------------


def save_answer(store: Store, notebook_id: int, answer: Answer) -> int:
    """Keep an answer as a note with copies of its passages and support spans. Returns its id."""
    if not answer.text.strip():
        raise KnowNoteError("This answer has no text to keep as a note.")
    with store.transaction() as db:
        _require_notebook(db, notebook_id)
        (note_id,) = db.execute(
            "INSERT INTO notes (notebook_id, title, body, question, model) "
            "VALUES (?, ?, ?, ?, ?) RETURNING id",
            [notebook_id, chat_title(answer.question), answer.text, answer.question, answer.model],
        ).fetchone()
        insert_citations(db, "note", note_id, answer.passages, answer.supports)
    return note_id


def write(store: Store, notebook_id: int, title: str, body: str) -> int:
    """Save a note a person wrote (Markdown). The title defaults to its first line."""
    title, body = _checked(title, body)
    with store.transaction() as db:
        _require_notebook(db, notebook_id)
        (note_id,) = db.execute(
            "INSERT INTO notes (notebook_id, title, body) VALUES (?, ?, ?) RETURNING id",
            [notebook_id, title, body],
        ).fetchone()
    return note_id


def edit(
    store: Store, note_id: int, title: str, body: str, embedder: Embedder | None = None
) -> None:
    """Change a note's title and text. For a note from an answer, the passages it cites and the
    support of each sentence follow the new text (matched by meaning too with the notebook's
    `embedder`)."""
    title, body = _checked(title, body)
    note = get(store, note_id)
    passages: tuple[SourcePassage, ...] = ()
    supports: tuple[Support, ...] = ()
    if note.from_answer:
        body, cited, _ = normalize_marks(body, len(note.passages))
        passages = tuple(replace(p, cited=p.n in cited, stale=False) for p in note.passages)
        roles = {d: Roles(store.roles(d)) for d in {p.document_id for p in passages}}
        supports = support_spans(body, passages, embedder, roles)
    with store.transaction() as db:
        db.execute(
            "UPDATE notes SET title = ?, body = ?, updated_at = current_timestamp WHERE id = ?",
            [title, body, note_id],
        )
        if note.from_answer:
            delete_citation_rows(db, [note_id])
            insert_citations(db, "note", note_id, passages, supports)


def delete(store: Store, note_id: int) -> None:
    get(store, note_id)
    with store.transaction() as db:
        delete_rows(db, [note_id])


def delete_rows(db: duckdb.DuckDBPyConnection, note_ids: Sequence[int]) -> None:
    """Delete notes with their passages and spans (inside the caller's transaction)."""
    delete_citation_rows(db, note_ids)
    db.execute("DELETE FROM notes WHERE id IN (SELECT unnest(?::BIGINT[]))", [list(note_ids)])


def delete_citation_rows(db: duckdb.DuckDBPyConnection, note_ids: Sequence[int]) -> None:
    for table in ("note_supports", "note_passages"):
        db.execute(
            f"DELETE FROM {table} WHERE note_id IN (SELECT unnest(?::BIGINT[]))", [list(note_ids)]
        )


def delete_notebook_notes(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    rows = db.execute("SELECT id FROM notes WHERE notebook_id = ?", [notebook_id]).fetchall()
    delete_rows(db, [row[0] for row in rows])


def _checked(title: str, body: str) -> tuple[str, str]:
    title, body = " ".join(title.split()), body.strip()
    if not title and not body:
        raise KnowNoteError("The note is empty: write something first.")
    return title or chat_title(body), body


def _require_notebook(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    if not db.execute("SELECT 1 FROM notebooks WHERE id = ?", [notebook_id]).fetchone():
        raise NotFound(f"The notebook {notebook_id} was deleted; the note was not saved.")


# --- reading --------------------------------------------------------------------------------

_NOTE_SQL = (
    "SELECT id, notebook_id, title, body, question, model, created_at, updated_at FROM notes"
)
_PASSAGES_SQL = f"""
    SELECT np.note_id, np.n, np.passage_id, np.document_id, np.title, np.passage_index,
           np.start, np."end", np.page_start, np.page_end, np.text, np.cited, {stale_sql("np")},
           p.section
    FROM note_passages np LEFT JOIN documents d ON d.id = np.document_id
    LEFT JOIN passages p ON p.id = np.passage_id AND p.document_id = np.document_id
    WHERE np.note_id IN (SELECT unnest(?::BIGINT[]))
    ORDER BY np.note_id, np.n
"""
_SUPPORTS_SQL = f"""
    SELECT s.note_id, s.sentence, s.sentence_start, s.sentence_end, s.n, s.document_id,
           s.start, s."end", s.text, s.score, s.suggested, s.weak, {stale_sql("s")}
    FROM note_supports s LEFT JOIN documents d ON d.id = s.document_id
    WHERE s.note_id IN (SELECT unnest(?::BIGINT[]))
    ORDER BY s.note_id, s.sentence
"""
_LIKE_SPECIALS = re.compile(r"([\\%_])")


def notes(store: Store, notebook_id: int, search: str = "") -> list[Note]:
    """The notebook's notes, newest first, with their citations re-checked. `search` keeps the
    notes whose title, text or question holds every one of its words (any case)."""
    words = search.split()
    where = "".join(" AND concat_ws(' ', title, body, question) ILIKE ? ESCAPE '\\'" for _ in words)
    patterns = ["%" + _LIKE_SPECIALS.sub(r"\\\1", w) + "%" for w in words]
    with store.lock:
        rows = store.db.execute(
            f"{_NOTE_SQL} WHERE notebook_id = ?{where} ORDER BY created_at DESC, id DESC",
            [notebook_id, *patterns],
        ).fetchall()
    return _with_citations(store, rows)


def get(store: Store, note_id: int) -> Note:
    with store.lock:
        rows = store.db.execute(f"{_NOTE_SQL} WHERE id = ?", [note_id]).fetchall()
    if not rows:
        raise NotFound(f"There is no note {note_id}.")
    return _with_citations(store, rows)[0]


def _with_citations(store: Store, rows: list[tuple]) -> list[Note]:
    ids = [row[0] for row in rows]
    with store.lock:
        passage_rows = store.db.execute(_PASSAGES_SQL, [ids]).fetchall()
        support_rows = store.db.execute(_SUPPORTS_SQL, [ids]).fetchall()
    passages, supports = citations_by_key(passage_rows, support_rows)
    supports = shown_supports(store, supports)
    return [
        Note(*row, passages=passages.get(i, ()), supports=supports.get(i, ()))
        for i, row in zip(ids, rows, strict=True)
    ]


# --- Markdown -------------------------------------------------------------------------------


def note_markdown(note: Note, store: Store | None = None, app_url: str | None = None) -> str:
    """One note as Markdown: a person's note as written; a kept answer with its footnotes (with
    a `store`, its passages' times in their recordings and web pages' origins; each with a link
    to its range in the app at `app_url`, when given)."""
    if note.from_answer:
        links = SpanLinks(app_url, note.notebook_id) if app_url else None
        answer = note.as_answer() if store is None else located(store, note.as_answer())
        lines = answer_markdown(answer, note.title, f"note{note.id}", links)
        return "\n".join(lines[1:]) + "\n"
    return f"## {escape(note.title)}\n\n{note.body}\n"


def export_notebook(store: Store, notebook_id: int, app_url: str | None = None) -> str:
    """The notebook's notes and then its chats, as one Markdown file with footnotes (linking
    to their ranges in the app at `app_url`, when given)."""
    name = store.notebook(notebook_id).name
    out = [f"# {name}: notes and chats", ""]
    kept = notes(store, notebook_id)
    out += ["# Notes", ""] if kept else []
    out += [note_markdown(note, store, app_url) for note in kept]
    for chat in reversed(list_chats(store, notebook_id)):
        out.append(export_markdown(store, chat.id, label=f"chat{chat.id}-", app_url=app_url))
    return "\n".join(out)


def as_source(note: Note) -> tuple[str, bytes]:
    """The file a note becomes when it is used as a source: a name and Markdown bytes."""
    safe = re.sub(r"[^\w\- ]+", "", note.title).strip()[:60] or f"note {note.id}"
    return f"Note - {safe}.md", note_markdown(note).encode("utf-8")
