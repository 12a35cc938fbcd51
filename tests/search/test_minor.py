"""A question names a minor part (a cited title, an author list) when its words stand in it close
together; the minor parts of a passage are exact slices of its text."""

from __future__ import annotations

import numpy as np

from knownote.index.context import NewPassage
from knownote.read.extract import extract
from knownote.read.roles import MINOR, Roles
from knownote.search.minor import NAMED_SHARE, minor_texts, named, named_share
from tests.conftest import corpus_file

ENTRIES = (
    "[1] Danqi Chen, Adam Fisch, Jason Weston, and Antoine Bordes. 2017. Reading Wikipedia to "
    "answer open-domain questions. In ACL.\n"
    "[2] Kenton Lee, Ming-Wei Chang, and Kristina Toutanova. 2019. Latent retrieval for weakly "
    "supervised open domain question answering. In ACL.\n"
)


def test_a_cited_title_is_named_by_its_words_together_not_by_words_scattered_over_entries():
    assert named_share("Reading Wikipedia to answer open-domain questions", ENTRIES) == 1.0
    # every word is there, but in two entries far apart: not this entry's title
    assert named_share("Reading weakly supervised Wikipedia ACL", ENTRIES) < NAMED_SHARE
    # a question about the paper's own method shares a few of their words only
    assert named_share("How does the retriever answer open-domain questions?", ENTRIES) < 0.8
    references = (
        "[1] 张三，李四．稠密检索研究．计算机学报，2020．\n[2] 王五．分布式训练．软件学报，2021．\n"
    )
    assert named_share("稠密检索研究", references) == 1.0
    assert named_share("稠密检索的训练方法", references) < NAMED_SHARE


def test_a_passages_minor_parts_are_slices_of_its_text_and_a_named_entry_is_found(store, notebook):
    path = corpus_file("docs/office/docx_wikipedia_bangalore_with_nav_junk.docx")
    read = extract(path.read_bytes(), path.name)
    text, roles = read.text, Roles(read.roles)
    spans = [(at, min(at + 800, len(text))) for at in range(0, len(text), 800)]
    document_id = store.add_document(
        notebook_id=notebook.id, title="Bangalore", filename=path.name, kind="docx",
        sha256="bangalore", text=text, pages=[], roles=read.roles,
        passages=[NewPassage(a, b, None, None, {"x": 1}) for a, b in spans],
        vectors=np.zeros((len(spans), notebook.embedding_dim), dtype=np.float32),
    )  # fmt: skip
    passages = store.passages(document_id)
    held = minor_texts(store, [p.id for p in passages])
    expected = {
        p.id: "\n".join(text[r.start : r.end] for r in pieces if r.role in MINOR)
        for p in passages
        if (pieces := roles.pieces(p.start, p.end)) and roles.share(p.start, p.end, MINOR)
    }
    assert held == expected and len(held) >= 3
    entry = next(
        r for r in roles.ranges if r.role == "reference" and len(text[r.start : r.end]) > 60
    )
    words = " ".join(text[entry.start : entry.end].split()[:6])
    found = named(store, words, [p.id for p in passages])
    assert found and all(
        p.start < entry.end and entry.start < p.end for p in passages if p.id in found
    )
