"""Reports in the Study view through AppTest: a timeline made in the queue from real documents
(an English Wikipedia page, a Chinese Wikipedia paragraph), its citation cards and the range one
opens, its downloads, the words said without a model, kept as a note and used as a source."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from knownote.answer import notes
from knownote.settings import Settings
from knownote.study.reports import kept, kept_reports
from knownote.ui import reports
from knownote.ui.reports import NO_MODEL
from tests.conftest import corpus_file
from tests.ollama_standin import OllamaStandIn
from tests.ui.test_app import (
    APP,
    NOTES,
    TIMEOUT,
    all_html,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
    upload,
)
from tests.ui.test_app_archive import saved_file
from tests.ui.test_app_model import MODEL, WRITTEN, server

__all__ = ["home", "server"]  # the fixtures
GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
HOSTILE_DATED = (
    "Careful reading matters.\n\n"
    "On 3 March 1999 this source said <script>alert(1)</script> and "
    "<img src=x onerror=alert(2)> about careful reading."
)
CHINESE = "DEV_451"  # cmrc2018: a football coach's life, told year by year (1944年 … 2015年7月)


def read_whole(store, notebook_id: int) -> list:
    """The notebook's kept reports, each with its lines and citations."""
    return [kept(store, head.id) for head in kept_reports(store, notebook_id)]


def chinese_paragraph() -> str:
    data = json.loads(corpus_file("qa_zh/cmrc2018_dev.json").read_text(encoding="utf-8"))
    return next(
        p["context"] for a in data["data"] for p in a["paragraphs"] if p.get("id") == CHINESE
    )


def reports_view(at):
    at.radio(key="view").set_value("Study").run()
    at.segmented_control(key="study_section").set_value("Reports").run()
    assert not at.exception
    return at


def made_timeline(at):
    reports_view(at)
    assert "No report has been made for this notebook yet." in texts(at)
    at.button(key="make_report").click().run()
    return settle(at)


def test_a_timeline_of_a_wikipedia_page_is_made_and_a_citation_opens(home: Path):
    gravity = corpus_file(GRAVITY)
    at = create_notebook(start(home))
    upload(at, (gravity.name, gravity.read_bytes(), "text/markdown"))
    made_timeline(at)
    store = store_for(home)
    (report,) = read_whole(store, store.notebooks()[0].id)
    assert report.kind == "timeline" and report.cites
    assert "1 entry found" in texts(at)  # the page dates one sentence: "A 2003 study …"
    cite = next(c for c in report.cites if "2003" in c.quote)
    text = store.document_text(cite.document_id)
    assert text[cite.start : cite.end] == cite.quote
    shown = all_html(at)
    assert f'<a class="kn-cite" href="#cite-{report.id}-{cite.n}">{cite.n}</a>' in shown
    card = f'id="cite-{report.id}-{cite.n}" data-n="{cite.n}" data-document="{cite.document_id}"'
    assert card in shown and f'data-start="{cite.start}" data-end="{cite.end}"' in shown
    assert f"<mark>{html.escape(cite.quote)}</mark>" in shown  # exactly the quote, highlighted

    for suffix, starts in (("md", b"# Timeline"), ("docx", b"PK"), ("pdf", b"%PDF")):
        at.button(key=f"report_download_{suffix}").click().run()
        head, data = saved_file(at)
        assert head["name"].endswith(f".{suffix}") and data.startswith(starts), head

    at.button(key=f"report_open_cite_{report.id}_{cite.n}").click().run()
    assert not at.exception and at.session_state["view"] == "Sources"
    assert (int(at.query_params["start"]), int(at.query_params["end"])) == (cite.start, cite.end)


def test_without_a_model_it_says_so_and_its_reports_show_the_text_as_text(home: Path):
    at = create_notebook(start(home))
    upload(at, ("hostile.txt", HOSTILE_DATED.encode(), "text/plain"))
    reports_view(at)
    assert at.radio(key="report_kind").options == ["Timeline", "Glossary"]
    assert NO_MODEL.split(":")[0] in texts(at)
    at.button(key="make_report").click().run()
    shown = all_html(settle(at))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown and "1999" in shown
    assert "<script" not in shown and "<img" not in shown

    at.radio(key="report_kind").set_value("glossary").run()
    at.button(key="make_report").click().run()
    shown = all_html(settle(at))
    store = store_for(home)
    glossary = read_whole(store, store.notebooks()[0].id)[0]
    assert glossary.kind == "glossary" and at.selectbox(key="report_open").value == glossary.id
    terms = [line.label for line in glossary.lines if line.label]
    assert terms and all(f'<span class="kn-label">{html.escape(t)}</span>' in shown for t in terms)
    assert "<script" not in shown and "<img" not in shown


def test_with_a_model_the_written_kinds_are_offered_and_a_briefing_flags_its_guesses(
    server: OllamaStandIn,
):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    create_notebook(at)
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    reports_view(at)
    kinds = at.radio(key="report_kind").options
    assert kinds == ["Timeline", "Glossary", "Briefing", "Study guide", "FAQ", "Custom report"]
    assert NO_MODEL.split(":")[0] not in texts(at)
    at.radio(key="report_kind").set_value("custom").run()
    at.button(key="make_report").click().run()
    assert "Write the instructions for a custom report first." in texts(at)

    server.reply = f"{WRITTEN} The moon is made of green cheese [1]."
    at.radio(key="report_kind").set_value("briefing").run()
    at.button(key="make_report").click().run()
    settle(at)
    store = store_for(Settings().home)
    (report,) = read_whole(store, store.notebooks()[0].id)
    assert report.kind == "briefing" and report.model == MODEL
    assert "2 of them marked as having no close match" in texts(at)
    shown = all_html(at)
    weak = '[<a class="kn-cite" href="#cite-1-2">2</a>]. <span class="kn-weak">no close match'
    assert weak in shown and shown.count('class="kn-weak"') == report.marked
    assert '<mark class="kn-span" id="span-1-1-0-66" data-start="0" data-end="66">' in shown
    assert at.radio(key="report_kind").value == "briefing"  # the choice outlives the job

    at.toggle(key="report_leave_out").set_value(True).run()  # the same, without the guesses
    at.button(key="make_report").click().run()
    settle(at)
    newest, _ = read_whole(store, store.notebooks()[0].id)
    assert (newest.written, newest.marked) == (report.written, report.marked)
    assert newest.kept == report.kept - report.marked
    assert not any(line.unsupported for line in newest.lines)


def test_a_chinese_timeline_is_kept_as_a_note_and_used_as_a_source(
    home: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(reports, "LISTED", 4)  # lines shown at first
    at = create_notebook(start(home))
    upload(at, ("戚务生.txt", chinese_paragraph().encode(), "text/plain"))
    made_timeline(at)
    store = store_for(home)
    notebook_id = store.notebooks()[0].id
    (report,) = read_whole(store, notebook_id)
    assert len(report.cites) >= 8  # sentences (to 。) that say a year
    assert f"{len(report.cites)} entries found" in texts(at)
    first = next(c for c in report.cites if "1944年" in c.quote)
    assert f"<mark>{html.escape(first.quote)}</mark>" in all_html(at)
    assert all_html(at).count('class="kn-card"') == 4
    at.button(key="report_more").click().run()
    assert all_html(at).count('class="kn-card"') == 8

    at.button(key="report_save_note").click().run()
    assert "Kept the report as a note" in at.success[0].value
    (note,) = notes.notes(store, notebook_id)
    assert "1944年" in note.body

    at.radio(key="view").set_value("Notes").run()
    assert f"notes_report_{report.id}" in [b.key for b in at.button]
    at.button(key=f"use_note_{note.id}").click().run()
    settle(at)
    assert any(d.filename.startswith("Note - ") for d in store.documents(notebook_id))

    at.button(key=f"notes_report_{report.id}").click().run()
    assert not at.exception and at.session_state["view"] == "Study"
    assert f'id="cite-{report.id}-{first.n}"' in all_html(at)

    store.delete_document(first.document_id)  # its citations go stale, said and never marked
    at.run()
    assert f"{len(report.cites)} citations are stale" in texts(at)
    assert "stale: the document changed" in all_html(at) and "<mark>" not in all_html(at)

    at.button(key="delete_report").click().run()
    at.button(key="confirm_delete_report").click().run()
    assert not at.exception and not kept_reports(store, notebook_id)
    assert "No report has been made for this notebook yet." in texts(at)
