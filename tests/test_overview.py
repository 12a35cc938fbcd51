"""Each source's most central sentences: exact slices of its text, in reading order."""

from __future__ import annotations

import pytest

from knownote.ingest import import_file
from knownote.overview import MAX_CHARS, MIN_CHARS, central_sentences
from tests.conftest import corpus_file


def imported(store, notebook, settings, embedder, relative: str) -> int:
    path = corpus_file(relative)
    result = import_file(
        store, notebook, path.name, path.read_bytes(), settings=settings, embedder=embedder
    )
    assert result.status == "imported", result.error
    return result.document_id


@pytest.mark.parametrize(
    "relative",
    ["docs/pdf/paper_dpr_2004.04906_2col.pdf", "docs/web_text/md_wikipedia_gravity_hill.md"],
)
def test_central_sentences_are_exact_slices_in_reading_order(
    store, notebook, settings, embedder, relative
):
    document_id = imported(store, notebook, settings, embedder, relative)
    quotes = central_sentences(store, embedder, document_id)
    text = store.document_text(document_id)
    assert len(quotes) == 3
    assert [q.start for q in quotes] == sorted(q.start for q in quotes)
    for q in quotes:
        assert text[q.start : q.end] == q.text
        assert MIN_CHARS <= len(q.text) <= MAX_CHARS
    pages = store.pages(document_id)
    for q in quotes:
        if pages:
            page = next(p for p in pages if p.number == q.page)
            assert page.start <= q.start < page.end
        else:
            assert q.page is None


def test_the_quotes_say_what_the_document_is_about(store, notebook, settings, embedder):
    document_id = imported(
        store, notebook, settings, embedder, "docs/web_text/md_wikipedia_gravity_hill.md"
    )
    quotes = central_sentences(store, embedder, document_id)
    assert any("illusion" in q.text or "gravity" in q.text for q in quotes)


def test_a_document_without_sentences_to_quote_has_none(store, notebook, settings, embedder):
    data = b"Short.\n\nTiny.\n"
    result = import_file(store, notebook, "tiny.txt", data, settings=settings, embedder=embedder)
    assert central_sentences(store, embedder, result.document_id) == []
