"""The Reports part of the Study view: make a report in the background, list the kept ones, open
one with a citation card for each `[n]` mark, download it (Markdown, Word, PDF), keep it as a
note, delete it.

A timeline and a glossary quote the sources (no model); a briefing, a study guide, a FAQ and a
custom report are written by an answer model, each sentence citing the passages it had. The cards
are the answers' cards (knownote.show.excerpt), so a report's citation looks, links and re-checks
like an answer's: the quoted range highlighted, its page on a PDF, "stale" when the source changed.
"""

from __future__ import annotations

import html
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from knownote.answer import notes
from knownote.answer.cite import SourcePassage
from knownote.answer.ranges import SpanLinks
from knownote.answer.report import (
    KIND_NAMES,
    QUOTED_KINDS,
    WRITTEN_KINDS,
    Report,
    ReportCite,
    ReportLine,
)
from knownote.answer.servers import AnswerServers
from knownote.answer.support import NO_CLOSE_MATCH
from knownote.errors import KnowNoteError, NotFound
from knownote.pipeline.worker import ImportWorker
from knownote.show import report_export  # python-docx and PyMuPDF load when a file is made
from knownote.show.excerpt import anchor_id, card_html, escape_markdown
from knownote.show.report_export import continued
from knownote.store.db import Notebook, Store
from knownote.store.jobs import REPORT
from knownote.study.reports import delete_report, kept, kept_reports
from knownote.ui.chat import page_text, player, read_by_ocr
from knownote.ui.common import (
    ALREADY_DELETED,
    ask_before_deleting,
    choice,
    chosen_sources,
    count,
    document_text,
    form_start,
    kept_choice,
    make_button,
    set_confirm,
    sources_asked,
)
from knownote.ui.download import prepare
from knownote.ui.page import page_view

LISTED = 40  # lines of an opened report shown at first ("Show more" adds as many)
NO_MODEL = (
    "A briefing, a study guide, a FAQ or a custom report is written by an answer model: connect "
    "one (see the sidebar). Without one, a timeline and a glossary quote the sources."
)
QUOTED_LABEL = "Quotes of the sources, in their own words: nothing in it is written by a model."
WRITTEN_LABEL = (
    "Written by {model} from the passages it cites: a number such as [2] points to the material "
    "a sentence was built from, not proof of it."
)
KIND_HELP = {
    "timeline": "Every dated sentence of the sources' body text, quoted, ordered by its date.",
    "glossary": "The terms each source weighs most, each with the sentence that explains it.",
    "briefing": "The main themes and facts, each sentence citing its passages.",
    "study-guide": "Key terms, short-answer questions with answers, and essay questions.",
    "faq": "Questions a reader would ask, answered from the sources.",
    "custom": "A report written from your instructions.",
}
_MARK = re.compile(r"\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]")
_STYLE = """<style>
.kn-report h4{font-size:1.05rem;margin:.9rem 0 .4rem 0}
.kn-report ul{margin:0 0 .6rem 1.1rem;padding:0}
.kn-report li{margin:0 0 .35rem 0;line-height:1.5}
.kn-report .kn-date{font-weight:600;font-variant-numeric:tabular-nums;margin-right:.4em}
.kn-report .kn-label{font-weight:600;margin-right:.3em}
</style>"""


def reports_section(
    store: Store,
    notebook: Notebook,
    app_url: str,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    making(store, notebook, worker, llm, model)
    reports = kept_reports(store, notebook.id)
    if not reports:
        st.caption("No report has been made for this notebook yet.")
        return
    by_id = {r.id or 0: r for r in reports}
    chosen = kept_choice(
        "report", list(by_id), f"Kept reports ({len(reports):,})", lambda i: listed_label(by_id[i])
    )
    with st.container(border=True, key="report_opened"):
        try:
            opened = kept(store, chosen)
        except NotFound:  # deleted in another session meanwhile
            st.caption("That report was deleted meanwhile.")
            return
        show_report(store, opened, app_url)


# --- making -----------------------------------------------------------------------------------


def making(
    store: Store,
    notebook: Notebook,
    worker: ImportWorker,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    job, sources = form_start(store, worker, notebook.id, REPORT, "report")
    if not sources:
        return
    with_model = llm is not None and bool(model)
    kinds = QUOTED_KINDS + WRITTEN_KINDS if with_model else QUOTED_KINDS
    kind = choice("Kind of report", kinds, "report_kind", KIND_NAMES)
    st.caption(KIND_HELP[kind])
    if not with_model:
        st.caption(NO_MODEL)
    elif kind == "timeline":
        st.toggle(
            f"A one-line label for each entry, by {escape_markdown(model or '')}",
            key="report_labels",
            help="The entries stay exact quotes; the model only adds a short label to each.",
        )
    if kind in WRITTEN_KINDS:
        st.text_area(
            "Instructions" if kind == "custom" else "Focus (optional)",
            key="report_instructions",
            placeholder="e.g. Compare how the sources explain the illusion, for a class of "
            "first-year students",
            height=90,
        )
        st.toggle(
            "Leave out sentences with no close match in what they cite",
            key="report_leave_out",
            help="Otherwise they are kept and marked “no close match”; either way the count is "
            "said.",
        )
    chosen_sources("report", sources)
    writer = f" with {escape_markdown(model or '')}" if kind in WRITTEN_KINDS else ""
    make_button(
        f"Make a {KIND_NAMES[kind].lower()}{writer}",
        "make_report",
        make,
        (store, worker, notebook.id, llm, model),
        worker,
        job,
        "report",
    )


def make(
    store: Store,
    worker: ImportWorker,
    notebook_id: int,
    llm: AnswerServers | None,
    model: str | None,
) -> None:
    """Queue the report the widgets ask for (read here: a callback's arguments are the previous
    run's, and a field typed in just before the click is newer)."""
    state = st.session_state
    kind = state.get("report_kind", QUOTED_KINDS[0])
    instructions = state.get("report_instructions", "").strip() if kind in WRITTEN_KINDS else ""
    if kind == "custom" and not instructions:
        state["flash"] = ("error", "Write the instructions for a custom report first.")
        return
    chosen = sources_asked("report", "report")
    if chosen is None:
        return
    writes = kind in WRITTEN_KINDS or (kind == "timeline" and state.get("report_labels"))
    try:
        worker.queue_report(
            notebook_id,
            kind,
            instructions=instructions,
            document_ids=chosen,
            llm=llm if writes else None,
            model=model if writes else None,
            keep_unsupported=not state.get("report_leave_out", False),
        )
    except KnowNoteError as e:
        state["flash"] = ("error", escape_markdown(str(e)))
        return
    heads = kept_reports(store, notebook_id)
    state["report_asked"] = max((r.id or 0 for r in heads), default=0)  # opens when made


# --- the kept reports -------------------------------------------------------------------------


def listed_label(report: Report) -> str:
    """'Timeline: Gravity hill · 2026-12-06 15:40 · 12 found' (plain text: a selectbox option)."""
    when = f"{report.made_at:%Y-%m-%d %H:%M}" if report.made_at else ""
    kind = KIND_NAMES[report.kind]
    title = report.title if report.title.startswith(kind) else f"{kind}: {report.title}"
    return " · ".join(p for p in (title, when, counts(report)) if p)


def counts(report: Report) -> str:
    if report.kind in QUOTED_KINDS and not report.model:
        return f"{report.kept:,} found"
    return f"{report.written:,} written, {report.kept:,} kept, {report.marked:,} marked"


def show_report(store: Store, report: Report, app_url: str) -> None:
    st.markdown(f"#### {escape_markdown(report.title)}")
    about = [KIND_NAMES[report.kind]]
    if report.made_at:
        about.append(f"made {report.made_at:%Y-%m-%d %H:%M}")
    about.append(
        f"of {count(len(report.document_ids), 'chosen source')}"
        if report.document_ids
        else "of all the sources in use"
    )
    st.caption(escape_markdown(", ".join(about) + "."))
    if report.instructions:
        st.caption("Instructions: " + escape_markdown(report.instructions))
    if report.kind in QUOTED_KINDS:
        st.caption(QUOTED_LABEL)
        if report.model:
            st.caption(f"Labels by {escape_markdown(report.model)}.")
    else:
        st.caption(escape_markdown(WRITTEN_LABEL.format(model=report.model or "a model")))
    st.caption(escape_markdown(said_counts(report)))
    stale = sum(c.stale for c in report.cites)
    if stale:
        st.warning(
            f"{count(stale, 'citation')} {'is' if stale == 1 else 'are'} stale: the source "
            "changed or was removed since the report was made."
        )
    toolbar(store, report, app_url)

    listed = st.session_state.get("report_listed", LISTED)
    lines = report.lines[:listed]
    shown = sorted({n for line in lines for n in line.cites})
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.html(lines_html(report, lines))
        if len(report.lines) > listed:
            st.button(
                f"Show {min(LISTED, len(report.lines) - listed):,} more lines",
                key="report_more",
                on_click=st.session_state.__setitem__,
                args=("report_listed", listed + LISTED),
            )
    with right:
        if not report.cites:
            st.caption("This report cites nothing.")
        for n in shown:
            cite_card(store, report, report.cite(n))


def said_counts(report: Report) -> str:
    if report.kind in QUOTED_KINDS and not report.model:
        what = ("entry", "entries") if report.kind == "timeline" else ("term", "terms")
        return f"{report.kept:,} {what[report.kept != 1]} found."
    said = f"The model wrote {count(report.written, 'sentence')}; {report.kept:,} kept"
    if report.marked:
        said += f", {report.marked:,} of them marked as having no close match in what they cite"
    left_out = report.written - report.kept
    if left_out > 0:
        said += f"; {left_out:,} left out"
    return said + "."


def toolbar(store: Store, report: Report, app_url: str) -> None:
    columns = st.columns([1.3, 1.2, 1, 1.2, 1.2])
    for column, (name, suffix) in zip(
        columns, (("Markdown", "md"), ("Word", "docx"), ("PDF", "pdf")), strict=False
    ):
        column.button(
            f"Download {name}",
            key=f"report_download_{suffix}",
            on_click=download,
            args=(report, app_url, suffix),
        )
    columns[3].button(
        "Save as note",
        key="report_save_note",
        on_click=save_note,
        args=(store, report, app_url),
        help="Keep this report under Notes (as Markdown with its footnotes); there it can be "
        "used as a source.",
    )
    ask_before_deleting(
        columns[4],
        ("report", report.id or 0),
        key="report",
        label="Delete report",
        warning="Delete this report? Notes saved from it stay.",
        on_delete=remove,
        args=(store, report.id),
    )


MIMES = {
    "md": "text/markdown",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pdf": "application/pdf",
}


def download(report: Report, app_url: str, suffix: str) -> None:
    """Built only when clicked, and handed to this session's page only (no URL)."""
    links = SpanLinks(app_url, report.notebook_id)
    name = f"knownote-{report.kind}-{report.id}.{suffix}"
    try:
        if suffix == "md":
            data = report_export.report_markdown(report, links).encode("utf-8")
        else:
            write = report_export.report_docx if suffix == "docx" else report_export.report_pdf
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / name
                write(report, path, links)
                data = path.read_bytes()
        prepare(name, MIMES[suffix], data, what="This report")
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def save_note(store: Store, report: Report, app_url: str) -> None:
    body = report_export.report_markdown(report, SpanLinks(app_url, report.notebook_id))
    try:
        notes.write(store, report.notebook_id, report.title, body)
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
        return
    st.session_state["flash"] = (
        "success",
        "Kept the report as a note: see Notes, where “Use as a source” imports it.",
    )


def remove(store: Store, report_id: int) -> None:
    set_confirm(None)
    st.session_state.pop("report_open", None)
    try:
        delete_report(store, report_id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="report"))


# --- one report -------------------------------------------------------------------------------


def lines_html(report: Report, lines: Sequence[ReportLine] | None = None) -> str:
    """The report's lines, escaped, each `[n]` of a known citation linked to its card, a written
    sentence without close support in what it cites noted, consecutive items in one list."""
    known = {c.n for c in report.cites}
    message = report.id or 0

    def link(match: re.Match[str]) -> str:
        parts = []
        for part in match.group(1).split(","):
            n = int(part)
            parts.append(
                f'<a class="kn-cite" href="#{anchor_id(message, n)}">{n}</a>'
                if n in known
                else str(n)
            )
        return "[" + ", ".join(parts) + "]"

    out: list[str] = []
    in_list = False
    for line in report.lines if lines is None else lines:
        body = _MARK.sub(link, html.escape(line.text))
        if line.label:
            body = f'<span class="kn-label">{html.escape(line.label)}</span> {body}'
        if line.date:
            body = f'<span class="kn-date">{html.escape(date_label(line.date))}</span> {body}'
        if line.unsupported:
            body += f' <span class="kn-weak">{html.escape(NO_CLOSE_MATCH)}</span>'
        if line.continues and out and out[-1].endswith(("</p>", "</li>", "</div>")):
            out[-1] = continued(out[-1], body)
            continue
        if (line.style == "item") != in_list:
            out.append("<ul>" if not in_list else "</ul>")
            in_list = not in_list
        if line.style == "heading":
            out.append(f"<h4>{body}</h4>")
        elif line.style == "item":
            out.append(f"<li>{body}</li>")
        elif line.style == "quote":
            out.append(f'<div class="kn-quote">{body}</div>')
        else:
            out.append(f"<p>{body}</p>")
    if in_list:
        out.append("</ul>")
    return _STYLE + f'<div class="kn-answer kn-report">{"".join(out)}</div>'


def date_label(date: str) -> str:
    """'2021-03-03' as it is; a range '1990/1999' as '1990–1999'."""
    return date.replace("/", "–")


def as_passage(cite: ReportCite) -> SourcePassage:
    """A citation in the shape of an answer's passage, for the answer's page and player widgets."""
    return SourcePassage(
        n=cite.n,
        passage_id=None,
        document_id=cite.document_id,
        title=cite.title,
        passage_index=0,
        start=cite.start,
        end=cite.end,
        page_start=cite.page,
        page_end=cite.page,
        text=cite.quote,
        cited=True,
        stale=cite.stale,
        seconds=cite.seconds,
    )


def cite_card(store: Store, report: Report, cite: ReportCite) -> None:
    """The answer's card for one citation, its page (a PDF) or its recording, and a button that
    opens the range in its source."""
    message = report.id or 0
    passage = as_passage(cite)
    span = checked_span(cite)
    st.html(cite_card_html(store, message, cite))
    player(store, passage)
    page_view(store, message, passage, shown=False, spans=(span,) if span else ())
    if not cite.stale:
        st.button(
            "Open in its source",
            key=f"report_open_cite_{message}_{cite.n}",
            on_click=open_cite,
            args=(report.notebook_id, cite),
            type="tertiary",
            help="Show this range highlighted in its source's text",
        )


def checked_span(cite: ReportCite) -> tuple[int, int] | None:
    """The citation's support span when it lies inside its range."""
    span = cite.span
    return span if span and cite.start <= span[0] < span[1] <= cite.end else None


def cite_card_html(store: Store, message: int, cite: ReportCite) -> str:
    """The answer's card of a citation (of a report, an audio overview), its support span
    highlighted."""
    passage = as_passage(cite)
    span = checked_span(cite)
    drawn = [(*span, f"span-{message}-{cite.n}-{span[0]}-{span[1]}")] if span else []
    return card_html(
        message_id=message,
        n=cite.n,
        title=cite.title,
        document_id=cite.document_id,
        start=cite.start,
        end=cite.end,
        page_start=cite.page,
        page_end=cite.page,
        passage_text=cite.quote,
        document_text=document_text(str(store.path), cite.document_id, store),
        stale=cite.stale,
        spans=drawn,
        ocr=read_by_ocr(store, passage),
        reflow=page_text(store, passage),
        seconds=cite.seconds,
    )


def open_cite(notebook_id: int, cite: ReportCite) -> None:
    """Open the range as a link would (knownote.ui.opened.follow_link reads it next run)."""
    st.query_params.from_dict(
        {"notebook": notebook_id, "source": cite.document_id, "start": cite.start, "end": cite.end}
    )


# --- links from other views -------------------------------------------------------------------


def report_links(store: Store, notebook: Notebook, open_report: Callable[[int], None]) -> None:
    """The notebook's kept reports, each a button that opens it (`open_report(id)`, a callback:
    knownote.ui.study.open_report shows it in the Study view)."""
    reports = kept_reports(store, notebook.id)
    if not reports:
        return
    with st.expander(f"Reports ({len(reports):,})", expanded=False):
        st.caption("Made under Study; “Save as note” there keeps one here.")
        for report in reports:
            st.button(
                escape_markdown(listed_label(report)),
                key=f"notes_report_{report.id}",
                on_click=open_report,
                args=(report.id,),
                type="tertiary",
            )
