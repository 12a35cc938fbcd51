"""The Sources view: uploads into the import queue, its live progress, and the list of documents."""

from __future__ import annotations

import streamlit as st

from knownote.answer.chats import origin_label
from knownote.answer.cite import clock
from knownote.answer.servers import AnswerServers
from knownote.errors import NotFound
from knownote.index.centring import held_languages
from knownote.index.embedders import describe_model
from knownote.index.language import language_name
from knownote.pipeline.ingest import OCR_KINDS
from knownote.pipeline.reindex import is_stale
from knownote.pipeline.worker import ImportWorker
from knownote.read.sniff import SUPPORTED
from knownote.settings import MULTILINGUAL, Settings
from knownote.show.excerpt import escape_markdown, text_with_page_markers
from knownote.store.db import Document, Notebook, Store
from knownote.store.reembed import reembed_of
from knownote.ui.common import (
    ALREADY_DELETED,
    ask_before_deleting,
    count,
    document_text,
    set_confirm,
)
from knownote.ui.imports import import_panel, queue_addresses, queue_uploads

OLD_INDEX = (
    "Indexed without its title and sections: searched as before until the re-index above "
    "has redone it."
)
PAGES_PER_VIEW = 10
CHARS_PER_VIEW = 60_000
SOURCES_PER_VIEW = 30
SORTS = {
    "Newest first": lambda d: -d.id,
    "Oldest first": lambda d: d.id,
    "Name": lambda d: (d.title.casefold(), d.id),
    "Largest first": lambda d: (-d.n_chars, d.id),
}


def sources_view(
    store: Store,
    notebook: Notebook,
    settings: Settings,
    worker: ImportWorker,
    writer: tuple[AnswerServers, str] | None = None,
) -> None:
    """`writer`: the answer servers and model that write each new source's overview."""
    round_ = st.session_state.setdefault("upload_round", 0)
    files = st.file_uploader(
        "Add sources: drop files here or browse",
        accept_multiple_files=True,
        key=f"upload_{round_}",
        help=f"{SUPPORTED}. Drop several files at once.",
    )
    if files:
        queue_uploads(worker, notebook, settings, files, writer)
        st.session_state["upload_round"] = round_ + 1  # a fresh, empty uploader
        st.rerun()

    address_form(worker, notebook, settings, writer)
    import_panel(worker, notebook)
    model_row(store, notebook, settings, worker)
    documents = store.documents(notebook.id)
    if not documents:
        st.caption(
            "No sources yet. Add PDFs, Word, PowerPoint, EPUB, HTML, Markdown or text, "
            "recordings, or web pages by their address."
        )
        return
    enabled = sum(d.enabled for d in documents)
    st.subheader(f"{count(len(documents), 'source')} · {enabled} used in answers", anchor=False)
    languages_caption(store.passage_languages(notebook.id))
    for document in find_and_sort(documents):
        document_row(store, document, worker)


def languages_caption(passages: dict[str, int]) -> None:
    """The languages of the sources used in answers, and what a notebook of several does."""
    if not passages:
        return
    named = " · ".join(
        f"{language_name(code)} ({count(n, 'passage')})" for code, n in passages.items()
    )
    held = held_languages(passages)
    st.caption(
        f"In {named}."
        + (
            " A question finds passages in any of these languages, not only its own: each "
            "language is searched on the same footing (see the docs on mixed notebooks)."
            if len(held) >= 2
            else ""
        )
    )


def address_form(
    worker: ImportWorker,
    notebook: Notebook,
    settings: Settings,
    writer: tuple[AnswerServers, str] | None,
) -> None:
    """Web pages by their address: fetched in the import queue, the page kept as it was."""
    with st.form("add_addresses", clear_on_submit=True, border=False):
        left, right = st.columns([5, 1], vertical_alignment="bottom")
        left.text_area(
            "Add web pages: paste addresses, one a line",
            key="addresses",
            height=68,
            placeholder="https://en.wikipedia.org/wiki/Tardigrade",
            help="Each page is fetched now and kept as it is; importing an address again adds "
            "a new version beside the old one. An address that serves a PDF imports as a PDF.",
        )
        right.form_submit_button(
            "Import",
            key="import_addresses",
            on_click=add_addresses,
            args=(worker, notebook, settings, writer),
        )
    # Kept until the next submission: the queue's progress reruns the page meanwhile.
    rejected = st.session_state.get("addresses_rejected")
    if rejected:
        st.warning(
            "Not web addresses (they must start with http:// or https://): "
            + ", ".join(escape_markdown(r) for r in rejected[:5])
        )


def add_addresses(
    worker: ImportWorker,
    notebook: Notebook,
    settings: Settings,
    writer: tuple[AnswerServers, str] | None,
) -> None:
    pasted = st.session_state.get("addresses", "")
    st.session_state["addresses_rejected"] = queue_addresses(
        worker, notebook, settings, pasted, writer
    )


def model_row(store: Store, notebook: Notebook, settings: Settings, worker: ImportWorker) -> None:
    """The notebook's embedding model, and the offer to re-embed it with the default one."""
    info, action = st.columns([6, 2], vertical_alignment="center")
    info.caption(f"Meaning model: {describe_model(notebook.embedding_model)}.")
    wanted = settings.embedding_model
    under_way = reembed_of(store, notebook.id)
    if under_way is not None:
        info.caption(
            f"Re-embedding with {escape_markdown(under_way.model)}: search uses "
            f"{escape_markdown(notebook.embedding_model)} until every passage has a new vector."
        )
    elif notebook.embedding_model != wanted:
        action.button(
            "Re-embed with the multilingual model"
            if wanted == MULTILINGUAL
            else f"Re-embed with {wanted}",
            key="reembed",
            help=f"Give every passage to {describe_model(wanted)} in the background; search "
            "goes on with the notebook's model until it is done.",
            on_click=worker.queue_reembed,
            args=(notebook.id, wanted),
        )


def find_and_sort(documents: list[Document]) -> list[Document]:
    """A name filter and a sort over the sources, and the first page of what matches."""
    if len(documents) < 2:
        return documents
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    wanted = left.text_input(
        "Find a source", key="source_filter", placeholder="Part of a title or file name"
    )
    order = right.selectbox("Sort by", list(SORTS), key="source_sort")
    words = wanted.casefold().split()
    matching = [
        d for d in documents if all(w in f"{d.title} {d.filename}".casefold() for w in words)
    ]
    matching.sort(key=SORTS[order])
    shown = st.session_state.get("sources_shown", SOURCES_PER_VIEW)
    if not matching:
        st.caption("No source matches.")
    elif len(matching) > shown:
        st.caption(f"Showing {shown:,} of {len(matching):,}. Narrow them with the filter, or:")
        st.button(
            f"Show {min(SOURCES_PER_VIEW, len(matching) - shown):,} more",
            key="show_more_sources",
            on_click=show_more_sources,
        )
    return matching[:shown]


def show_more_sources() -> None:
    shown = st.session_state.get("sources_shown", SOURCES_PER_VIEW)
    st.session_state["sources_shown"] = shown + SOURCES_PER_VIEW


def document_row(store: Store, document: Document, worker: ImportWorker) -> None:
    with st.container(border=True):
        info, switch, remove = st.columns([6, 2, 1], vertical_alignment="center")
        info.markdown(f"**{escape_markdown(document.title)}**")
        pages = f"{count(document.n_pages, 'page')} · " if document.n_pages else ""
        split = (
            f" of {document.passage_size:,} characters, {document.passage_overlap} overlapping"
            if document.passage_size is not None
            else ""
        )
        languages = (
            " · " + ", ".join(language_name(code) for code in document.languages)
            if document.languages
            else ""
        )
        info.caption(
            f"{escape_markdown(document.filename)} · {document.kind}{languages} · {pages}"
            f"{count(document.passages, 'passage')}{split} · "
            f"{count(document.n_chars, 'character')}"
        )
        origin = store.web_origin(document.id)
        if origin is not None:
            info.caption(
                f"Version {origin.version}, {escape_markdown(origin_label(store, document.id))}"
            )
        spoken = store.spoken_seconds(document.id) if document.kind in ("audio", "video") else None
        if spoken is not None:
            info.caption(f"Recording, speech transcribed up to {clock(spoken)}")
        for warning in document.warnings:
            info.caption(f"⚠ {escape_markdown(warning)}")
        if is_stale(document):
            info.caption(OLD_INDEX)
        switch.toggle(
            "Use in answers",
            value=document.enabled,
            key=f"enabled_{document.id}",
            on_change=set_enabled,
            args=(store, document.id),
        )
        ask_before_deleting(
            remove,
            ("document", document.id),
            key=str(document.id),
            label="Delete",
            warning="Delete this source and its passages? Answers that cite it become stale.",
            on_delete=delete_document,
            args=(store, document.id),
        )
        if document.kind in OCR_KINDS:
            switch.button(
                "Read again by OCR",
                key=f"read_by_ocr_{document.id}",
                help="Read every page of the file again by OCR, in the background, as a new "
                "version beside this one: for a scan whose text reads wrong.",
                on_click=read_again_by_ocr,
                args=(worker, document.id),
            )
        if st.toggle("Show extracted text", key=f"show_text_{document.id}"):
            extracted_text(store, document)


def extracted_text(store: Store, document: Document) -> None:
    """The canonical text with a marker line before each page, a window at a time."""
    text = document_text(str(store.path), document.id, store)
    if text is None:
        st.caption("This source is gone.")
        return
    pages = [(p.number, p.start, p.end) for p in store.pages(document.id)]
    if len(pages) > PAGES_PER_VIEW:
        first = st.number_input(
            f"From page (of {len(pages)})", 1, len(pages), 1, key=f"from_page_{document.id}"
        )
        window = pages[int(first) - 1 : int(first) - 1 + PAGES_PER_VIEW]
        body = text_with_page_markers(text, window, whole=False)
    else:
        body = text_with_page_markers(text, pages)
        if len(body) > CHARS_PER_VIEW:
            body = body[:CHARS_PER_VIEW] + f"\n… ({len(body) - CHARS_PER_VIEW:,} more characters)"
    st.code(body, language=None, wrap_lines=True, height=420)


def read_again_by_ocr(worker: ImportWorker, document_id: int) -> None:
    try:
        worker.read_again_by_ocr(document_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="source"))


def set_enabled(store: Store, document_id: int) -> None:
    store.set_document_enabled(document_id, bool(st.session_state[f"enabled_{document_id}"]))


def delete_document(store: Store, document_id: int) -> None:
    set_confirm(None)
    try:
        store.delete_document(document_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="source"))
    document_text.clear()
