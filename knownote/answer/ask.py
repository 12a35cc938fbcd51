"""Answer a question from a notebook: retrieve, prompt the model or quote the sources, save.

The passages put in front of the model are numbered [1]..[k]; the model marks each sentence with
the numbers it used, and those marks are parsed back into citations (knownote.answer.cite).
Without a model, the answer is built from the passages themselves: their sentences most relevant
to the question, each followed by its [n], and labelled as quotations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from knownote.answer import chats
from knownote.answer.cite import (
    Answer,
    SourcePassage,
    normalize_marks,
    parse_citations,
    sources_from_hits,
)
from knownote.answer.ollama_chat import EXAMPLE_MODEL
from knownote.answer.prompts import (
    HISTORY_TURNS,
    Chat,
    fit_prompt,
    rewrite_query,
    standalone_query,
    translate_question,
    without_thinking,
)
from knownote.answer.quotes import extractive_answer
from knownote.answer.repetition import RepetitionCut
from knownote.answer.support import support_spans
from knownote.errors import KnowNoteError, ModelError, StreamInterrupted
from knownote.index.centring import LanguageMeans
from knownote.index.embed import Embedder
from knownote.index.embedders import get_embedder
from knownote.index.language import NAMES, language_of
from knownote.read.roles import Roles
from knownote.search.followup import queries_for, search_queries
from knownote.search.library import EmbedderFor, reading_model, search_library
from knownote.search.retrieve import Hit, language_means
from knownote.settings import Settings
from knownote.store.db import Notebook, Store

__all__ = ["Answer", "SourcePassage", "ask", "ask_library", "parse_citations"]

NOT_CONNECTED = (
    "Not connected to a model (no Ollama server at {host}): these are sentences quoted from "
    "your sources, not a written answer. For written answers start Ollama (`ollama serve`, "
    f"then `ollama pull {EXAMPLE_MODEL}`) and choose a model."
)
NO_MODEL = (
    "No answer model chosen: these are sentences quoted from your sources, not a written "
    f"answer. Install a model (`ollama pull {EXAMPLE_MODEL}`) and choose it for written answers."
)
QUOTED_AS_ASKED = (
    "Quoted, as asked: these are sentences quoted from your sources, not a written answer."
)
QUOTED_INSTEAD = "Meanwhile, these are sentences quoted from your sources, not a written answer."
NO_PASSAGES = (
    "Nothing in this notebook matches the question: it has no enabled documents with text in "
    "the chosen scope. Import documents, enable them or widen the scope, then ask again."
)
NO_PASSAGES_LIBRARY = (
    "Nothing in the notebooks asked matches the question: they have no enabled documents with "
    "text. Import documents or put a notebook with some in the library, then ask again."
)
NO_CITATIONS = "The model cited none of the passages; the passages it was given are listed."
LEFT_OUT = (
    "{dropped} of the {total} passages found were left out to fit the model's context of "
    "{limit:,} tokens."
)
REPEATED = "The model began repeating itself; the answer was cut there."

TokenCallback = Callable[[str], None]


# --- asking ---------------------------------------------------------------------------------


def _mark_cited(passages: Sequence[SourcePassage], cited: set[int]) -> tuple[SourcePassage, ...]:
    return tuple(replace(p, cited=p.n in cited) for p in passages)


def _document_texts(store: Store, hits: Sequence[Hit]) -> dict[int, str]:
    texts = {}
    for document_id in {h.document_id for h in hits}:
        with contextlib.suppress(KnowNoteError):
            texts[document_id] = store.document_text(document_id)
    return texts


def _roles(store: Store, cited: Sequence[Hit] | Sequence[SourcePassage]) -> dict[int, Roles]:
    """The roles of the documents the hits or passages come from."""
    return {i: Roles(store.roles(i)) for i in {c.document_id for c in cited}}


def _language_means(store: Store, notebook_id: int) -> LanguageMeans | None:
    """The notebook's language means, as its searches centre scores; None when unreadable."""
    try:
        return language_means(store, notebook_id)
    except KnowNoteError:
        return None


def ask(
    store: Store,
    embedder: Embedder,
    notebook_id: int,
    question: str,
    *,
    llm: Chat | None,
    model: str | None,
    settings: Settings,
    k: int = 8,
    mode: str = "hybrid",
    document_ids: Sequence[int] | None = None,
    chat_id: int | None = None,
    on_token: TokenCallback | None = None,
    quoted: bool = False,
) -> Answer:
    """Answer a question from a notebook's passages and save the turn in a chat.

    Args:
        store: the open database.
        embedder: the notebook's embedding model.
        notebook_id: the notebook to answer from.
        question: the user's question.
        llm: the answer servers (or one Ollama client), or None for an extractive answer.
        model: the model to use, `openai:NAME` on the OpenAI-compatible server (None:
            extractive answer).
        settings: the settings (the Ollama address named when no model is connected).
        k: how many passages to retrieve and put in front of the model.
        mode: the search mode ("hybrid", "vector" or "keyword").
        document_ids: limit the search to these documents.
        chat_id: continue this chat (a follow-up); None starts a new chat.
        on_token: called with each piece of the answer as it arrives.
        quoted: quote the passages, asked for (no model is used, and `notice` says so).

    Returns:
        The Answer with its passages, saved in the chat; `chat_id` and `message_id` are set.
        If the model fails before it says anything, the answer is extractive and `notice` says
        why; if it fails midway, the partial text is kept with `incomplete=True`. A follow-up
        searches the question and the model's rewrite of it; `searched` lists both.
    """
    question = question.strip()
    if not question:
        raise KnowNoteError("Type a question first.")
    if quoted:
        llm, model = None, None
    store.notebook(notebook_id)
    history: list[Answer] = []
    if chat_id is not None:
        chat = chats.get_chat(store, chat_id)
        if chat.notebook_id is None:
            raise KnowNoteError(f"Chat {chat_id} was asked of the library; continue it there.")
        if chat.notebook_id != notebook_id:
            raise KnowNoteError(f"Chat {chat_id} belongs to another notebook.")
        history = chats.load_chat(store, chat_id)
    query, failure = rewrite_query(question, history, llm if model else None, model)
    if failure is not None:  # the model cannot answer now either: search as without one
        query = standalone_query(question, history, None, None)
    earlier = [t for turn in history[-HISTORY_TURNS:] for t in (turn.question, turn.text)]
    queries = queries_for(question, query, earlier)
    translations: list[str] = []
    if settings.translate_questions and llm is not None and model and failure is None:
        translations, _ = translate_question(
            question, other_languages(store, notebook_id, question), llm, model
        )  # a model failing here fails again below, and says so there
    found = search_queries(
        store,
        embedder,
        notebook_id,
        queries,
        k=k,
        mode=mode,
        document_ids=document_ids,
        translations=translations,
    )
    # The question is saved before the answer starts, so a crash mid-answer keeps it.
    chat_id, _ = chats.add_question(store, notebook_id, chat_id, question)
    record = Turn(store, chat_id, question, on_token, found.queries, found.note, embedder)
    means = _language_means(store, notebook_id)
    return _respond(
        record, embedder, found.hits, queries, history, failure, llm, model, settings, quoted,
        means,
    )  # fmt: skip


def _respond(
    record: Turn,
    embedder: Embedder,
    hits: list[Hit],
    queries: Sequence[str],
    history: list[Answer],
    failure: str | None,
    llm: Chat | None,
    model: str | None,
    settings: Settings,
    quoted: bool,
    means: LanguageMeans | None,
    empty: str = NO_PASSAGES,
) -> Answer:
    """Answer from the hits (the question is saved): the model's answer, or quotes of them."""
    store, question = record.store, record.question
    if not hits:
        return record.save(empty, (), model=None, extractive=False, notice=None)
    passages = sources_from_hits(hits)
    hosts = settings.ollama_host
    if settings.openai_base_url:
        hosts += f", no OpenAI-compatible server at {settings.openai_base_url}"
    notice = NOT_CONNECTED.format(host=hosts) if llm is None else NO_MODEL
    if quoted:
        notice = QUOTED_AS_ASKED
    if failure is not None:
        notice = f"{failure} {QUOTED_INSTEAD}"
    elif llm is not None and model:
        try:
            return _written(record, llm, model, question, passages, history[-HISTORY_TURNS:])
        except ModelError as e:  # failed before saying anything: quote the sources instead
            notice = f"{e} {QUOTED_INSTEAD}"
    text, cited = extractive_answer(
        embedder, queries[-1], hits, _document_texts(store, hits), means, _roles(store, hits)
    )
    answer = record.save(
        text, _mark_cited(passages, cited), model=None, extractive=True, notice=notice
    )
    if record.on_token:
        record.on_token(answer.text)
    return answer


def ask_library(
    store: Store,
    notebooks: Sequence[Notebook],
    question: str,
    *,
    llm: Chat | None,
    model: str | None,
    settings: Settings,
    k: int = 8,
    mode: str = "hybrid",
    chat_id: int | None = None,
    on_token: TokenCallback | None = None,
    quoted: bool = False,
    embedders: EmbedderFor = get_embedder,
) -> Answer:
    """Answer a question from several notebooks' passages (knownote.search.library) and save
    the turn in a chat of the library (a chat that belongs to no notebook).

    As `ask`, but each notebook is searched with its own embedding model and the rankings are
    fused; the answer's sentences are read with `library.reading_model`. `chat_id` continues a
    chat of the library.
    """
    question = question.strip()
    if not question:
        raise KnowNoteError("Type a question first.")
    if not notebooks:
        raise KnowNoteError("Choose at least one notebook to ask.")
    if quoted:
        llm, model = None, None
    history: list[Answer] = []
    if chat_id is not None:
        chat = chats.get_chat(store, chat_id)
        if chat.notebook_id is not None:
            raise KnowNoteError(
                f"Chat {chat_id} belongs to one notebook; ask it there, or start a new chat "
                "for the library."
            )
        history = chats.load_chat(store, chat_id)
    query, failure = rewrite_query(question, history, llm if model else None, model)
    if failure is not None:
        query = standalone_query(question, history, None, None)
    earlier = [t for turn in history[-HISTORY_TURNS:] for t in (turn.question, turn.text)]
    queries = queries_for(question, query, earlier)
    translations: list[str] = []
    if settings.translate_questions and llm is not None and model and failure is None:
        asked = language_of(question)
        languages = {c for n in notebooks for c in store.notebook_languages(n.id)}
        others = sorted(c for c in languages if asked and c != asked and c in NAMES)
        translations, _ = translate_question(question, others, llm, model)
    found = search_library(
        store, notebooks, queries, k=k, mode=mode, translations=translations, embedders=embedders
    )
    chat_id, _ = chats.add_question(store, None, chat_id, question)
    reader = embedders(reading_model(notebooks))
    record = Turn(store, chat_id, question, on_token, found.queries, found.note, reader)
    return _respond(
        record, reader, found.hits, queries, history, failure, llm, model, settings, quoted,
        None, NO_PASSAGES_LIBRARY,
    )  # fmt: skip


def other_languages(store: Store, notebook_id: int, question: str) -> list[str]:
    """The codes of the notebook's source languages other than the question's ("en"); none
    when the question's language cannot be told."""
    asked = language_of(question)
    if asked is None:
        return []
    return [c for c in store.notebook_languages(notebook_id) if c != asked and c in NAMES]


def _written(
    record: Turn,
    llm: Chat,
    model: str,
    question: str,
    passages: list[SourcePassage],
    history: list[Answer],
) -> Answer:
    found = len(passages)
    messages, passages, num_ctx = fit_prompt(llm, model, question, passages, history)
    left_out = None
    if len(passages) < found:
        left_out = LEFT_OUT.format(dropped=found - len(passages), total=found, limit=num_ctx)
    received: list[str] = []
    cut = RepetitionCut()
    stream = llm.stream(model, messages, num_ctx)
    try:
        for piece in stream:
            received.append(piece)
            if record.on_token:
                record.on_token(piece)
            if cut.repeated("".join(received)):
                text = cut.text
                return record.save_model_text(text, passages, model, False, REPEATED, left_out)
    except StreamInterrupted as e:
        notice = f"{e} What arrived is kept and marked incomplete."
        return record.save_model_text("".join(received), passages, model, True, notice, left_out)
    except ModelError:
        if received:  # cannot happen by llm's rule; kept so no text is ever lost
            return record.save_model_text("".join(received), passages, model, True, None)
        raise
    except BaseException:
        # Stopped from outside (Ctrl-C, the app's rerun): keep what arrived, then stop.
        if received:
            record.save_model_text("".join(received), passages, model, True, None)
        raise
    finally:
        stream.close()
    return record.save_model_text("".join(received), passages, model, False, None, left_out)


@dataclass(frozen=True)
class Turn:
    """Saves the answer to one question; the question itself is already saved."""

    store: Store
    chat_id: int
    question: str
    on_token: TokenCallback | None
    searched: tuple[str, ...] = ()
    search_note: str | None = None  # the search fell back to keywords
    embedder: Embedder | None = None  # matches answer sentences by meaning (other languages)

    def save_model_text(
        self,
        raw: str,
        passages: Sequence[SourcePassage],
        model: str,
        incomplete: bool,
        notice: str | None,
        left_out: str | None = None,
    ) -> Answer:
        raw = without_thinking(raw)
        _, cited, _ = normalize_marks(raw, len(passages))
        if not cited and raw and not incomplete:
            notice = " ".join(n for n in (NO_CITATIONS, notice) if n)
        if left_out:
            notice = " ".join(n for n in (notice, left_out) if n)
        return self.save(
            raw,
            _mark_cited(passages, set(cited)),
            model=model,
            extractive=False,
            notice=notice,
            incomplete=incomplete,
        )

    def save(
        self,
        raw: str,
        passages: Sequence[SourcePassage],
        *,
        model: str | None,
        extractive: bool,
        notice: str | None,
        incomplete: bool = False,
    ) -> Answer:
        text, _, dropped = normalize_marks(raw, len(passages))
        supports = support_spans(text, passages, self.embedder, _roles(self.store, passages))
        message_id = chats.add_answer(
            self.store,
            self.chat_id,
            raw,
            model=model,
            extractive=extractive,
            incomplete=incomplete,
            passages=passages,
            supports=supports,
            notice=notice,
            searched=self.searched[1:],
        )
        if self.search_note:
            notice = " ".join(n for n in (self.search_note, notice) if n)
        return Answer(
            question=self.question,
            text=text,
            model=model,
            extractive=extractive,
            incomplete=incomplete,
            passages=tuple(passages),
            chat_id=self.chat_id,
            message_id=message_id,
            dropped_marks=dropped,
            notice=notice,
            searched=self.searched,
            supports=supports,
        )
