"""The map of a notebook's headings: each node's range an exact slice of its source's text."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from knownote.read.extract import extract
from knownote.read.sections import Heading, heading_text
from knownote.settings import Settings
from knownote.store.db import Store
from knownote.study.map_export import to_opml, to_svg
from knownote.study.outline import outline_map
from tests.conftest import corpus_file

BOOK = "docs/pdf/book_mupdf_explored_285p.pdf"  # an outline of 352 entries
PAPER = "docs/pdf/paper_xylayoutlm_2203.06947_2col.pdf"  # an outline of 20
MARKDOWN = "docs/web_text/md_wikipedia_gravity_hill.md"
PLAIN = "docs/web_text/txt_war_and_peace_excerpt.txt"  # no headings
FREE_CULTURE = "docs/pdf/book_free_culture_lessig_352p.pdf"  # an outline of 58
SOURCES = (BOOK, PAPER, MARKDOWN, PLAIN, FREE_CULTURE)
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def books(tmp_path_factory, embedder):
    """One store with the sources, extracted as an import extracts them and stored with their
    text, pages and headings but no passages: the map reads nothing else, and embedding the
    books would take most of a minute."""
    settings = Settings().with_(home=tmp_path_factory.mktemp("outline"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Books", embedder.name, embedder.dim)
    ids = {}
    for relative in SOURCES:
        path = corpus_file(relative)
        extracted = extract(path.read_bytes(), path.name)
        ids[relative] = store.add_document(
            notebook_id=notebook.id, title=path.name, filename=path.name, kind=extracted.kind,
            sha256=relative, text=extracted.text, pages=extracted.pages, passages=[],
            vectors=np.zeros((0, embedder.dim), dtype=np.float32), headings=extracted.headings,
        )  # fmt: skip
    yield store, notebook, ids
    store.close()


@pytest.fixture(scope="module")
def mind_map(books):
    store, notebook, _ = books
    return outline_map(store, notebook.id, notebook.name)


def test_every_node_is_an_exact_slice_that_starts_with_its_heading(books, mind_map):
    store, _, _ = books
    headings = {}
    for source in mind_map.children(None):
        (cite,) = source.cites
        text = store.document_text(cite.document_id)
        assert (cite.start, cite.end) == (0, len(text))
        headings[cite.document_id] = {h.start: h for h in store.headings(cite.document_id)}
    sections = [n for n in mind_map.nodes if n.kind == "section"]
    assert len(sections) > 300
    for node in sections:
        (cite,) = node.cites
        text = store.document_text(cite.document_id)
        assert 0 <= cite.start < cite.end <= len(text)
        heading = headings[cite.document_id][cite.start]
        assert node.label == heading_text(text, heading)
        assert text[cite.start : cite.end].startswith(text[heading.start : heading.end])


def test_one_node_per_stored_heading(books, mind_map):
    store, _, ids = books
    for document_id in ids.values():
        text = store.document_text(document_id)
        stored = [h for h in store.headings(document_id) if heading_text(text, h)]
        nodes = [n for n in mind_map.nodes if n.cites[0].document_id == document_id]
        assert len(nodes) == 1 + len(stored)
    assert len(store.headings(ids[BOOK])) > 300


def test_children_lie_inside_their_parent_in_reading_order(mind_map):
    by_id = {n.id: n for n in mind_map.nodes}
    for node in mind_map.nodes:
        kids = mind_map.children(node.id)
        parent = node.cites[0]
        for kid in kids:
            cite = kid.cites[0]
            assert cite.document_id == parent.document_id
            assert parent.start <= cite.start and cite.end <= parent.end
        for a, b in itertools.pairwise(kids):
            assert a.cites[0].end <= b.cites[0].start
    assert all(n.parent in by_id for n in mind_map.nodes if n.parent is not None)


def test_a_deeper_heading_nests_under_a_higher_one(books, mind_map):
    store, _, _ = books
    level = {}
    for node in mind_map.nodes:
        if node.kind == "section":
            cite = node.cites[0]
            level[node.id] = next(
                h.level for h in store.headings(cite.document_id) if h.start == cite.start
            )
    for node in mind_map.nodes:
        if node.parent in level:
            assert level[node.id] > level[node.parent]


def test_a_source_without_headings_is_one_node(books, mind_map):
    _, _, ids = books
    plain = [n for n in mind_map.nodes if n.cites[0].document_id == ids[PLAIN]]
    assert [(n.kind, n.parent) for n in plain] == [("source", None)]


def test_a_switched_off_source_is_left_out(books):
    store, notebook, ids = books
    store.set_document_enabled(ids[PAPER], False)
    try:
        shown = outline_map(store, notebook.id, notebook.name)
    finally:
        store.set_document_enabled(ids[PAPER], True)
    assert ids[PAPER] not in {n.cites[0].document_id for n in shown.nodes}


def test_the_book_pages_are_those_of_its_ranges(books, mind_map):
    store, _, ids = books
    pages = {p.number: p for p in store.pages(ids[BOOK])}
    for node in mind_map.nodes:
        cite = node.cites[0]
        if cite.document_id == ids[BOOK]:
            assert pages[cite.page_start].start <= cite.start
            # The last character lies on its page, or in the separator after it.
            following = pages.get(cite.page_end + 1)
            assert pages[cite.page_end].start <= cite.end - 1
            assert following is None or cite.end - 1 < following.start


def test_the_books_svg_and_opml_read_back_with_every_node(mind_map):
    svg = ET.fromstring(to_svg(mind_map).encode())
    assert len(svg.findall(f".//{SVG}g[@data-node]")) == len(mind_map.nodes)
    opml = ET.fromstring(to_opml(mind_map).encode())
    outlines = opml.findall(".//outline")
    assert [o.get("text") for o in outlines] == [n.label for _, n in mind_map.walk()]
    assert {(int(o.get("start")), int(o.get("end"))) for o in outlines} == {
        (n.cites[0].start, n.cites[0].end) for n in mind_map.nodes
    }


def test_headings_at_one_offset_nest_and_each_ends_where_its_level_does(store, notebook):
    text = "Part\nChapter\nbody\nSecond\nmore"
    store.add_document(
        notebook_id=notebook.id, title="t", filename="t.md", kind="md", sha256="x", text=text,
        pages=[], passages=[], vectors=np.zeros((0, notebook.embedding_dim), dtype=np.float32),
        headings=[Heading(0, 4, 1), Heading(5, 12, 2), Heading(18, 24, 2)],
    )  # fmt: skip
    made = outline_map(store, notebook.id, "n")
    assert [(n.label, n.parent, n.cites[0].start, n.cites[0].end) for n in made.nodes] == [
        ("t", None, 0, len(text)),
        ("Part", 0, 0, len(text)),
        ("Chapter", 1, 5, 18),
        ("Second", 1, 18, len(text)),
    ]
