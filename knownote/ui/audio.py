"""The Audio part of the Study view: make an audio overview in the background (a Brief, a Deep
Dive, a Debate written by a model; without one, a read-aloud brief of quotes), list the kept
ones, play one beside its transcript with the cards of what each line cites, download its audio
(Ogg/Opus, MP3) and its transcript (Markdown), delete it.

The player is one HTML block (knownote.show.audio_player) in a component's iframe, where its
script marks the line being spoken and plays from a clicked line; its cards are the answers'.
Its audio is served as st.audio's is, from the app's media files, so that a rerun sends the
player a short URL, not the whole file again.
"""

from __future__ import annotations

import streamlit as st
import streamlit.components.v1 as components
from streamlit import runtime

from knownote.answer.audio_overview import (
    FORMAT_NAMES,
    LENGTHS,
    QUOTED_FORMATS,
    WRITTEN_FORMATS,
    AudioOverview,
)
from knownote.answer.ranges import SpanLinks
from knownote.answer.servers import AnswerServers
from knownote.errors import KnowNoteError, NotFound
from knownote.index.language import language_name
from knownote.pipeline.audio_overview import ONE_HOST, AudioRequest
from knownote.pipeline.worker import ImportWorker
from knownote.show.audio_player import audio_source, player_height, player_html
from knownote.show.audio_transcript import stamp, transcript_markdown
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Notebook, Store
from knownote.store.jobs import AUDIO_OVERVIEW as AUDIO
from knownote.study.audio_overviews import delete_overview, kept, kept_overviews
from knownote.ui.common import (
    ALREADY_DELETED,
    ask_before_deleting,
    choice,
    chosen_sources,
    count,
    form_start,
    kept_choice,
    make_button,
    set_confirm,
    sources_asked,
)
from knownote.ui.download import prepare
from knownote.ui.reports import cite_card_html
from knownote.voice.encode import MIME_TYPES
from knownote.voice.voices import spoken_languages, voices_for

NO_MODEL = (
    "Without an answer model the overview is a read-aloud brief: each source introduced by its "
    "title, then its central sentences read as quotes, not a summary. Connect a model (see the "
    "sidebar) for a Brief, a Deep Dive or a Debate."
)
FORMAT_HELP = {
    "brief": "One host sums up the sources' main points, each line citing its passages.",
    "deep-dive": "Two hosts talk the sources through, each line citing its passages.",
    "debate": "Two hosts argue two sides from the sources, each line citing its passages.",
    "read-aloud": "Each source's title, then its central sentences read as quotes.",
}
LENGTH_NAMES = {"short": "Short", "default": "Default", "long": "Long"}
LEANS_ON = (
    "A line's [n] marks name the ranges of the sources it was written from: what it leans on, "
    "not proof of it. Click a line to play from there."
)


def audio_section(
    store: Store,
    notebook: Notebook,
    app_url: str,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    making(store, notebook, worker, llm, model)
    overviews = kept_overviews(store, notebook.id)
    if not overviews:
        st.caption("No audio overview has been made for this notebook yet.")
        return
    by_id = {o.id or 0: o for o in overviews}
    chosen = kept_choice(
        "audio", list(by_id), f"Kept audio overviews ({len(overviews):,})",
        lambda i: listed_label(by_id[i]),
    )  # fmt: skip
    with st.container(border=True, key="audio_opened"):
        try:
            opened = kept(store, chosen)
        except NotFound:  # deleted in another session meanwhile
            st.caption("That audio overview was deleted meanwhile.")
            return
        show_overview(store, opened, app_url)


# --- making -----------------------------------------------------------------------------------


def hosts_of(format: str) -> int:
    return 1 if format in ONE_HOST else 2


def voices_said(language: str, hosts: int) -> str:
    """'Spoken in Japanese by Alpha (Kokoro-82M, Japanese) and Kumo (…).'"""
    labels = list(dict.fromkeys(v.label for v in voices_for(language, hosts)))
    return f"Spoken in {language_name(language)} by {' and '.join(labels)}."


def making(
    store: Store,
    notebook: Notebook,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    job, sources = form_start(store, worker, notebook.id, AUDIO, "audio overview")
    if not sources:
        return
    with_model = llm is not None and bool(model)
    formats = WRITTEN_FORMATS + QUOTED_FORMATS if with_model else QUOTED_FORMATS
    chosen = choice("Format", formats, "audio_format", FORMAT_NAMES)
    st.caption(FORMAT_HELP[chosen])
    if not with_model:
        st.caption(NO_MODEL)
    spoken = spoken_languages()
    held = [c for c in store.notebook_languages(notebook.id) if c in spoken]
    languages = list(dict.fromkeys([*held, *spoken]))
    if st.session_state.get("audio_language") not in languages:
        st.session_state["audio_language"] = languages[0]
    left, right = st.columns(2)
    language = left.selectbox(
        "Language",
        languages,
        key="audio_language",
        format_func=lambda c: f"{language_name(c)} ({c})",
        help="The sources' main language at first; the script is written and spoken in it. "
        "English and Japanese have natural voices; espeak-ng speaks the others, robotically.",
    )
    right.radio(
        "Length",
        list(LENGTHS),
        key="audio_length",
        index=LENGTHS.index("default"),
        horizontal=True,
        format_func=LENGTH_NAMES.__getitem__,
    )
    st.caption(escape_markdown(voices_said(language, hosts_of(chosen))))
    if chosen in WRITTEN_FORMATS:
        st.text_input(
            "Focus (optional)",
            key="audio_focus",
            placeholder="e.g. Why the eye is fooled, for a class of first-year students",
        )
    chosen_sources("audio", sources)
    writer = f" with {escape_markdown(model or '')}" if chosen in WRITTEN_FORMATS else ""
    make_button(
        f"Make a {FORMAT_NAMES[chosen].split(' (')[0].lower()}{writer}",
        "make_audio",
        make,
        (store, worker, notebook.id, llm, model),
        worker,
        job,
        "overview",
    )


def make(
    store: Store,
    worker: ImportWorker,
    notebook_id: int,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    """Queue the overview the widgets ask for (read here: a callback's arguments are the previous
    run's, and a field typed in just before the click is newer)."""
    state = st.session_state
    chosen = state.get("audio_format", QUOTED_FORMATS[0])
    written = chosen in WRITTEN_FORMATS
    sources = sources_asked("audio", "audio overview")
    if sources is None:
        return
    request = AudioRequest(
        chosen,
        document_ids=sources,
        focus=state.get("audio_focus", "").strip() if written else "",
        length=state.get("audio_length", "default"),
        language=state.get("audio_language"),
        llm=llm if written else None,
        model=model if written else None,
    )
    try:
        worker.queue_audio_overview(notebook_id, request)
    except KnowNoteError as e:
        state["flash"] = ("error", escape_markdown(str(e)))
        return
    heads = kept_overviews(store, notebook_id)
    state["audio_asked"] = max((o.id or 0 for o in heads), default=0)  # opens when made


# --- the kept overviews -----------------------------------------------------------------------


def listed_label(overview: AudioOverview) -> str:
    """'Deep Dive: Gravity hills · 2026-12-06 15:40 · 04:10' (plain text: a selectbox option)."""
    when = f"{overview.made_at:%Y-%m-%d %H:%M}" if overview.made_at else ""
    name = FORMAT_NAMES.get(overview.format, overview.format)
    return " · ".join(p for p in (f"{name}: {overview.title}", when, stamp(overview.seconds)) if p)


def show_overview(store: Store, overview: AudioOverview, app_url: str) -> None:
    st.markdown(f"#### {escape_markdown(overview.title)}")
    about = [FORMAT_NAMES.get(overview.format, overview.format)]
    if overview.made_at:
        about.append(f"made {overview.made_at:%Y-%m-%d %H:%M}")
    about.append(
        f"of {count(len(overview.document_ids), 'chosen source')}"
        if overview.document_ids
        else "of all the sources in use"
    )
    about.append(f"{stamp(overview.seconds)} long")
    st.caption(escape_markdown(", ".join(about) + "."))
    if overview.model:
        said = f"Written by {overview.model}: {count(len(overview.lines), 'line')} kept"
        if overview.dropped:
            said += f", {count(overview.dropped, 'written line')} dropped (no passage cited, or "
            said += "no close match in what it cites)"
        st.caption(escape_markdown(said + "."))
    else:
        st.caption("A read-aloud brief: quotes of the sources, nothing in it written by a model.")
    if overview.focus:
        st.caption("Focus: " + escape_markdown(overview.focus))
    voices = ", ".join(dict.fromkeys(overview.voices))
    spoken = f"Spoken in {language_name(overview.language)}" + (f" by {voices}" if voices else "")
    st.caption(escape_markdown(f"{spoken}. {LEANS_ON}"))
    stale = sum(c.stale for c in overview.cites)
    if stale:
        st.warning(
            f"{count(stale, 'citation')} {'is' if stale == 1 else 'are'} stale: the source "
            "changed or was removed since the overview was made."
        )
    toolbar(store, overview, app_url)
    try:
        audio = store.read_file(overview.audio_sha256 or "")
    except NotFound:
        st.error("This overview's audio file is missing; make it again.")
        audio = b""
    message = overview.id or 0
    cards = {c.n: cite_card_html(store, message, c) for c in overview.cites}
    player = player_html(overview, audio_url(audio, f"kn-audio-{message}"), cards)
    components.html(player, height=player_height(overview))


def audio_url(audio: bytes, name: str) -> str:
    """Where the page fetches the audio: the app's media file for these bytes (kept while this
    session shows it, as st.audio's is; the same bytes, the same URL), or a data: URL where no
    server runs (AppTest)."""
    if not runtime.exists():
        return audio_source(audio)
    return runtime.get_instance().media_file_mgr.add(audio, "audio/ogg", name)


def toolbar(store: Store, overview: AudioOverview, app_url: str) -> None:
    columns = st.columns([1.3, 1.3, 1.5, 1.2])
    for column, (name, suffix) in zip(
        columns, (("Ogg/Opus", "ogg"), ("MP3", "mp3"), ("transcript", "md")), strict=False
    ):
        column.button(
            f"Download {name}",
            key=f"audio_download_{suffix}",
            on_click=download,
            args=(store, overview, app_url, suffix),
        )
    ask_before_deleting(
        columns[3],
        ("audio", overview.id or 0),
        key="audio",
        label="Delete overview",
        warning="Delete this audio overview and its audio?",
        on_delete=remove,
        args=(store, overview.id),
    )


def download(store: Store, overview: AudioOverview, app_url: str, suffix: str) -> None:
    """Built only when clicked, and handed to this session's page only (no URL)."""
    name = f"knownote-audio-{overview.id}.{suffix}"
    try:
        if suffix == "md":
            links = SpanLinks(app_url, overview.notebook_id)
            data = transcript_markdown(overview, links).encode("utf-8")
        else:
            data = store.read_file(overview.audio_sha256 or "")
            if suffix == "mp3":
                from knownote.voice.encode import decode, encode

                data = encode(decode(data), "mp3")
        prepare(name, MIME_TYPES.get(suffix, "text/markdown"), data, what="This audio overview")
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def remove(store: Store, overview_id: int) -> None:
    set_confirm(None)
    st.session_state.pop("audio_open", None)
    try:
        delete_overview(store, overview_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="audio overview"))
