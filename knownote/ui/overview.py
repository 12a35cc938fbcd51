"""The Overview view: each source at a glance, by its most central sentences, quoted."""

from __future__ import annotations

import html
from collections.abc import Callable

import streamlit as st

from knownote.embed import Embedder
from knownote.errors import KnowNoteError
from knownote.excerpt import escape_markdown
from knownote.overview import Quote, central_sentences
from knownote.store import Notebook, Store

SOURCES_PER_VIEW = 10
LABEL = (
    "Quoted from each source: the sentences nearest the centre of what it says, found by "
    "embedding similarity. Quotes, not a summary."
)


@st.cache_resource(max_entries=256, show_spinner=False)
def quotes_of(db: str, document_id: int, _store: Store, _embedder: Embedder) -> list[Quote]:
    """Computed once per document (ids are never reused, and a document's text never changes)."""
    return central_sentences(_store, _embedder, document_id)


def overview_view(store: Store, notebook: Notebook, embedder: Callable[[], Embedder]) -> None:
    documents = [d for d in store.documents(notebook.id) if d.enabled]
    if not documents:
        st.caption("No sources in use yet: add some under Sources, or switch them on there.")
        return
    st.caption(LABEL)
    shown = st.session_state.get("overview_shown", SOURCES_PER_VIEW)
    with st.spinner("Finding each source's central sentences…"):
        for document in documents[:shown]:
            with st.container(border=True):
                st.markdown(f"**{escape_markdown(document.title)}**")
                try:
                    quotes = quotes_of(str(store.path), document.id, store, embedder())
                except KnowNoteError as e:  # the notebook's embedding server is down
                    st.caption(str(e))
                    continue
                if not quotes:
                    st.caption("No sentence long enough to quote.")
                for quote in quotes:
                    st.html(
                        f'<blockquote class="kn-quote" data-document="{quote.document_id}" '
                        f'data-start="{quote.start}" data-end="{quote.end}">'
                        f"“{html.escape(' '.join(quote.text.split()))}” "
                        f'<span class="kn-where">{html.escape(quote.where)}</span></blockquote>'
                    )
    if len(documents) > shown:
        st.button(
            f"Show {min(SOURCES_PER_VIEW, len(documents) - shown):,} more",
            key="show_more_overview",
            on_click=show_more,
        )


def show_more() -> None:
    shown = st.session_state.get("overview_shown", SOURCES_PER_VIEW)
    st.session_state["overview_shown"] = shown + SOURCES_PER_VIEW
