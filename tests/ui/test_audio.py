"""Audio overviews in the Study view through AppTest: without a model the view offers the
read-aloud brief and says which voice reads it (an English and a Japanese notebook); a kept
overview of an English and a Japanese source plays in the player with its cards, downloads as
Ogg/Opus, MP3 and a Markdown transcript, and is deleted."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from knownote.show.excerpt import escape_markdown
from knownote.study.audio_overviews import keep, kept_overviews
from knownote.ui.audio import NO_MODEL, voices_said
from tests.conftest import corpus_file
from tests.show.handmade_audio import ENGLISH, JAPANESE, overview, timed
from tests.study.test_audio_script import hosts
from tests.ui.test_app import (
    APP,
    TIMEOUT,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
    upload,
)
from tests.ui.test_app_archive import saved_file
from tests.ui.test_app_model import MODEL, server
from tests.ui.test_app_reports import GRAVITY

__all__ = ["home", "server"]  # the fixtures


def audio_view(at):
    at.radio(key="view").set_value("Study").run()
    at.segmented_control(key="study_section").set_value("Audio").run()
    assert not at.exception
    return at


def kept_handmade(home: Path) -> int:
    """The hand-made overview of the notebook's two sources, kept with its audio."""
    store = store_for(home)
    notebook = store.notebooks()[0]
    ids = {d.filename: d.id for d in store.documents(notebook.id)}
    spoken, audio = timed(overview(notebook.id, ids["hills.txt"], ids["丘.txt"], None))
    return keep(store, replace(spoken, audio_sha256=store.save_file(audio)))


def player_html(at) -> str:
    (frame,) = [e for e in at.get("iframe")]
    return frame.proto.srcdoc


def test_without_a_model_it_offers_the_read_aloud_brief_and_names_the_voice(home: Path):
    at = create_notebook(start(home))
    upload(at, ("丘.txt", (JAPANESE * 3).encode(), "text/plain"))
    audio_view(at)
    assert at.radio(key="audio_format").options == ["Read-aloud brief (quotes)"]
    shown = texts(at)
    assert NO_MODEL.split(":")[0] in shown
    assert at.selectbox(key="audio_language").value == "ja"  # the sources' language
    assert escape_markdown(voices_said("ja", 1)) in shown and "Japanese" in voices_said("ja", 1)
    at.selectbox(key="audio_language").set_value("en").run()
    assert escape_markdown(voices_said("en", 1)) in texts(at)
    assert "No audio overview has been made for this notebook yet." in texts(at)


def test_a_kept_overview_plays_beside_its_transcript_downloads_and_is_deleted(home: Path):
    at = create_notebook(start(home))
    upload(
        at,
        ("hills.txt", ENGLISH.encode(), "text/plain"),
        ("丘.txt", JAPANESE.encode(), "text/plain"),
    )
    overview_id = kept_handmade(home)
    audio_view(at)
    assert at.selectbox(key="audio_open").value == overview_id
    page = player_html(at)
    assert page.count('class="kn-line"') == 4
    # the audio is a media file of the app, as st.audio's: a rerun sends its URL, not its bytes
    [url] = re.findall(r'<audio id="kn-audio"[^>]* src="([^"]+)"', page)
    assert re.fullmatch(r"(/mock)?/media/[0-9a-f]+\.oga", url) and "base64" not in page
    assert "重力の丘は目の錯覚です" in page
    # each cite's card, its range and support span highlighted in the source's current text
    store = store_for(home)
    (head,) = kept_overviews(store, store.notebooks()[0].id)
    assert head.id == overview_id
    assert re.search(r'<mark class="kn-span"[^>]*>重力の丘</mark>', page)
    assert "<mark>" in page and 'class="kn-stale"' not in page
    assert "Gravity &lt;hill&gt; &amp; *roads*" in page and "<hill>" not in page

    for suffix, starts in (("ogg", b"OggS"), ("md", b"# Gravity hills")):
        at.button(key=f"audio_download_{suffix}").click().run()
        head_, data = saved_file(at)
        assert head_["name"].endswith(f".{suffix}") and data.startswith(starts), head_
    at.button(key="audio_download_mp3").click().run()
    head_, data = saved_file(at)
    assert head_["mime"] == "audio/mpeg" and (data[:3] == b"ID3" or data[0] == 0xFF)

    # a read-aloud brief made in the queue opens when it is made
    at.button(key="make_audio").click().run()
    settle(at)
    (made, _) = kept_overviews(store, store.notebooks()[0].id)
    assert made.format == "read-aloud" and at.selectbox(key="audio_open").value == made.id
    assert "hills.txt" in player_html(at) and "Gravity hills are places" in player_html(at)
    at.selectbox(key="audio_open").set_value(overview_id).run()

    at.button(key="delete_audio").click().run()
    at.button(key="confirm_delete_audio").click().run()
    assert not at.exception
    assert [o.id for o in kept_overviews(store, store.notebooks()[0].id)] == [made.id]


def test_with_a_model_a_brief_is_written_in_the_queue_with_its_dropped_lines_said(
    server, tmp_path: Path
):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    create_notebook(at)
    gravity = corpus_file(GRAVITY)
    upload(at, (gravity.name, gravity.read_bytes(), "text/markdown"))
    audio_view(at)
    formats = at.radio(key="audio_format").options
    assert formats == ["Brief", "Deep Dive", "Debate", "Read-aloud brief (quotes)"]
    assert NO_MODEL.split(":")[0] not in texts(at)
    at.radio(key="audio_format").set_value("deep-dive").run()
    assert escape_markdown(voices_said("en", 2)) in texts(at)

    server.reply = hosts  # host lines copied from the passages given, and two to drop
    at.radio(key="audio_format").set_value("brief").run()
    at.radio(key="audio_length").set_value("short").run()
    at.text_input(key="audio_focus").set_value("why cars <b>seem</b> to roll").run()
    assert at.button(key="make_audio").label == f"Make a brief with {escape_markdown(MODEL)}"
    at.button(key="make_audio").click().run()
    settle(at)
    store = store_for(tmp_path / "home")
    (made,) = kept_overviews(store, store.notebooks()[0].id)
    assert made.format == "brief" and made.model == MODEL and made.dropped >= 1
    assert made.focus == "why cars <b>seem</b> to roll"
    shown = texts(at)
    assert "dropped \\(no passage cited" in shown and "why cars \\<b\\>seem" in shown
    assert "[1]" in player_html(at) and "<b>seem" not in player_html(at)
