"""The Study view: make cards in the background, review them (FSRS), take a quiz, list them with
their sources, download them for Anki or as CSV. Every card opens the range it was made from."""

from __future__ import annotations

import html

import streamlit as st

from knownote.answer.servers import AnswerServers
from knownote.errors import KnowNoteError, NotFound
from knownote.pipeline.worker import ImportWorker
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Notebook, Store
from knownote.store.jobs import CARDS, FAILED, QUEUED, RUNNING
from knownote.study.cards import BLANK, CLOZE, SENTENCES, Card, cards, kept_shares
from knownote.study.cards import card as load_card
from knownote.study.export import anki_package, csv_text
from knownote.study.make import sources_to_do
from knownote.study.quiz import Question, grade, make_quiz
from knownote.study.review import RATINGS, due_cards, review
from knownote.ui.common import count, running_job
from knownote.ui.download import prepare
from knownote.ui.imports import progress_of

CARDS_SECTION, REPORTS_SECTION, AUDIO_SECTION = "Cards and quizzes", "Reports", "Audio"
REVIEW_SIZE = 20  # cards in one review session at most
LISTED = 30  # cards listed at first ("Show more" adds as many)
LABEL = (
    "Cloze cards blank the weightiest term of each source's central sentences. Question cards "
    "a model writes are shown only when their answer has close support in their passage."
)


def study_view(
    store: Store,
    notebook: Notebook,
    app_url: str,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    st.session_state.setdefault("study_section", CARDS_SECTION)
    section = st.segmented_control(
        "Study", [CARDS_SECTION, REPORTS_SECTION, AUDIO_SECTION], key="study_section",
        required=True, label_visibility="collapsed",
    )  # fmt: skip
    if section == REPORTS_SECTION:
        from knownote.ui.reports import reports_section  # here: it loads the report writers

        reports_section(store, notebook, app_url, worker, llm, model)
        return
    if section == AUDIO_SECTION:
        from knownote.ui.audio import audio_section  # here: it loads the voices

        audio_section(store, notebook, app_url, worker, llm, model)
        return
    making(store, notebook, worker, llm, model)
    shown = cards(store, notebook.id)
    if not shown:
        return
    part = st.radio(
        "Study",
        ["Review", "Quiz", "Cards"],
        key="study_part",
        horizontal=True,
        label_visibility="collapsed",
        format_func=lambda p: f"Cards ({len(shown):,})" if p == "Cards" else p,
    )
    if part == "Review":
        review_session(store, notebook)
    elif part == "Quiz":
        quiz_section(store, notebook)
    else:
        card_list(store, notebook, shown, app_url)


def open_report(report_id: int) -> None:
    """Show a kept report in this view (a callback: it runs before the widgets are drawn)."""
    st.session_state["view"] = "Study"
    st.session_state["study_section"] = REPORTS_SECTION
    st.session_state["report_open"] = report_id
    st.session_state.pop("report_listed", None)


# --- making cards ---------------------------------------------------------------------------


def making(
    store: Store,
    notebook: Notebook,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    st.caption(LABEL)
    job = running_job(worker, notebook.id, CARDS)
    if job is not None:
        cards_progress(worker, job.id)
        return
    last = [j for j in worker.queue.jobs(notebook.id) if j.kind == CARDS]
    if last and last[-1].status == FAILED:  # a model that failed: what was made is kept
        st.error(escape_markdown(f"Making cards stopped: {last[-1].error}"))
    new = sources_to_do(store, notebook.id, SENTENCES)
    unwritten = sources_to_do(store, notebook.id, model) if llm is not None and model else []
    left, right = st.columns(2)
    if new:
        left.button(
            f"Make cards for {count(len(new), 'new source')}",
            key="make_cards",
            on_click=worker.queue_cards,
            args=(notebook.id,),
        )
    if unwritten:
        right.button(
            f"Write question cards with {escape_markdown(model)} "
            f"({count(len(unwritten), 'source')})",
            key="write_cards",
            on_click=worker.queue_cards,
            args=(notebook.id, llm, model),
        )
    if not new and not unwritten and not cards(store, notebook.id):
        st.caption("No sources in use yet: add some under Sources, or switch them on there.")
    for kept in kept_shares(store, notebook.id):
        if kept.written:
            st.caption(
                f"{escape_markdown(kept.made_by)} wrote {count(kept.written, 'card')}; "
                f"{kept.kept:,} ({kept.share:.0%}) kept after the support check."
            )


@st.fragment(run_every=1.0)
def cards_progress(worker: ImportWorker, job_id: int) -> None:
    """The cards job's progress; the whole view again once it ends."""
    try:
        job = worker.queue.job(job_id)
    except NotFound:
        st.rerun(scope="app")
        return
    if job.status not in (QUEUED, RUNNING):
        st.rerun(scope="app")
    fraction, text = progress_of(job) if job.status == RUNNING else (0.0, "waiting")
    st.progress(fraction, text=f"Making study cards: {escape_markdown(text)}")


# --- one card ---------------------------------------------------------------------------------


def open_span(card: Card) -> None:
    """Open the card's range in its source's text, as a link to it would."""
    st.query_params.from_dict(
        {
            "notebook": str(card.notebook_id),
            "source": str(card.document_id),
            "start": str(card.start),
            "end": str(card.end),
        }
    )


def open_button(card: Card, key: str) -> None:
    st.button(
        "Open its span",
        key=f"open_{key}_{card.id}",
        on_click=open_span,
        args=(card,),
        help="Show the sentence or passage this card was made from, highlighted in its source",
    )


def where_html(card: Card) -> str:
    return f'<div class="kn-card-where">{html.escape(card.citation)}</div>'


def front_html(card: Card) -> str:
    return f'<div class="kn-card-front">{html.escape(card.front)}</div>'


def back_html(card: Card) -> str:
    """The back with the answer marked: a cloze card's sentence with its term, a question's
    answer."""
    if card.kind == CLOZE and BLANK in card.front:
        answer = f"<mark>{html.escape(card.answer)}</mark>"
        body = answer.join(html.escape(part) for part in card.front.split(BLANK))
    else:
        body = f"<mark>{html.escape(card.back)}</mark>"
    return f'<div class="kn-card-back">{body}</div>'


# --- review -----------------------------------------------------------------------------------


def review_session(store: Store, notebook: Notebook) -> None:
    key = f"review_{notebook.id}"
    session = st.session_state.get(key)
    if session is None:
        due = due_cards(store, notebook.id)
        if not due:
            st.caption("No card is due. Come back later, or take a quiz.")
            return
        st.button(
            f"Review {count(min(len(due), REVIEW_SIZE), 'due card')}",
            key="start_review",
            on_click=start_review,
            args=(key, [c.id for c in due[:REVIEW_SIZE]]),
        )
        return
    ids, at = session["ids"], session["at"]
    if at >= len(ids):
        st.success(f"Review done: {count(len(ids), 'card')}.")
        st.button("Close", key="end_review", on_click=st.session_state.pop, args=(key, None))
        return
    try:
        card = load_card(store, ids[at])
    except NotFound:  # its source was deleted meanwhile
        session["at"] += 1
        st.rerun()
        return
    st.caption(f"Card {at + 1} of {len(ids)}")
    with st.container(border=True, key="review_card"):
        st.html(front_html(card))
        if not session["shown"]:
            st.button("Show the answer", key="reveal", on_click=reveal, args=(key,))
        else:
            st.html(back_html(card) + where_html(card))
            columns = st.columns(len(RATINGS))
            for column, rating in zip(columns, RATINGS, strict=True):
                column.button(
                    rating.capitalize(),
                    key=f"rate_{rating}",
                    on_click=rate,
                    args=(store, key, card.id, rating),
                    width="stretch",
                )
        open_button(card, "review")


def start_review(key: str, ids: list[int]) -> None:
    st.session_state[key] = {"ids": ids, "at": 0, "shown": False}


def reveal(key: str) -> None:
    st.session_state[key]["shown"] = True


def rate(store: Store, key: str, card_id: int, rating: str) -> None:
    try:
        review(store, card_id, rating)
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
    session = st.session_state[key]
    session["at"] += 1
    session["shown"] = False


# --- quiz -------------------------------------------------------------------------------------


def quiz_section(store: Store, notebook: Notebook) -> None:
    key = f"quiz_{notebook.id}"
    st.button("New quiz", key="new_quiz", on_click=new_quiz, args=(store, notebook.id, key))
    quiz: list[Question] | None = st.session_state.get(key)
    if quiz is None:
        st.caption("Five questions from this notebook's cards, with answers from other cards.")
        return
    if not quiz:
        st.caption("There are too few cards for a quiz yet: make cards for more sources.")
        return
    chosen = []
    for i, question in enumerate(quiz):
        with st.container(border=True, key=f"quiz_question_{i}"):
            st.html(f"<b>{i + 1}.</b> " + front_html(question.card))
            options = list(range(len(question.choices)))
            chosen.append(
                st.radio(
                    f"Answer to question {i + 1}",
                    options,
                    index=None,
                    format_func=lambda j, q=question: escape_markdown(q.choices[j]),
                    key=f"{key}_answer_{i}",
                    label_visibility="collapsed",
                )
            )
    if not st.button("Check the answers", key="check_quiz"):
        return
    result = grade(quiz, chosen)
    st.markdown(f"**{result.right} of {result.total} right.**")
    if result.reread:
        st.markdown("Worth reading again:")
    for card in result.reread:
        with st.container(border=True):
            st.html(back_html(card) + where_html(card))
            open_button(card, "quiz")


def new_quiz(store: Store, notebook_id: int, key: str) -> None:
    for name in [k for k in st.session_state if str(k).startswith(f"{key}_answer_")]:
        del st.session_state[name]
    st.session_state[key] = make_quiz(store, notebook_id)


# --- the list and downloads -------------------------------------------------------------------


def card_list(store: Store, notebook: Notebook, shown: list[Card], app_url: str) -> None:
    left, right = st.columns(2)
    left.button(
        "Download for Anki",
        key="download_anki",
        on_click=download,
        args=(store, notebook.id, app_url, "anki"),
    )
    right.button(
        "Download CSV",
        key="download_csv",
        on_click=download,
        args=(store, notebook.id, app_url, "csv"),
    )
    listed = st.session_state.get("cards_listed", LISTED)
    for card in shown[:listed]:
        with st.container(border=True):
            st.html(front_html(card) + back_html(card) + where_html(card))
            if card.made_by != SENTENCES:
                st.caption(
                    f"Written by {escape_markdown(card.made_by)}; its answer leans on this span."
                )
            open_button(card, "list")
    if len(shown) > listed:
        st.button(
            f"Show {min(LISTED, len(shown) - listed):,} more",
            key="more_cards",
            on_click=st.session_state.__setitem__,
            args=("cards_listed", listed + LISTED),
        )


def download(store: Store, notebook_id: int, app_url: str, what: str) -> None:
    """Built only when clicked, and handed to this session's page only (no URL)."""
    try:
        if what == "anki":
            data = anki_package(store, notebook_id, app_url)
            prepare(
                f"knownote-cards-{notebook_id}.apkg", "application/octet-stream", data,
                what="This deck",
            )  # fmt: skip
        else:
            data = csv_text(store, notebook_id, app_url).encode()
            prepare(f"knownote-cards-{notebook_id}.csv", "text/csv", data, what="These cards")
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
