"""Documents imported before roles were kept get them in place, text and offsets untouched; an
import keeps them at once, with each passage's share of minor parts."""

from __future__ import annotations

import pymupdf
import pytest

from knownote.pipeline.ingest import import_file
from knownote.pipeline.roles import read_missing_roles, rebuild_roles
from knownote.read.roles import LAYOUT_LATER, MINOR, ROLES_VERSION, Roles
from knownote.store.check import check_store
from tests.conftest import corpus_file

FILES = [
    "docs/web_text/md_zh_distributed_training_notes.md",  # Chinese, from the kept file
    "docs/office/docx_wikipedia_bangalore_with_nav_junk.docx",  # from the kept file
    "docs/pdf/paper_dpr_2004.04906_2col.pdf",  # from its stored page texts
]


def imported(store, notebook, settings, relative: str, page: int | None = None) -> int:
    """The corpus file imported (a PDF: only its page `page`, 0-based, when given)."""
    path = corpus_file(relative)
    data = path.read_bytes()
    if page is not None:
        with pymupdf.open(stream=data) as whole, pymupdf.open() as part:
            part.insert_pdf(whole, from_page=page, to_page=page)
            data = part.tobytes()
    result = import_file(store, notebook, path.name, data, settings=settings)
    assert result.status == "imported", result.error
    return result.document_id


def forget_roles(store, document_id: int) -> None:
    """The document as an import before migration m028 left it."""
    with store.transaction() as db:
        db.execute("DELETE FROM roles WHERE document_id = ?", [document_id])
        db.execute("UPDATE documents SET roles_read = NULL WHERE id = ?", [document_id])
        db.execute("UPDATE passages SET minor = 0 WHERE document_id = ?", [document_id])


def minor_shares(store, document_id: int) -> list[float]:
    rows = store.db.execute(
        "SELECT minor FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
    ).fetchall()
    return [round(share, 6) for (share,) in rows]


@pytest.mark.parametrize("relative", FILES)
def test_read_again_the_roles_equal_those_of_the_import(store, notebook, settings, relative):
    settings = settings.with_(read_layouts_later=False)
    document_id = imported(store, notebook, settings, relative)
    roles, passages = store.roles(document_id), store.passages(document_id)
    text, shares = store.document_text(document_id), minor_shares(store, document_id)
    assert roles and all(0 <= r.start < r.end <= len(text) for r in roles)
    found = Roles(roles)
    assert shares == [round(found.share(p.start, p.end, MINOR), 6) for p in passages]
    assert store.documents_without_roles(10) == []
    forget_roles(store, document_id)
    assert store.documents_without_roles(10) == [document_id]
    assert read_missing_roles(store) == 1
    assert store.roles(document_id) == roles
    assert minor_shares(store, document_id) == shares
    assert store.passages(document_id) == passages and store.document_text(document_id) == text
    assert rebuild_roles(store, document_id) == len(roles)  # again: the same, not twice
    assert store.roles(document_id) == roles
    assert check_store(store)[1] == []


def test_without_the_kept_file_the_text_still_shows_its_references(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/pdf/paper_dpr_2004.04906_2col.pdf")
    text = store.document_text(document_id)
    forget_roles(store, document_id)
    store.file_path(store.document(document_id).sha256).unlink()
    assert read_missing_roles(store) == 1
    roles = store.roles(document_id)
    assert {r.role for r in roles} == {"reference"}  # the rest needs the file's layout
    cited = text.index("Reading Wikipedia to answer open-\ndomain questions")
    assert Roles(roles).at(cited) == "reference"
    assert store.documents_without_roles(10) == []  # not read again and again


def test_deleting_a_document_deletes_its_roles(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/web_text/md_wikipedia_gravity_hill.md")
    store.delete_document(document_id)
    assert store.roles(document_id) == []
    assert store.db.execute("SELECT count(*) FROM roles").fetchall() == [(0,)]


def test_the_check_finds_roles_outside_the_text(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/web_text/md_codeblocks.md")
    n = store.document(document_id).n_chars
    with store.transaction() as db:
        db.execute(
            "INSERT INTO roles (document_id, start, \"end\", role) VALUES (?, ?, ?, 'table')",
            [document_id, n - 1, n + 5],
        )
    _, problems = check_store(store)
    assert any("roles fall outside its text" in problem for problem in problems)


def test_an_import_records_the_rules_its_roles_were_read_with(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/web_text/txt_war_and_peace_excerpt.txt")
    assert store.db.execute(
        "SELECT roles_read FROM documents WHERE id = ?", [document_id]
    ).fetchall() == [(ROLES_VERSION,)]


@pytest.mark.parametrize(
    ("relative", "page"),
    [
        ("docs/pdf/paper_dpr_2004.04906_2col.pdf", None),
        ("docs/pdf/cjk_ko_card_terms_tables.pdf", None),
        # a scan: its page read by OCR at the import is not read again (one page, with a
        # table, as OCR takes seconds a page)
        ("docs/pdf/cjk_zh_scanned_ocr_auditor_letter.pdf", 1),
    ],
)
def test_a_pdf_s_layouts_read_after_its_import_give_the_roles_an_import_reading_them_gives(
    store, notebook, settings, relative, page
):
    later = imported(store, notebook, settings, relative, page)  # read_layouts_later by default
    assert store.document(later).roles_read == LAYOUT_LATER
    assert store.documents_without_roles(10) == [later]
    text, passages = store.document_text(later), store.passages(later)
    rules = store.roles(later)  # the one scanned page has none: no line repeats
    assert (rules or page is not None) and all(0 <= r.start < r.end <= len(text) for r in rules)

    # read again without OCR (knownote.pipeline.headings.NO_OCR), given its stored OCR pages
    assert bool(store.ocr_page_numbers(later)) == (page is not None)
    assert read_missing_roles(store, settings=settings) == 1
    assert store.document(later).roles_read == ROLES_VERSION
    assert store.documents_without_roles(10) == []
    assert store.document_text(later) == text and store.passages(later) == passages
    read = store.roles(later)
    assert read != rules  # the model's tables, captions and footnotes came in

    other = store.create_notebook("at once", notebook.embedding_model, notebook.embedding_dim)
    at_once = imported(store, other, settings.with_(read_layouts_later=False), relative, page)
    assert store.roles(at_once) == read
    assert minor_shares(store, at_once) == minor_shares(store, later)
    assert check_store(store)[1] == []


def test_layouts_that_can_no_longer_be_read_leave_the_rules_roles(store, notebook, settings):
    document_id = imported(store, notebook, settings, "docs/pdf/paper_dpr_2004.04906_2col.pdf")
    rules = store.roles(document_id)
    path = store.file_path(store.document(document_id).sha256)
    path.write_bytes(b"%PDF-1.7 damaged since")
    assert read_missing_roles(store, settings=settings) == 1
    assert store.roles(document_id) == rules
    assert store.document(document_id).roles_read == ROLES_VERSION  # not tried again and again
