"""Kept reports in the database: many per notebook, read back whole, deleted with their rows."""

from __future__ import annotations

import pytest

from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.store.check import orphan_rows
from knownote.store.reports import (
    KeptCite,
    KeptLine,
    KeptReport,
    delete_report,
    kept_report,
    report_heads,
    save_report,
)


def head(notebook_id: int, title: str = "Timeline", document_ids=()) -> KeptReport:
    return KeptReport(None, notebook_id, "timeline", title, None, "", 2, 2, 0, document_ids, None)


LINES = [
    KeptLine("Sources", "heading", (), None, None, False),
    KeptLine("In 1998 it opened. [1]", "item", (1,), "Opening", "1998", False),
    KeptLine("第一句。[2]", "item", (2,), None, "2021-03-03", True),
]
CITES = [
    KeptCite(1, 7, "A source", 10, 28, "In 1998 it opened.", 4, None, None),
    KeptCite(2, 8, "来源", 0, 4, "第一句。", None, (1.5, 3.25), (0, 3)),
]


@pytest.fixture
def notebook_id(store) -> int:
    return store.create_notebook("Reports", "m", 4).id


def test_a_report_is_read_back_as_it_was_kept(store, notebook_id):
    report_id = save_report(store, head(notebook_id, document_ids=(8, 7)), LINES, CITES)
    kept = kept_report(store, report_id)
    assert (kept.id, kept.notebook_id, kept.kind, kept.title) == (
        report_id, notebook_id, "timeline", "Timeline",
    )  # fmt: skip
    assert kept.document_ids == (8, 7) and kept.made_at is not None
    assert list(kept.lines) == LINES and list(kept.cites) == CITES


def test_a_notebook_keeps_many_reports_newest_first(store, notebook_id):
    first = save_report(store, head(notebook_id, "one"), LINES, CITES)
    second = save_report(store, head(notebook_id, "two"), [], [])
    assert [k.id for k in report_heads(store, notebook_id)] == [second, first]
    assert kept_report(store, second).lines == () and kept_report(store, second).document_ids == ()


def test_a_report_of_a_deleted_notebook_is_not_kept(store, notebook_id):
    delete_notebook(store, notebook_id)
    with pytest.raises(NotFound, match="deleted meanwhile"):
        save_report(store, head(notebook_id), LINES, CITES)
    assert store.db.execute("SELECT count(*) FROM reports").fetchall() == [(0,)]


def test_deleting_a_report_deletes_its_rows(store, notebook_id):
    report_id = save_report(store, head(notebook_id, document_ids=(7,)), LINES, CITES)
    delete_report(store, report_id)
    for table in ("reports", "report_lines", "report_cites", "report_sources"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchall() == [(0,)]
    with pytest.raises(NotFound):
        kept_report(store, report_id)
    with pytest.raises(NotFound):
        delete_report(store, report_id)


def test_deleting_the_notebook_deletes_its_reports_only(store, notebook_id):
    other = store.create_notebook("Other", "m", 4).id
    save_report(store, head(notebook_id, document_ids=(7,)), LINES, CITES)
    kept = save_report(store, head(other), LINES, CITES)
    delete_notebook(store, notebook_id)
    assert [k.id for k in report_heads(store, other)] == [kept]
    assert report_heads(store, notebook_id) == []
    assert orphan_rows(store.db) == {}
    assert store.db.execute("SELECT count(*) FROM report_cites").fetchall() == [(2,)]
