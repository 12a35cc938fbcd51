"""Reports kept with their citations, and the two made without a model: a timeline of every dated
sentence of the sources' body text and a glossary of their weightiest terms, quoted exactly."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from knownote.answer.ollama_chat import OllamaChat
from knownote.cli import main
from knownote.errors import KnowNoteError, NotFound
from knownote.notebooks import delete_notebook
from knownote.pipeline.ingest import import_file
from knownote.pipeline.worker import ImportWorker
from knownote.read.roles import RoleRange
from knownote.read.sections import Heading
from knownote.settings import Settings
from knownote.store.archive import export_notebook, import_notebook
from knownote.store.check import check_store, orphan_rows
from knownote.store.db import Store
from knownote.store.jobs import FAILED, IMPORTED, JobQueue
from knownote.study.reports import (
    common_words,
    delete_report,
    glossary,
    keep,
    kept,
    kept_reports,
    notes_sections,
    timeline,
)
from tests.answer.test_overview import imported
from tests.conftest import corpus_file, store_vectors
from tests.ollama_standin import OllamaStandIn
from tests.study.conftest import book_pages, copy_of

GRAVITY = "docs/web_text/md_wikipedia_gravity_hill.md"
ZH_NOTES = "docs/web_text/md_zh_distributed_training_notes.md"
ZH_CONTEXT = "DEV_1011"  # cmrc2018: a Chinese Wikipedia biography full of dates


def chinese_biography() -> bytes:
    """One context of the Chinese question set (Chinese Wikipedia), read from the corpus."""
    data = json.loads(corpus_file("qa_zh/cmrc2018_dev.json").read_text(encoding="utf-8"))
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            if paragraph["id"] == ZH_CONTEXT:
                return paragraph["context"].encode("utf-8")
    raise AssertionError(f"{ZH_CONTEXT} is not in the question set")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, embedder) -> Path:
    """A data folder with a notebook of an English Wikipedia page and a Chinese biography, and
    one of Chinese notes, imported once for the module."""
    home = tmp_path_factory.mktemp("reports")
    settings = Settings().with_(home=home)
    store = Store.open(settings.db_path)
    try:
        notebook = store.create_notebook("Sources", embedder.name, embedder.dim)
        imported(store, notebook, settings, embedder, GRAVITY)
        book = import_file(
            store, notebook, "free_culture.pdf", book_pages(), settings=settings,
            embedder=embedder,
        )  # fmt: skip
        assert book.status == "imported", book.error
        result = import_file(
            store, notebook, "giffen.txt", chinese_biography(), settings=settings,
            embedder=embedder,
        )  # fmt: skip
        assert result.status == "imported", result.error
        notes = store.create_notebook("Notes", embedder.name, embedder.dim)
        imported(store, notes, settings, embedder, ZH_NOTES)
    finally:
        store.close()
    return home


@pytest.fixture
def settings(prepared, tmp_path) -> Settings:
    return copy_of(prepared, tmp_path)


@pytest.fixture
def notebook(store):
    return store.notebook_by_name("Sources")


@pytest.fixture
def notes(store):
    return store.notebook_by_name("Notes")


def sources(store, notebook) -> dict[str, int]:
    return {d.filename: d.id for d in store.documents(notebook.id)}


def assert_exact(store, report):
    """Every citation quotes its document's text at its range, and its line cites it."""
    assert report.cites
    for c in report.cites:
        assert store.document_text(c.document_id)[c.start : c.end] == c.quote and not c.stale
    numbers = [n for line in report.lines for n in line.cites]
    assert sorted(numbers) == [c.n for c in report.cites] == list(range(1, len(numbers) + 1))
    for line in report.lines:
        assert re.findall(r"\[(\d+)\]", line.text) == [str(n) for n in line.cites]


def date_key(date: str) -> tuple[int, ...]:
    first = date.split("/")[0]
    sign = -1 if first.startswith("-") else 1
    parts = [int(x) for x in first.lstrip("-").split("-")]
    return (sign * parts[0], *parts[1:], *[0] * (3 - len(parts)))


def test_the_timeline_quotes_dated_sentences_in_order_of_their_dates(store, notebook):
    report = timeline(store, notebook.id)
    assert_exact(store, report)
    dates = [line.date for line in report.lines]
    assert all(dates) and dates == sorted(dates, key=date_key)
    assert report.kind == "timeline" and report.written == report.kept == len(report.lines)
    assert {line.style for line in report.lines} == {"item"}


def test_a_chinese_source_s_timeline_reads_its_dates(store, notebook):
    chinese = sources(store, notebook)["giffen.txt"]
    report = timeline(store, notebook.id, [chinese])
    assert_exact(store, report)
    assert {c.document_id for c in report.cites} == {chinese}
    assert report.lines[0].date == "1886-06-29"  # 1886年6月29日出生
    assert "1886年6月29日" in report.cites[0].quote
    assert len(report.lines) >= 10


def test_a_pdf_s_entries_say_their_page(store, notebook):
    book = sources(store, notebook)["free_culture.pdf"]
    report = timeline(store, notebook.id, [book])
    assert_exact(store, report)
    pages = store.pages(book)
    for c in report.cites:
        (page,) = [p for p in pages if p.start <= c.start < p.end or p.start == c.start]
        assert c.page == page.number
    assert any("2004" in c.quote for c in report.cites)  # the book's year, in its front pages


def test_a_book_s_notes_section_is_no_body_text():
    text = "Intro\nIn 1998 it began.\nNOTES\n1. In 1999 a note said so.\nINDEX\nx"
    headings = [Heading(0, 5, 1), Heading(24, 29, 1), Heading(57, 62, 1)]
    assert text[24:29] == "NOTES" and text[57:62] == "INDEX"
    assert notes_sections(text, headings) == [(24, 57)]


def test_the_timeline_leaves_out_reference_lists_and_tables(store, notebook):
    chinese = sources(store, notebook)["giffen.txt"]
    before = timeline(store, notebook.id, [chinese])
    first, second = before.cites[0], before.cites[1]
    store.replace_roles(
        chinese,
        [
            RoleRange(first.start, first.end, "reference"),
            RoleRange(second.start, second.end, "table"),
        ],
    )
    after = timeline(store, notebook.id, [chinese])
    assert {(c.start, c.end) for c in after.cites} == {(c.start, c.end) for c in before.cites[2:]}


def undated_source(store, notebook) -> int:
    """A source of no dates: "xxxxxxxxxx…"."""
    store_vectors(store, notebook.id, np.ones((2, notebook.embedding_dim), dtype=np.float32))
    return next(d.id for d in store.documents(notebook.id) if d.title == "random")


def test_a_source_of_no_dates_makes_an_empty_timeline(store, notebook):
    assert timeline(store, notebook.id, [undated_source(store, notebook)]).cites == ()


def test_a_source_of_another_notebook_is_refused(store, notebook, notes):
    other = store.documents(notes.id)[0].id
    with pytest.raises(NotFound, match="no source"):
        timeline(store, notebook.id, [other])


def test_the_glossary_quotes_a_defining_sentence_for_each_term(store, notebook):
    report = glossary(store, notebook.id)
    assert_exact(store, report)
    headings = [line.text for line in report.lines if line.style == "heading"]
    assert len(headings) == 3  # one per source
    items = [line for line in report.lines if line.style == "item"]
    assert items and all(line.label for line in items)
    for line in items:
        quote = report.cite(line.cites[0]).quote
        assert line.label.casefold() in quote.casefold()
    labels = [line.label.casefold() for line in items]
    assert any(label.startswith("gravity hill") for label in labels), labels  # grown from words


def test_a_chinese_source_s_glossary_has_words_not_bigrams(store, notes):
    report = glossary(store, notes.id)
    assert_exact(store, report)
    labels = [line.label for line in report.lines if line.style == "item"]
    assert "FSDP" in labels, labels
    cjk = [label for label in labels if re.match(r"[\u4e00-\u9fff]", label)]
    assert cjk and any(len(label) > 2 for label in cjk), labels
    fsdp = next(line for line in report.lines if line.label == "FSDP")
    assert "FSDP算法是" in report.cite(fsdp.cites[0]).quote
    # everyday words ("计算", "训练": one piece each of the multilingual model's vocabulary) come
    # after the source's own terms
    everyday = [i for i, label in enumerate(labels) if label in common_words()]
    assert everyday and min(everyday) >= 4, labels
    assert {"计算", "训练", "分布"} <= common_words() and "梯度" not in common_words()


def test_a_kept_report_is_read_back_whole(store, notebook):
    report = timeline(store, notebook.id)
    report_id = keep(store, report)
    again = kept(store, report_id)
    assert again.id == report_id and again.made_at is not None
    assert replace(again, id=None, made_at=None) == report


def test_a_deleted_source_leaves_its_citations_stale(store, notebook):
    report = timeline(store, notebook.id)
    report_id = keep(store, report)
    gone = sources(store, notebook)["giffen.txt"]
    store.delete_document(gone)
    again = kept(store, report_id)
    assert again.lines == report.lines
    assert all(c.stale == (c.document_id == gone) for c in again.cites)
    assert any(c.stale for c in again.cites)


def test_a_changed_text_leaves_its_citation_stale(store, notebook):
    report = timeline(store, notebook.id)
    first = report.cites[0]
    moved = replace(first, start=first.start + 1, end=first.end + 1)
    report_id = keep(store, replace(report, cites=(moved, *report.cites[1:])))
    assert [c.stale for c in kept(store, report_id).cites][:2] == [True, False]


def test_the_check_finds_a_citation_that_no_longer_quotes_its_source(store, notebook):
    keep(store, timeline(store, notebook.id))
    assert check_store(store, files=False)[1] == []
    store.db.execute("UPDATE report_cites SET quote = 'altered' WHERE n = 1")
    (problem,) = check_store(store, files=False)[1]
    assert "1 report citations do not quote its text" in problem


def test_reports_are_listed_newest_first_and_deleted(store, notebook):
    one = keep(store, timeline(store, notebook.id))
    two = keep(store, glossary(store, notebook.id))
    assert [r.id for r in kept_reports(store, notebook.id)] == [two, one]
    delete_report(store, two)
    assert [r.id for r in kept_reports(store, notebook.id)] == [one]


def test_a_report_of_a_deleted_notebook_is_not_kept(store, notebook):
    report = timeline(store, notebook.id)
    delete_notebook(store, notebook.id)
    with pytest.raises(NotFound, match="deleted meanwhile"):
        keep(store, report)
    assert orphan_rows(store.db) == {}


def test_reports_travel_in_an_archive(store, notebook, tmp_path):
    chinese = sources(store, notebook)["giffen.txt"]
    made = timeline(store, notebook.id, [chinese])
    keep(store, made)
    export_notebook(store, notebook.id, tmp_path / "nb.knownote")
    result = import_notebook(store, tmp_path / "nb.knownote", name="Copy", max_bytes=1 << 30)
    (head,) = kept_reports(store, result.notebook_id)
    copy = kept(store, head.id)
    assert head.lines == () and copy.lines  # the listing reads heads only
    (new_source,) = [
        d.id for d in store.documents(result.notebook_id) if d.filename == "giffen.txt"
    ]
    assert copy.document_ids == (new_source,)
    assert copy.lines == made.lines
    assert {c.document_id for c in copy.cites} == {new_source}
    assert_exact(store, copy)
    assert orphan_rows(store.db) == {}


def test_the_worker_makes_and_keeps_a_timeline(store, notebook, settings, embedder):
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    job = worker.queue_report(notebook.id, "timeline")
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == IMPORTED, done.error
    report = kept(store, worker.reports_made[job.id])
    assert report.kind == "timeline" and done.passages == len(report.lines)
    assert done.warnings[0].endswith("0 marked")


def test_the_worker_labels_a_timeline_with_a_model(store, notebook, settings, embedder):
    """The stand-in (an in-test server speaking Ollama's API) labels the first entry of each
    batch it is sent."""
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    with OllamaStandIn(reply="1: The hill is found") as server:
        job = worker.queue_report(
            notebook.id, "timeline", llm=OllamaChat(server.url, 10), model="llama3.2"
        )
        assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == IMPORTED, done.error
    report = kept(store, worker.reports_made[job.id])
    assert report.model == "llama3.2" and report.lines[0].label == "The hill is found"
    assert_exact(store, report)


def test_the_worker_writes_a_custom_report_with_a_model(store, notebook, settings, embedder):
    reply = "A gravity hill is a place where a slope looks uphill but runs downhill [1]."
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    with OllamaStandIn(reply=reply) as server:
        job = worker.queue_report(
            notebook.id, "custom", instructions="What is a gravity hill?",
            llm=OllamaChat(server.url, 10), model="llama3.2",
        )  # fmt: skip
        assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == IMPORTED, done.error
    report = kept(store, worker.reports_made[job.id])
    assert report.kind == "custom" and report.instructions == "What is a gravity hill?"
    assert report.kept >= 1 and done.warnings[0].startswith(f"{report.written} written")


def test_a_timeline_job_with_nothing_dated_fails_in_words(store, notebook, settings, embedder):
    undated = undated_source(store, notebook)
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    job = worker.queue_report(notebook.id, "timeline", document_ids=[undated])
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED and "No dated sentence" in done.error
    assert kept_reports(store, notebook.id) == []


def test_a_report_job_whose_request_was_forgotten_fails_in_words(
    store, notebook, settings, embedder
):
    job = JobQueue(store).enqueue_report(notebook.id, "Timeline")
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)  # a new process
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED and "make it again" in done.error


def test_a_written_report_needs_a_model(store, notebook, settings, embedder):
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    with pytest.raises(KnowNoteError, match="answer model"):
        worker.queue_report(notebook.id, "briefing")


def test_the_command_writes_the_timeline_as_markdown_and_json(settings, tmp_path, capsys):
    markdown = tmp_path / "timeline.md"
    code = main(
        ["--db", str(settings.db_path), "report", "Sources", "--kind", "timeline",
         "--markdown", str(markdown), "--json"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    assert record["kind"] == "timeline" and record["lines"]
    store = Store.open(settings.db_path)
    try:
        for line in record["lines"]:
            assert line["date"] and line["style"] == "item"
            for c in line["cites"]:
                text = store.document_text(c["document_id"])
                assert text[c["start"] : c["end"]] == c["quote"] and c["title"]
    finally:
        store.close()
    written = markdown.read_text(encoding="utf-8")
    assert written.startswith("# Timeline") and "[^1]:" in written
    assert f"wrote {markdown}" in err and f"kept report {record['id']}" in err


def test_the_command_says_why_a_written_kind_needs_a_model(settings, capsys):
    code = main(["--db", str(settings.db_path), "report", "Sources", "--kind", "faq"])
    assert code == 1 and "--model" in capsys.readouterr().err
