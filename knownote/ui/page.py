"""A cited PDF passage on its page: the page image with exactly the cited glyphs highlighted."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from knownote.answer.cite import SourcePassage
from knownote.errors import KnowNoteError, NotFound, PasswordRequired
from knownote.store.db import Store

if TYPE_CHECKING:
    from knownote.show.pdf_page import PageImage

# knownote.show.pdf_page (and PyMuPDF, 0.7 s to import) is imported when a page is first shown,
# not when the app starts.


@st.cache_data(max_entries=48, show_spinner=False)
def page_images(
    db: str,
    document_id: int,
    sha256: str,
    start: int,
    end: int,
    zoom: float,
    password: str | None,
    whole_page: bool,
    _store: Store,
    spans: tuple[tuple[int, int], ...] = (),
) -> list[PageImage]:
    """Rendered once per passage; reruns reuse the PNGs (errors are not cached)."""
    from knownote.show.pdf_page import passage_pages

    return passage_pages(
        _store,
        document_id,
        start,
        end,
        zoom=zoom,
        password=password,
        whole_page=whole_page,
        spans=spans,
    )


def passwords() -> dict[int, str]:
    """PDF passwords typed in this session, by document; never stored on disk."""
    return st.session_state.setdefault("pdf_passwords", {})


def page_view(
    store: Store,
    message_id: int,
    passage: SourcePassage,
    *,
    shown: bool,
    spans: tuple[tuple[int, int], ...] = (),
) -> None:
    """A "Show on page" switch under a card of a PDF passage, and the page(s) when on; the
    support `spans` inside the passage are painted more strongly."""
    if passage.stale or passage.page_start is None:
        return
    try:
        document = store.document(passage.document_id)
    except NotFound:
        return
    if document.kind not in ("pdf", "image"):
        return
    key = f"{message_id}_{passage.n}"
    if not st.toggle("Show on page", value=shown, key=f"on_page_{key}"):
        return
    from knownote.show.pdf_page import DEFAULT_ZOOM

    def render(whole_page: bool) -> list[PageImage]:
        with st.spinner("Rendering the page…"):
            return page_images(
                str(store.path),
                document.id,
                document.sha256,
                passage.start,
                passage.end,
                DEFAULT_ZOOM,
                passwords().get(document.id),
                whole_page,
                store,
                spans,
            )

    try:
        for i, image in enumerate(render(whole_page=False)):
            what = (
                f"passage [{passage.n}] of {document.title}, characters "
                f"{passage.start:,}–{passage.end:,}, highlighted"
            )
            st.image(
                image.crop_png,
                caption=f"p. {image.page} of the {'image' if document.kind == 'image' else 'PDF'}: "
                "the cited passage is highlighted"
                + (", the span an answer sentence leans on more strongly" if spans else ""),
                alt=f"Part of page {image.page} showing {what}",
                width="stretch",
            )
            if st.toggle(f"Whole page {image.page}", key=f"whole_{key}_{image.page}"):
                st.image(
                    render(whole_page=True)[i].png,
                    alt=f"Page {image.page} showing {what}",
                    width="stretch",
                )
    except PasswordRequired as e:
        ask_password(document.id, key, str(e))
    except KnowNoteError as e:
        st.caption(f"⚠ {e}")


def ask_password(document_id: int, key: str, message: str) -> None:
    st.caption(f"🔒 {message}")
    with st.form(f"page_password_form_{key}", border=False):
        given = st.text_input("PDF password", type="password", key=f"page_password_{key}")
        if st.form_submit_button("Show the page"):
            passwords()[document_id] = given
            st.rerun()
