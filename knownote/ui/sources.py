"""The Sources view: upload with per-file progress, results, and the list of documents."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from knownote.embed import Embedder
from knownote.errors import NotFound
from knownote.excerpt import escape_markdown, text_with_page_markers
from knownote.extract import SUPPORTED
from knownote.ingest import STAGES, ImportResult, import_file, ocr_progress_text
from knownote.settings import Settings
from knownote.store import Document, Notebook, Store, sha256_hex
from knownote.ui.common import ALREADY_DELETED, confirming, document_text, set_confirm

PAGES_PER_VIEW = 10
CHARS_PER_VIEW = 60_000
SOURCES_PER_VIEW = 30
SORTS = {
    "Newest first": lambda d: -d.id,
    "Oldest first": lambda d: d.id,
    "Name": lambda d: (d.title.casefold(), d.id),
    "Largest first": lambda d: (-d.n_chars, d.id),
}
STAGE_LABELS = {
    "extract": "Extracting text",
    "split": "Splitting into passages",
    "embed": "Embedding passages",
    "store": "Saving",
    "ocr": "Reading pages by OCR",
}


def sources_view(
    store: Store, notebook: Notebook, settings: Settings, embedder: Callable[[str], Embedder]
) -> None:
    round_ = st.session_state.setdefault("upload_round", 0)
    files = st.file_uploader(
        "Add sources: drop files here or browse",
        accept_multiple_files=True,
        key=f"upload_{round_}",
        help=f"{SUPPORTED}. Drop several files at once.",
    )
    if files:
        results = [
            import_with_progress(store, notebook, settings, embedder, f.name, f.getvalue())
            for f in files
        ]
        st.session_state["import_results"] = results
        st.session_state["upload_round"] = round_ + 1  # a fresh, empty uploader
        st.rerun()

    show_import_results(store, notebook, settings, embedder)
    documents = store.documents(notebook.id)
    if not documents:
        st.caption("No sources yet. Add PDFs, Word, PowerPoint, EPUB, HTML, Markdown or text.")
        return
    enabled = sum(d.enabled for d in documents)
    st.subheader(f"{count(len(documents), 'source')} · {enabled} used in answers", anchor=False)
    for document in find_and_sort(documents):
        document_row(store, document)


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


def import_with_progress(
    store: Store,
    notebook: Notebook,
    settings: Settings,
    embedder: Callable[[str], Embedder],
    name: str,
    data: bytes,
    password: str | None = None,
) -> ImportResult:
    """Import one file inside a status box with a progress bar through the four stages."""
    with st.status(f"Importing {escape_markdown(name)}", expanded=True) as status:
        bar = st.progress(0.0, text="Waiting")

        def progress(label: str, stage: str, done: int, total: int) -> None:
            i = STAGES.index(stage) if stage in STAGES else 0
            part = done / total if total else 0.0
            text = STAGE_LABELS.get(stage, stage)
            if stage == "embed" and total:
                text += f" ({done:,} of {total:,})"
            if stage == "ocr" and total:
                text = ocr_progress_text(done, total)
            bar.progress(min((i + part) / len(STAGES), 1.0), text=text)

        result = import_file(
            store,
            notebook,
            name,
            data,
            settings=settings,
            embedder=embedder(notebook.embedding_model),
            password=password,
            progress=progress,
        )
        state = "error" if result.status == "failed" else "complete"
        label = escape_markdown(f"{result.file}: {result.status}")
        if result.needs_password:
            state, label = "complete", escape_markdown(f"{result.file}: needs its password")
        status.update(label=label, state=state, expanded=False)
    if result.needs_password:
        locked = st.session_state.setdefault("locked", {})
        locked[sha256_hex(data)] = (name, data, notebook.id)
    return result


def show_import_results(
    store: Store, notebook: Notebook, settings: Settings, embedder: Callable[[str], Embedder]
) -> None:
    results: list[ImportResult] = st.session_state.get("import_results") or []
    if not results:
        return
    locked: dict = st.session_state.setdefault("locked", {})
    with st.container(border=True):
        st.markdown("**Last import**")
        for result in results:
            name = escape_markdown(result.file)
            if result.status == "imported":
                pages = f"{count(result.pages, 'page')}, " if result.pages else ""
                st.markdown(
                    f"✓ {name}: {pages}{count(result.passages, 'passage')}, "
                    f"{count(result.chars, 'character')}"
                )
            elif result.status == "duplicate":
                st.markdown(f"• {name}: already in this notebook")
            elif result.needs_password:
                pass  # the password form below says it, once
            else:
                st.error(escape_markdown(f"{result.file}: {result.error}"))
            for warning in result.warnings:
                st.caption(escape_markdown(warning))
        for token, (name, data, notebook_id) in list(locked.items()):
            if notebook_id != notebook.id:
                continue
            unlock_form(store, notebook, settings, embedder, token, name, data)
        st.button("Dismiss", key="dismiss_results", on_click=dismiss_results)


def unlock_form(
    store: Store,
    notebook: Notebook,
    settings: Settings,
    embedder: Callable[[str], Embedder],
    token: str,
    name: str,
    data: bytes,
) -> None:
    """A password field and a retry button for one encrypted PDF (its bytes are kept).

    A form, so that Enter in the field imports as the button does.
    """
    st.markdown(f"🔒 {escape_markdown(name)} is encrypted. Enter its password to import it.")
    if token in st.session_state.setdefault("password_tried", set()):
        st.warning("That password is wrong: check it and try again.")
    with st.form(key=f"unlock_{token[:16]}", border=False):
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        password = left.text_input("Password", type="password", key=f"pdf_password_{token[:16]}")
        submitted = right.form_submit_button("Import", key=f"retry_{token[:16]}")
    if submitted:
        result = import_with_progress(store, notebook, settings, embedder, name, data, password)
        if result.needs_password:
            st.session_state["password_tried"].add(token)
        else:
            st.session_state["locked"].pop(token, None)
            st.session_state["password_tried"].discard(token)
        results = st.session_state.get("import_results") or []
        st.session_state["import_results"] = [
            result if r.file == result.file else r for r in results
        ]
        st.rerun()


def dismiss_results() -> None:
    st.session_state["import_results"] = []
    st.session_state["locked"] = {}


def document_row(store: Store, document: Document) -> None:
    with st.container(border=True):
        info, switch, remove = st.columns([6, 2, 1], vertical_alignment="center")
        info.markdown(f"**{escape_markdown(document.title)}**")
        pages = f"{count(document.n_pages, 'page')} · " if document.n_pages else ""
        info.caption(
            f"{escape_markdown(document.filename)} · {document.kind} · {pages}"
            f"{count(document.passages, 'passage')} · {count(document.n_chars, 'character')}"
        )
        for warning in document.warnings:
            info.caption(f"⚠ {escape_markdown(warning)}")
        switch.toggle(
            "Use in answers",
            value=document.enabled,
            key=f"enabled_{document.id}",
            on_change=set_enabled,
            args=(store, document.id),
        )
        if confirming(("document", document.id)):
            st.warning("Delete this source and its passages? Answers that cite it become stale.")
            left, right, _ = st.columns([1, 1, 4])
            left.button(
                "Delete",
                key=f"confirm_delete_{document.id}",
                type="primary",
                on_click=delete_document,
                args=(store, document.id),
            )
            right.button(
                "Cancel", key=f"cancel_delete_{document.id}", on_click=set_confirm, args=(None,)
            )
        else:
            remove.button(
                "Delete",
                key=f"delete_{document.id}",
                on_click=set_confirm,
                args=(("document", document.id),),
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


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def set_enabled(store: Store, document_id: int) -> None:
    store.set_document_enabled(document_id, bool(st.session_state[f"enabled_{document_id}"]))


def delete_document(store: Store, document_id: int) -> None:
    set_confirm(None)
    try:
        store.delete_document(document_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="source"))
    document_text.clear()
