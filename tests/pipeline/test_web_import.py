"""Importing web pages by their address: the snapshot kept, exact offsets, versions."""

from __future__ import annotations

import pytest

from knownote.pipeline.ingest import import_address
from tests.conftest import corpus_file
from tests.invariants import assert_spans_valid
from tests.web_server import serve


@pytest.fixture
def local(settings):
    return settings.with_(allow_local_addresses=True)


def test_a_page_imported_by_its_address_is_its_main_content_exactly(store, notebook, local):
    page = corpus_file("docs/web_text/html_wikipedia_tardigrades.html").read_bytes()
    with serve() as site:
        site.page("/wiki/Tardigrade", page)
        url = site.redirect("/t", "/wiki/Tardigrade")
        result = import_address(store, notebook, url, settings=local)
    assert result.status == "imported", result.error
    document = store.document(result.document_id)
    assert document.kind == "web" and document.title.startswith("Tardigrade")
    assert store.read_file(document.sha256) == page  # the snapshot is the bytes fetched
    origin = store.web_origin(document.id)
    assert origin.address == url and origin.final_address.endswith("/wiki/Tardigrade")
    assert origin.version == 1
    text = store.document_text(document.id)
    passages = store.passages(document.id)
    assert all(p.text == text[p.start : p.end] for p in passages)
    assert_spans_valid(text, [(p.start, p.end) for p in passages], local.passage_size)
    assert "Jump to content" not in text and "Main menu" not in text  # navigation left out
    assert "tardigrades" in text.lower()
    assert any(p.section.endswith("› Description") for p in passages)  # headings as sections


def test_the_same_address_again_is_a_new_version_beside_the_old(store, notebook, local):
    with serve() as site:
        url = site.page("/news", b"<html><body><main><p>First words.</p></main></body></html>")
        first = import_address(store, notebook, url, settings=local)
        again = import_address(store, notebook, url, settings=local)
        site.page("/news", b"<html><body><main><p>Second words, changed.</p></main></body></html>")
        second = import_address(store, notebook, url, settings=local)
    assert (first.status, again.status, second.status) == ("imported", "duplicate", "imported")
    assert "Unchanged since version 1" in again.warnings[0]
    assert store.document_text(first.document_id) == "First words."  # never changed
    assert store.document_text(second.document_id) == "Second words, changed."
    versions = store.versions(notebook.id, url)
    assert [(d, o.version) for d, o in versions] == [
        (first.document_id, 1),
        (second.document_id, 2),
    ]


def test_an_address_serving_a_pdf_imports_as_a_pdf(store, notebook, local):
    pdf = corpus_file("docs/pdf/enc_password_test_4p.pdf").read_bytes()
    with serve() as site:
        url = site.page("/paper", pdf, "application/octet-stream")
        result = import_address(store, notebook, url, settings=local)
    # Content decides, not the address or the content type: this PDF needs its password.
    assert result.status == "failed" and result.needs_password


def test_a_refused_address_imports_nothing(store, notebook, settings):
    with serve() as site:
        url = site.page("/p", b"<html><body><p>x</p></body></html>")
        result = import_address(store, notebook, url, settings=settings)
    assert result.status == "failed" and "allow_local_addresses" in result.error
    assert store.documents(notebook.id) == [] and site.hits == []


def test_an_address_in_the_import_queue_is_fetched_and_imported(store, notebook, local, embedder):
    from knownote.pipeline.worker import ImportWorker
    from knownote.store.jobs import FAILED, IMPORTED, WEB, JobQueue

    worker = ImportWorker(JobQueue(store), local, lambda name: embedder)
    with serve() as site:
        url = site.page(
            "/a", b"<html><body><main><h1>A</h1><p>Queued words.</p></main></body></html>"
        )
        job = worker.queue.enqueue_address(notebook.id, url, local.passage_size)
        refused = worker.queue.enqueue_address(notebook.id, "http://169.254.169.254/", 500)
        worker.run_once()
        worker.run_once()
    done = worker.queue.job(job.id)
    assert (done.kind, done.status, done.filename) == (WEB, IMPORTED, url)
    assert store.web_origin(done.document_id).address == url
    failed = worker.queue.job(refused.id)
    assert failed.status == FAILED and "cloud metadata" in failed.error
