"""Documents imported before headings were kept get them in place, text and offsets untouched."""

from __future__ import annotations

import pytest

from knownote.pipeline.headings import rebuild_headings
from knownote.pipeline.ingest import import_file
from tests.conftest import corpus_file

FILES = [
    "docs/web_text/md_wikipedia_gravity_hill.md",  # from the text alone
    "docs/office/docx_en_rag_intro.docx",  # from the kept file, extracted again
    "docs/pdf/paper_xylayoutlm_2203.06947_2col.pdf",  # from the kept file: the outline
    "docs/pdf/paper_dpr_2004.04906_2col.pdf",  # from the kept file: the type of its lines
]


def imported(store, notebook, settings, relative: str) -> int:
    path = corpus_file(relative)
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings)
    assert result.status == "imported", result.error
    return result.document_id


def forget_headings(store, document_id: int) -> None:
    """The document as an import before migration m016 left it."""
    with store.transaction() as db:
        db.execute("DELETE FROM headings WHERE document_id = ?", [document_id])
        db.execute("UPDATE passages SET section = '' WHERE document_id = ?", [document_id])


@pytest.mark.parametrize("relative", FILES)
def test_rebuilt_headings_equal_those_of_an_import(store, notebook, settings, relative):
    document_id = imported(store, notebook, settings, relative)
    headings, passages = store.headings(document_id), store.passages(document_id)
    text = store.document_text(document_id)
    assert headings and any(p.section for p in passages)
    forget_headings(store, document_id)
    assert store.headings(document_id) == [] and {
        p.section for p in store.passages(document_id)
    } == {""}
    assert rebuild_headings(store, document_id) == len(headings)
    assert store.headings(document_id) == headings
    assert store.passages(document_id) == passages  # offsets, texts and sections
    assert store.document_text(document_id) == text
    assert rebuild_headings(store, document_id) == len(headings)  # again: the same, not twice
    assert store.headings(document_id) == headings


def test_without_the_kept_file_nothing_changes(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/office/docx_en_rag_intro.docx")
    forget_headings(store, document_id)
    store.file_path(store.document(document_id).sha256).unlink()
    assert rebuild_headings(store, document_id) is None
    assert store.headings(document_id) == []


def test_plain_text_has_no_headings_to_rebuild(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/web_text/txt_war_and_peace_excerpt.txt")
    assert rebuild_headings(store, document_id) == 0
    assert {p.section for p in store.passages(document_id)} == {""}
