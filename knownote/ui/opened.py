"""A range opened from a link (`?notebook=…&source=…&start=…&end=…`, as search hits, citations,
the MCP server and the Markdown export give them): its notebook chosen, the range highlighted in
the source's text and, for a PDF or a scan, on its page."""

from __future__ import annotations

import streamlit as st

from knownote.answer.cite import SourcePassage
from knownote.answer.ranges import LinkedRange, RangeError, parse_link, read_range
from knownote.errors import KnowNoteError, NotFound
from knownote.notebooks import find_source
from knownote.show.excerpt import card_html
from knownote.store.db import Notebook, Store
from knownote.ui.common import document_text
from knownote.ui.page import page_view

CONTEXT = 600  # characters of the text shown each side of the range
SOURCES = "Sources"  # the app's view of a notebook's sources and their text
LINK_CARD = -1  # the "message" of the card and page widgets, so their keys meet no answer's


def follow_link(store: Store) -> LinkedRange | None:
    """The range the page's address asks to open. The first run that sees a link chooses its
    notebook and the Sources view, where the range shows in its source's text; later runs leave
    both choices to the person. Call it before the view picker is drawn."""
    try:
        link = parse_link(st.query_params.to_dict())
    except RangeError as e:
        st.warning(str(e))
        return None
    if link is None:
        return None
    key = (link.notebook_id, link.document_id, link.start, link.end)
    if st.session_state.get("followed_link") != key:
        st.session_state["followed_link"] = key
        st.session_state["pending_notebook"] = link.notebook_id
        st.session_state["view"] = SOURCES
    return link


def close_link() -> None:
    st.query_params.clear()
    st.session_state.pop("followed_link", None)


def opened_range(store: Store, notebook: Notebook | None, link: LinkedRange) -> None:
    """The linked range, when the notebook shown is the link's (a warning when it is gone)."""
    if notebook is None or notebook.id != link.notebook_id:
        try:
            store.notebook(link.notebook_id)
        except NotFound:
            st.warning("The notebook this link opens is not here; it may have been deleted.")
            st.button("Close", key="close_link", on_click=close_link)
        return
    with st.container(border=True, key="opened_range"):
        try:
            document = find_source(store, notebook, link.document_id)
            found = read_range(store, document, link.start, link.end, limit=None)
        except KnowNoteError as e:
            st.warning(f"This link cannot be opened: {e}")
            st.button("Close", key="close_link", on_click=close_link)
            return
        st.caption("Opened from a link: the range is highlighted in the source's text.")
        on_pages = document.kind in ("pdf", "image")
        st.html(
            card_html(
                message_id=LINK_CARD,
                n=0,
                title=document.title,
                document_id=document.id,
                start=found.start,
                end=found.end,
                page_start=found.page_start,
                page_end=found.page_end,
                passage_text=found.text,
                document_text=document_text(str(store.path), document.id, store),
                context=CONTEXT,
                reflow=on_pages,
            )
        )
        if on_pages and found.end > found.start:
            passage = SourcePassage(
                n=0,
                passage_id=None,
                document_id=document.id,
                title=document.title,
                passage_index=-1,
                start=found.start,
                end=found.end,
                page_start=found.page_start,
                page_end=found.page_end,
                text=found.text,
                cited=True,
            )
            page_view(store, LINK_CARD, passage, shown=True)
        st.button("Close", key="close_link", on_click=close_link)
