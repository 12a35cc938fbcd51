"""The Overview view: each source at a glance, by its most central sentences, quoted, and with a
model connected, a short summary citing its passages and three questions to ask."""

from __future__ import annotations

import html
from collections.abc import Callable

import streamlit as st

from knownote.answer.cite import Answer
from knownote.answer.overview import (
    Overview,
    Quote,
    central_sentences,
    load_overview,
    write_overview,
)
from knownote.answer.servers import AnswerServers
from knownote.errors import KnowNoteError
from knownote.index.embed import Embedder
from knownote.pipeline.worker import ImportWorker
from knownote.show.excerpt import answer_html, escape_markdown
from knownote.store.db import Document, Notebook, Store
from knownote.ui.chat import card

SOURCES_PER_VIEW = 10
LABEL = (
    "Quoted from each source: the sentences nearest the centre of what it says, found by "
    "embedding similarity. Quotes, not a summary."
)
WRITTEN = "Written by {model} from the passages it cites: the material it had, not proof."


@st.cache_resource(max_entries=256, show_spinner=False)
def quotes_of(
    db: str, document_id: int, roles_read: int | None, _store: Store, _embedder: Embedder
) -> list[Quote]:
    """Computed once per document and reading of its roles (ids are never reused and a
    document's text never changes; the quotes are drawn from its body text)."""
    return central_sentences(_store, _embedder, document_id)


def overview_view(
    store: Store,
    notebook: Notebook,
    embedder: Callable[[], Embedder],
    llm: AnswerServers | None,
    model: str | None,
    worker: ImportWorker | None = None,
) -> None:
    documents = [d for d in store.documents(notebook.id) if d.enabled]
    if not documents:
        st.caption("No sources in use yet: add some under Sources, or switch them on there.")
        return
    st.caption(LABEL)
    shown = documents[: st.session_state.get("overview_shown", SOURCES_PER_VIEW)]
    written = {d.id: load_overview(store, d.id) for d in shown}
    due = worker.overviews_due() if worker is not None else set()
    errors = worker.overview_errors if worker is not None else {}
    missing = [d for d in shown if written[d.id] is None and d.id not in due]
    if (
        llm is not None
        and model
        and missing
        and st.button(f"Write overviews with {escape_markdown(model)}", key="write_overviews")
    ):
        progress = st.progress(0.0, text="Writing overviews…")
        for i, document in enumerate(missing):
            title = escape_markdown(document.title)
            progress.progress(i / len(missing), text=f"Writing the overview of {title}")
            write(store, llm, model, document)
        progress.empty()
        st.rerun()
    for document in shown:
        with st.container(border=True):
            if document.id in due:
                st.caption("Its overview is being written after the imports; look again soon.")
            elif written[document.id] is None and document.id in errors:
                st.caption(f"No overview was written: {escape_markdown(errors[document.id])}")
            source_overview(store, document, written[document.id], embedder, llm, model)
    if due & {d.id for d in shown}:
        rerun_when_written(worker, frozenset(due))
    if len(documents) > len(shown):
        st.button(
            f"Show {min(SOURCES_PER_VIEW, len(documents) - len(shown)):,} more",
            key="show_more_overview",
            on_click=show_more,
        )


def source_overview(
    store: Store,
    document: Document,
    written: Overview | None,
    embedder: Callable[[], Embedder],
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    st.markdown(f"**{escape_markdown(document.title)}**")
    if written is not None:
        answer = Answer(
            question=document.title,
            text=written.summary,
            model=written.model,
            extractive=False,
            incomplete=False,
            passages=written.passages,
            message_id=document.id,
        )
        st.html(answer_html(answer.text, document.id, [p.n for p in answer.citations]))
        st.caption(WRITTEN.format(model=written.model))
        for question in written.questions:
            st.button(
                escape_markdown(question),
                key=f"suggested_{document.id}_{question}",
                on_click=ask_in_chat,
                args=(question,),
                help="Ask this in a new chat",
            )
        for passage in answer.citations:  # shown, so each [n] leads somewhere
            st.html(card(store, answer, passage))
    if llm is not None and model:
        label = "Write again" if written is not None else f"Write an overview with {model}"
        label = escape_markdown(label)
        if st.button(label, key=f"write_overview_{document.id}"):
            with st.spinner(f"Writing the overview of {escape_markdown(document.title)}…"):
                write(store, llm, model, document)
            st.rerun()
    try:
        quotes = quotes_of(str(store.path), document.id, document.roles_read, store, embedder())
    except KnowNoteError as e:  # the notebook's embedding server is down
        st.caption(str(e))
        return
    if not quotes:
        st.caption("No sentence long enough to quote.")
    for quote in quotes:
        st.html(
            f'<blockquote class="kn-quote" data-document="{quote.document_id}" '
            f'data-start="{quote.start}" data-end="{quote.end}">'
            f"“{html.escape(quote.shown)}” "
            f'<span class="kn-where">{html.escape(quote.where)}</span></blockquote>'
        )


def write(store: Store, llm: AnswerServers, model: str, document: Document) -> None:
    """Write one overview; a failure is said after the rerun that shows the others."""
    try:
        write_overview(store, llm, model, document.id)
    except KnowNoteError as e:
        said = st.session_state.get("flash", ("error", ""))[1]
        line = f"{escape_markdown(document.title)}: {escape_markdown(str(e))}"
        st.session_state["flash"] = ("error", f"{said}\n\n{line}".strip())


@st.fragment(run_every=2)
def rerun_when_written(worker: ImportWorker, waiting: frozenset[int]) -> None:
    """Show the overviews being written as soon as they are in."""
    if not waiting & worker.overviews_due():
        st.rerun(scope="app")


def ask_in_chat(question: str) -> None:
    st.session_state["view"] = "Chat"
    st.session_state["chat"] = None  # a new chat
    st.session_state["ask_now"] = question


def show_more() -> None:
    shown = st.session_state.get("overview_shown", SOURCES_PER_VIEW)
    st.session_state["overview_shown"] = shown + SOURCES_PER_VIEW
