"""`knownote ask/search --notebook all`, `knownote library` and `knownote eval --library`."""

from __future__ import annotations

import json

from knownote.store.db import Store
from tests.conftest import corpus_file
from tests.search.test_library import FSDP, two_notebooks
from tests.test_cli import run


def made(db_path) -> dict[str, int]:
    store = Store.open(db_path)
    try:
        two = two_notebooks(store)
        return {"Hills": two.english.id, "训练": two.chinese.id, "training": two.training}
    finally:
        store.close()


def test_ask_all_answers_from_the_library_and_names_each_sources_notebook(capsys, db_path):
    ids = made(db_path)
    code, out, err = run(capsys, "--db", db_path, "ask", FSDP, "--notebook", "all")
    assert code == 0
    assert "\n[1] 训练, 分布式训练" in out
    assert "saved in chat" in err
    code, out, _ = run(capsys, "--db", db_path, "ask", FSDP, "--notebook", "all", "--json")
    record = json.loads(out)
    assert record["citations"][0]["notebook"] == {"id": ids["训练"], "name": "训练"}


def test_search_all_prints_each_hits_notebook(capsys, db_path):
    made(db_path)
    code, out, _ = run(capsys, "--db", db_path, "search", FSDP, "--notebook", "Hills,训练")
    assert code == 0 and out.startswith("[1] 训练: 分布式训练")


def test_a_notebook_named_twice_is_refused(capsys, db_path):
    made(db_path)
    code, _, err = run(capsys, "--db", db_path, "ask", "Hills", FSDP, "--notebook", "all")
    assert code == 1 and "Name the notebook once" in err


def test_library_leaves_a_notebook_out_and_notebooks_says_so(capsys, db_path):
    ids = made(db_path)
    code, out, _ = run(capsys, "--db", db_path, "library", "训练", "off")
    assert code == 0 and "训练  (left out of the library)" in out
    _, out, _ = run(capsys, "--db", db_path, "notebooks")
    assert "left out of the library" in out
    _, out, _ = run(capsys, "--db", db_path, "search", "FSDP", "--notebook", "all", "--json")
    assert {hit["notebook_id"] for hit in json.loads(out)} == {ids["Hills"]}


def test_eval_library_prints_own_and_library_recall(capsys, tmp_path):
    data = json.loads(corpus_file("qa_en/xquad.en.json").read_text("utf-8"))
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"data": data["data"][:4]}))
    code, out, _ = run(
        capsys, "eval", small, "--library", "all-MiniLM-L6-v2-int8,all-MiniLM-L6-v2-int8",
        "--mode", "hybrid", "--max-questions", "10", "--json",
    )  # fmt: skip
    assert code == 0
    [report] = json.loads(out)
    assert report["questions"] == 20
    assert set(report["library"]) == {"score", "rrf"}
    assert 0 <= report["library"]["score"]["recall@5"] <= 1
