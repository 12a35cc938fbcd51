"""A PDF's headings: its outline found in the text, or the type of its lines; passages' sections."""

from __future__ import annotations

import pymupdf

from knownote.pipeline.ingest import import_file
from knownote.read.canonical import join_pages
from knownote.read.extract import extract
from knownote.read.pdf import pdf_headings_of, pdf_lines, pdf_page_text
from knownote.read.sections import Heading, heading_text
from tests.conftest import corpus_file

OUTLINED = "docs/pdf/paper_xylayoutlm_2203.06947_2col.pdf"  # an outline of 20 entries
UNOUTLINED = "docs/pdf/paper_dpr_2004.04906_2col.pdf"  # no outline: bold section titles


def test_the_outline_becomes_headings_at_their_place_in_the_text():
    path = corpus_file(OUTLINED)
    extracted = extract(path.read_bytes(), path.name)
    assert len(extracted.headings) == 20
    assert extracted.headings[:3] == (
        Heading(1356, 1371, 1),
        Heading(7678, 7694, 1),  # page 2's figure labels come a row a line (" · " between)
        Heading(7695, 7736, 2),
    )
    assert extracted.text[7695:7736] == "2.1. Visually-Rich Document Understanding"


def test_without_an_outline_the_type_shows_the_headings():
    path = corpus_file(UNOUTLINED)
    extracted = extract(path.read_bytes(), path.name)
    text = extracted.text
    assert extracted.headings[:3] == (
        Heading(0, 58, 1),
        Heading(339, 347, 2),
        Heading(1065, 1077, 2),
    )
    words = [heading_text(text, h) for h in extracted.headings]
    assert words[:4] == [
        "Dense Passage Retrieval for Open-Domain Question Answering",
        "Abstract",
        "Introduction",
        "Background",
    ]
    assert not any(w.startswith("arXiv:") for w in words)  # the sideways margin note


def test_the_type_alone_finds_most_of_an_outline():
    path = corpus_file(OUTLINED)
    with pymupdf.open(path) as doc:
        texts = [pdf_page_text(page) for page in doc]
        _, pages = join_pages(texts)
        lines = pdf_lines(doc, texts, set())
        truth = pdf_headings_of(doc, pages, texts, lines)
        guess = pdf_headings_of(doc, pages, texts, lines, outline=False)
    found = [t for t in truth if any(g.start < t.end and t.start < g.end for g in guess)]
    assert len(found) == len(truth)  # recall 1.0 on this paper (benchmarks/headings.py: all)
    assert [h.level for h in guess if h in truth][:3] == [1, 1, 2]  # "2.1. …" is numbered deeper


def test_passages_of_a_pdf_with_an_outline_know_their_section(store, notebook, settings):
    path = corpus_file(OUTLINED)
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings)
    assert result.status == "imported"
    text = store.document_text(result.document_id)
    passages = store.passages(result.document_id)
    assert passages[0].section == ""  # the title and abstract come before "1. Introduction"
    inside = next(p for p in passages if p.start > 7736)
    assert inside.section == "2. Related Works › 2.1. Visually-Rich Document Understanding"
    assert all(p.text == text[p.start : p.end] for p in passages)
    assert [(h.start, h.end, h.level) for h in store.headings(result.document_id)][:2] == [
        (1356, 1371, 1),
        (7678, 7694, 1),
    ]
