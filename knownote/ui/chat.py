"""The Chat view: the notebook's chats, the question box, and each answer beside its passages."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import streamlit as st

from knownote.answer import notes
from knownote.answer.ask import Answer, SourcePassage, ask, ask_library
from knownote.answer.chats import (
    delete_chat,
    export_markdown,
    list_chats,
    load_chat,
    origin_label,
)
from knownote.answer.servers import AnswerServers
from knownote.errors import KnowNoteError, NotFound
from knownote.index.embed import Embedder
from knownote.read.sniff import recording_mime
from knownote.search.library import ALL
from knownote.settings import Settings
from knownote.show.excerpt import answer_html, card_html, card_spans, escape_markdown, span_anchors
from knownote.store.db import Notebook, Store
from knownote.store.library import in_library, library_notebooks, set_in_library
from knownote.ui.common import ALREADY_DELETED, ask_before_deleting, document_text, set_confirm
from knownote.ui.download import prepare
from knownote.ui.page import page_view

CITATION_NOTE = (
    "A number such as [2] points to a passage the answer had in front of it: the material it "
    "was built from, not proof of each sentence."
)
SPAN_NOTE = (
    "The darker mark inside a passage is the sentence an answer sentence leans on most (hover "
    "or click its number); “no close match” means none of its passages comes close, not that "
    "it is false."
)


def chat_view(
    store: Store,
    notebook: Notebook,
    settings: Settings,
    *,
    embedder: Callable[[], Embedder],
    llm: AnswerServers | None,
    model: str | None,
    mode: str,
) -> None:
    library = library_choice(store, notebook)
    across = library is not None
    chats = {c.id: c for c in list_chats(store, None if across else notebook.id)}
    if "pending_chat" in st.session_state:
        st.session_state["chat"] = st.session_state.pop("pending_chat")
    chosen = st.session_state.get("chat", "latest")
    if chosen is not None and chosen not in chats:  # first visit, or another notebook's chat
        st.session_state["chat"] = next(iter(chats), None)
    chat_id = chat_bar(store, chats, settings.app_url)

    st.caption(CITATION_NOTE)
    st.caption(SPAN_NOTE)
    if chat_id is not None:
        for answer in load_chat(store, chat_id):
            show_answer(store, answer, None if across else notebook.id, across)

    asked = library if across else [notebook]
    documents = [d for n in asked for d in store.documents(n.id)]
    in_scope = [d.id for d in documents if d.enabled]
    if library == []:
        st.info("Every notebook was left out of the library: switch “In All notebooks” on.")
    elif not documents:
        st.info("Add sources first: switch to Sources above.")
    elif not in_scope:
        st.info("Every source is switched off. Switch one on under Sources to ask questions.")
    typed = st.chat_input(
        "Ask a question about this notebook's sources"
        if not across
        else "Ask a question of all the notebooks in the library",
        key="question",
        disabled=not in_scope,
    )
    question = typed or st.session_state.pop("ask_now", None)  # a suggested question
    if question and question.strip():
        answer = answer_live(
            store,
            notebook,
            settings,
            question.strip(),
            embedder,
            llm,
            model,
            mode,
            in_scope,
            chat_id,
            library,
        )
        if answer is not None:
            st.session_state["pending_chat"] = answer.chat_id
            # The saved notice lacks the search's own note (a keyword fallback): keep it whole.
            if answer.notice and llm is not None and answer.message_id is not None:
                st.session_state.setdefault("notices", {})[answer.message_id] = answer.notice
            st.rerun()


def library_choice(store: Store, notebook: Notebook) -> list[Notebook] | None:
    """Ask this notebook, or all the notebooks of the library (returned; None: this one), and
    whether this notebook is in the library."""
    pick, member = st.columns([4, 2], vertical_alignment="bottom")
    library = library_notebooks(store)
    pick.selectbox(
        "Ask",
        ["notebook", ALL],
        key="ask_scope",
        format_func=lambda o: "This notebook" if o != ALL else f"All notebooks ({len(library)})",
        help="All notebooks: each is searched with its own embedding model and the passages "
        "found are ranked together; each card names its notebook. A notebook switched out of "
        "the library is not searched.",
    )
    key = f"in_library_{notebook.id}"
    st.session_state[key] = in_library(store, notebook.id)
    member.toggle(
        "In All notebooks",
        key=key,
        on_change=switch_library,
        args=(store, notebook.id, key),
        help="Whether “All notebooks” searches this notebook.",
    )
    if st.session_state.get("ask_scope") != ALL:
        return None
    names = ", ".join(f"“{escape_markdown(n.name)}”" for n in library)
    st.caption(f"Asking {names}." if library else "No notebook is in the library.")
    return library


def switch_library(store: Store, notebook_id: int, key: str) -> None:
    try:
        set_in_library(store, notebook_id, bool(st.session_state.get(key)))
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def chat_bar(store: Store, chats: dict, app_url: str) -> int | None:
    """Pick a chat, start a new one, download or delete the one shown."""
    pick, new, download, remove = st.columns([4, 1.2, 1.6, 1.2], vertical_alignment="bottom")
    options = [None, *chats]
    pick.selectbox(
        "Chat",
        options,
        key="chat",
        format_func=lambda i: "New chat" if i is None else chats[i].title,
    )
    chat_id = st.session_state.get("chat")
    new.button("New chat", key="new_chat", on_click=start_new_chat, disabled=chat_id is None)
    if chat_id is None:
        return None
    download.button(
        "Download Markdown",
        key="download_chat",
        on_click=download_chat,
        args=(store, chat_id, app_url),
    )
    ask_before_deleting(
        remove,
        ("chat", chat_id),
        key="chat",
        label="Delete chat",
        warning="Delete this chat and its answers?",
        on_delete=remove_chat,
        args=(store, chat_id),
    )
    return chat_id


def save_note(store: Store, notebook_id: int, answer: Answer) -> None:
    try:
        notes.save_answer(store, notebook_id, answer)
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
        return
    st.session_state["flash"] = ("success", "Kept the answer as a note: see Notes.")


def download_chat(store: Store, chat_id: int, app_url: str) -> None:
    """Built only when clicked, and handed to this session's page only (no URL)."""
    try:
        markdown = export_markdown(store, chat_id, app_url=app_url)
        prepare(f"knownote-chat-{chat_id}.md", "text/markdown", markdown.encode(), what="This chat")
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="chat"))
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def start_new_chat() -> None:
    st.session_state["chat"] = None


def remove_chat(store: Store, chat_id: int) -> None:
    set_confirm(None)
    st.session_state["chat"] = None
    try:
        delete_chat(store, chat_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="chat"))


def answer_live(
    store: Store,
    notebook: Notebook,
    settings: Settings,
    question: str,
    embedder: Callable[[], Embedder],
    llm: AnswerServers | None,
    model: str | None,
    mode: str,
    document_ids: list[int],
    chat_id: int | None,
    library: list[Notebook] | None = None,
) -> Answer | None:
    """Ask, streaming the answer into place as it comes; the next run shows it with its cards."""
    left, right = st.columns([3, 2], gap="large")
    with left:
        with st.chat_message("user"):
            st.text(question)
        with st.chat_message("assistant"):
            placeholder = st.empty()
    right.caption("Finding passages…")
    shown = {"text": "", "at": 0.0}

    def on_token(token: str) -> None:
        shown["text"] += token
        now = time.monotonic()
        if now - shown["at"] > 0.08:
            shown["at"] = now
            placeholder.html(answer_html(shown["text"], None))

    try:
        with placeholder, st.spinner("Reading the sources…"):
            if library is not None:
                return ask_library(
                    store,
                    library,
                    question,
                    llm=llm,
                    model=model,
                    settings=settings,
                    k=settings.k,
                    mode=mode,
                    chat_id=chat_id,
                    on_token=on_token,
                )
            return ask(
                store,
                embedder(),
                notebook.id,
                question,
                llm=llm,
                model=model,
                settings=settings,
                k=settings.k,
                mode=mode,
                document_ids=document_ids,
                chat_id=chat_id,
                on_token=on_token,
            )
    except KnowNoteError as e:
        placeholder.error(str(e))
        return None


def show_answer(
    store: Store, answer: Answer, notebook_id: int | None = None, library: bool = False
) -> None:
    """Question and answer on the left; a card per cited passage on the right. An answer of a
    chat (`notebook_id` given) can be kept as a note; a note shows the same way without that.
    An answer across the library (`library`) names each card's notebook."""
    left, right = st.columns([3, 2], gap="large")
    cited = answer.citations
    notice = st.session_state.get("notices", {}).get(answer.message_id)
    if notice and (notebook_id is not None or library):
        answer = replace(answer, notice=notice)
    with left:
        with st.chat_message("user"):
            st.text(answer.question)
        with st.chat_message("assistant"):
            # Said before the quotes, so nobody reads them as a written answer first.
            if answer.extractive and answer.notice:
                st.info(answer.notice)
            st.html(
                answer_html(answer.text, answer.message_id, [p.n for p in cited], answer.supports)
            )
            if answer.model and not answer.extractive:
                st.caption(f"Answered by {answer.model}")
            if answer.incomplete:
                st.warning(answer.notice or "This answer stopped before it was finished.")
            elif answer.notice and not answer.extractive:
                st.caption(answer.notice)
            if len(answer.searched) > 1:
                also = ", ".join(escape_markdown(q) for q in answer.searched[1:])
                st.caption(f"Searched for: {also}, and the question")
            if answer.dropped_marks:
                st.caption(
                    f"The answer also cited {answer.dropped_marks} passage number(s) it was not "
                    "given; they are left out."
                )
            if notebook_id is not None and answer.message_id is not None and answer.text:
                st.button(
                    "Save as note",
                    key=f"save_note_{answer.message_id}",
                    on_click=save_note,
                    args=(store, notebook_id, answer),
                    help="Keep this answer with its passages under Notes.",
                )
    with right:
        for passage in cited:
            st.html(card(store, answer, passage, library))
            player(store, passage)
            page_view(
                store, answer.message_id or 0, passage, shown=True, spans=spans(answer, passage)
            )
        if not cited and answer.text:  # an unanswered question has nothing to cite
            st.caption("The answer cites no passage.")
        uncited = [p for p in answer.passages if not p.cited]
        if uncited:
            with st.expander(f"{len(uncited)} more passages it had in front of it, not cited"):
                for passage in uncited:
                    st.html(card(store, answer, passage, library))
                    page_view(
                        store,
                        answer.message_id or 0,
                        passage,
                        shown=False,
                        spans=spans(answer, passage),
                    )


def card(store: Store, answer: Answer, passage: SourcePassage, library: bool = False) -> str:
    origin = origin_label(store, passage.document_id)
    if library:  # the card says which notebook the passage is from
        origin = "; ".join(part for part in (notebook_label(store, passage), origin) if part)
    return card_html(
        message_id=answer.message_id or 0,
        n=passage.n,
        title=passage.title,
        document_id=passage.document_id,
        start=passage.start,
        end=passage.end,
        page_start=passage.page_start,
        page_end=passage.page_end,
        passage_text=passage.text,
        document_text=document_text(str(store.path), passage.document_id, store),
        stale=passage.stale,
        spans=card_spans(span_anchors(answer.message_id or 0, answer.supports), passage.n),
        ocr=read_by_ocr(store, passage),
        reflow=page_text(store, passage),
        section=passage.section,
        seconds=store.time_range(passage.document_id, passage.start, passage.end),
        origin=origin,
    )


def notebook_label(store: Store, passage: SourcePassage) -> str:
    """'From the notebook “Name”', or '' when the passage's document is gone."""
    try:
        notebook = store.notebook(store.document(passage.document_id).notebook_id)
    except NotFound:
        return ""
    return f"From the notebook “{notebook.name}”"


def player(store: Store, passage: SourcePassage) -> None:
    """A cited passage of a recording: its audio or video, starting at the passage's first
    second (the recording is the kept file)."""
    if passage.stale:
        return
    seconds = store.time_range(passage.document_id, passage.start, passage.end)
    if seconds is None:
        return
    try:
        document = store.document(passage.document_id)
        data = store.read_file(document.sha256)
    except NotFound:
        return
    video = document.kind == "video"
    play = st.video if video else st.audio
    play(data, format=recording_mime(data, video), start_time=int(seconds[0]))


def page_text(store: Store, passage: SourcePassage) -> bool:
    """Whether the passage was read from PDF pages or images, where every line ends in a newline
    (so the card reflows the lines that were only wrapped)."""
    try:
        return store.document(passage.document_id).kind in ("pdf", "image")
    except NotFound:
        return False


def spans(answer: Answer, passage: SourcePassage) -> tuple[tuple[int, int], ...]:
    """The support spans drawn strongly inside a passage's card (document offsets)."""
    anchors = span_anchors(answer.message_id or 0, answer.supports)
    return tuple((a, b) for a, b, _ in card_spans(anchors, passage.n))


def read_by_ocr(store: Store, passage: SourcePassage) -> bool:
    """Whether any page of the passage was read by OCR."""
    if passage.page_start is None:
        return False
    last = passage.page_end or passage.page_start
    return any(passage.page_start <= n <= last for n in store.ocr_page_numbers(passage.document_id))
