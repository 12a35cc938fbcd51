import json
import subprocess
import sys
from pathlib import Path

import pytest

from knownote.cli import main
from knownote.index.centring import held_languages
from tests.conftest import corpus_file
from tests.pipeline.test_worker import typed_pdf


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(db_path):
    return db_path


def test_import_json_reports_each_file_and_fails_only_the_bad_one(capsys, db):
    good = corpus_file("docs/web_text/txt_war_and_peace_excerpt.txt")
    bad = corpus_file("docs/pdf/broken_empty_0_bytes.pdf")
    code, out, err = run(capsys, "--db", db, "import", "Books", good, bad, "--json")
    results = json.loads(out)
    assert code == 1
    assert [r["status"] for r in results] == ["imported", "failed"]
    assert set(results[0]) == {
        "file",
        "status",
        "document_id",
        "pages",
        "passages",
        "chars",
        "warnings",
        "error",
        "layout_later",
    }
    assert results[0]["passages"] > 0 and results[0]["error"] is None
    assert "empty" in results[1]["error"]
    assert "Traceback" not in err


def test_reimport_is_a_duplicate_and_exits_zero(capsys, db):
    good = corpus_file("docs/web_text/txt_war_and_peace_excerpt.txt")
    run(capsys, "--db", db, "import", "Books", good)
    code, out, _ = run(capsys, "--db", db, "import", "Books", good, "--json")
    assert code == 0 and json.loads(out)[0]["status"] == "duplicate"


def test_progress_goes_to_stderr(capsys, db):
    good = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    _, out, err = run(capsys, "--db", db, "import", "Books", good, "--json")
    assert "embed" in err
    json.loads(out)


def test_the_reader_server_loads_pymupdf_when_a_file_may_be_a_pdf_or_an_image(tmp_path):
    """By the files' first bytes, whatever their names: an address may be either."""
    from knownote.cli import may_read_pdfs

    markdown = corpus_file("docs/web_text/md_zh_distributed_training_notes.md")
    text = corpus_file("docs/web_text/txt_war_and_peace_excerpt.txt")
    named_md = tmp_path / "scan.md"
    named_md.write_bytes(corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf").read_bytes())
    photo = tmp_path / "photo"
    photo.write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    assert not may_read_pdfs([str(markdown), str(text), str(tmp_path / "missing.pdf")])
    assert may_read_pdfs([str(markdown), str(named_md)])
    assert may_read_pdfs([str(text), str(photo)])
    assert may_read_pdfs([str(markdown), "https://example.org/notes"])
    assert may_read_pdfs(None)  # a command whose files are not named on its line


def test_notebooks_lists_counts(capsys, db):
    run(capsys, "--db", db, "import", "Books", corpus_file("docs/web_text/md_codeblocks.md"))
    code, out, _ = run(capsys, "--db", db, "notebooks", "--json")
    [notebook] = json.loads(out)
    assert code == 0 and notebook["name"] == "Books" and notebook["documents"] == 1
    assert notebook["passages"] >= 1


def test_notebooks_name_the_languages_of_a_notebook_s_passages(capsys, db):
    english = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    chinese = corpus_file("docs/web_text/md_zh_distributed_training_notes.md")
    run(capsys, "--db", db, "import", "Mixed", english, chinese)
    _, out, _ = run(capsys, "--db", db, "notebooks", "--json")
    languages = json.loads(out)[0]["languages"]
    assert set(held_languages(languages)) == {"en", "zh"}
    _, out, _ = run(capsys, "--db", db, "notebooks")
    assert "English, Chinese" in out or "Chinese, English" in out


def test_show_json_gives_text_pages_and_exact_passages(capsys, db):
    pdf = corpus_file("docs/pdf/enc_password_test_4p.pdf")
    _, out, _ = run(capsys, "--db", db, "import", "Docs", pdf, "--password", "test", "--json")
    document_id = json.loads(out)[0]["document_id"]
    code, out, _ = run(capsys, "--db", db, "show", document_id, "--json")
    shown = json.loads(out)
    assert code == 0 and shown["document_id"] == document_id
    assert [p["page"] for p in shown["pages"]] == [1, 2, 3, 4]
    for p in shown["passages"]:
        assert p["text"] == shown["text"][p["start"] : p["end"]]
    assert set(shown["passages"][0]) == {
        "idx", "start", "end", "page_start", "page_end", "seconds", "text"
    }  # fmt: skip
    assert shown["passages"][0]["seconds"] is None  # not a recording


def test_show_plain_marks_pages(capsys, db):
    pdf = corpus_file("docs/pdf/enc_password_test_4p.pdf")
    _, out, _ = run(capsys, "--db", db, "import", "Docs", pdf, "--password", "test", "--json")
    _, out, _ = run(capsys, "--db", db, "show", json.loads(out)[0]["document_id"])
    assert "--- page 2" in out


def test_unknown_document_is_one_line_on_stderr(capsys, db):
    code, out, err = run(capsys, "--db", db, "show", "999")
    assert code == 2 and out == ""
    assert err.strip() == "knownote: There is no document 999."


def test_missing_file_fails_cleanly(capsys, db, tmp_path):
    code, out, _ = run(capsys, "--db", db, "import", "Books", tmp_path / "nope.pdf", "--json")
    assert code == 1 and "could not be read" in json.loads(out)[0]["error"]


def test_console_script_runs_as_a_module(db):
    out = subprocess.run(
        [sys.executable, "-m", "knownote.cli", "--db", str(db), "notebooks"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "No notebooks yet" in out.stdout


def test_database_in_use_is_one_clear_line(db):
    from knownote.store.db import Store

    store = Store.open(db)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "knownote.cli", "--db", str(db), "notebooks"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        store.close()
    assert out.returncode == 1
    assert out.stderr.strip().startswith("knownote: The database") and "Traceback" not in out.stderr


def import_locked_pdf(capsys, db) -> int:
    pdf = corpus_file("docs/pdf/enc_password_test_4p.pdf")
    _, out, _ = run(capsys, "--db", db, "import", "Docs", pdf, "--password", "test", "--json")
    return json.loads(out)[0]["document_id"]


def test_page_writes_one_png_per_page_the_passage_touches(capsys, db, tmp_path):
    import pymupdf

    document_id = import_locked_pdf(capsys, db)
    _, out, _ = run(capsys, "--db", db, "show", document_id, "--json")
    passages = json.loads(out)["passages"]
    one = next(p for p in passages if p["page_start"] == p["page_end"])
    two = next(p for p in passages if p["page_start"] != p["page_end"])
    target = tmp_path / "passage.png"
    code, out, err = run(
        capsys, "--db", db, "page", document_id, one["idx"], "--out", target, "--password", "test"
    )
    assert code == 0, err
    assert pymupdf.Pixmap(target).width == 2 * 612  # letter size at the default zoom 2
    assert f"page {one['page_start']}: {target}" in out
    code, out, _ = run(
        capsys, "--db", db, "page", document_id, two["idx"], "--out", target,
        "--password", "test", "--zoom", "1", "--json",
    )  # fmt: skip
    written = json.loads(out)
    pages = [two["page_start"], two["page_end"]]
    assert code == 0 and [w["page"] for w in written] == pages
    for w, page in zip(written, pages, strict=True):
        assert w["file"] == str(tmp_path / f"passage-p{page}.png") and w["glyphs"] > 0
        assert Path(w["file"]).read_bytes().startswith(b"\x89PNG")


def test_page_of_a_locked_pdf_without_its_password_is_one_line(capsys, db, tmp_path):
    document_id = import_locked_pdf(capsys, db)
    code, out, err = run(capsys, "--db", db, "page", document_id, 0, "--out", tmp_path / "p.png")
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith("knownote: It is password-protected: enter the password")
    assert not (tmp_path / "p.png").exists()


def test_page_of_an_unknown_passage_says_how_to_list_them(capsys, db, tmp_path):
    document_id = import_locked_pdf(capsys, db)
    code, _, err = run(capsys, "--db", db, "page", document_id, 999, "--out", tmp_path / "p.png")
    assert code == 2 and f"knownote show {document_id}" in err


def test_ask_with_a_bare_model_name_uses_the_only_server_that_lists_it(capsys, db, monkeypatch):
    from tests.ollama_standin import free_port
    from tests.openai_standin import OpenAIStandIn

    text = corpus_file("docs/web_text/txt_war_and_peace_excerpt.txt")
    assert run(capsys, "--db", db, "import", "Books", text)[0] == 0
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens
    with OpenAIStandIn(reply="Prince Vasili spoke first [1].", models=("tiny",)) as server:
        monkeypatch.setenv("KNOWNOTE_OPENAI_BASE_URL", server.url)
        code, out, err = run(capsys, "--db", db, "ask", "Books", "Who spoke?", "--model", "tiny")
    assert code == 0, err
    assert out.startswith("Prince Vasili spoke first [1].")
    assert "quot" not in err.lower()


def test_search_and_ask_json_link_each_range_to_the_app(capsys, db, monkeypatch):
    monkeypatch.setenv("KNOWNOTE_APP_URL", "http://10.0.0.5:8501")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # no answer server: quoted answers
    run(
        capsys,
        "--db",
        db,
        "import",
        "Books",
        corpus_file("docs/web_text/md_wikipedia_gravity_hill.md"),
    )
    _, out, _ = run(capsys, "--db", db, "search", "Books", "gravity hill", "-k", "2", "--json")
    _, asked, _ = run(capsys, "--db", db, "ask", "Books", "What is a gravity hill?", "--json")
    records = [*json.loads(out), *json.loads(asked)["citations"], *json.loads(asked)["supports"]]
    assert len(records) > 2
    for r in records:
        query = f"source={r['document_id']}&start={r['start']}&end={r['end']}"
        assert r["link"].startswith("http://10.0.0.5:8501/?notebook=") and r["link"].endswith(query)
        assert r["uri"].endswith(f"/{r['document_id']}#{r['start']}-{r['end']}")


def test_mcp_is_a_command_with_its_options():
    from knownote.cli import build_parser

    args = build_parser().parse_args(["mcp", "--http", "--port", "9000", "--allow-writes"])
    assert (args.http, args.port, args.host, args.allow_writes) == (True, 9000, "127.0.0.1", True)


def test_import_takes_web_addresses_beside_files(capsys, db, monkeypatch):
    from tests.web_server import serve

    good = corpus_file("docs/web_text/md_codeblocks.md")
    with serve() as site:
        url = site.page(
            "/a", b"<html><body><main><h1>A page</h1><p>Its words.</p></main></body></html>"
        )
        code, out, _ = run(capsys, "--db", db, "import", "Web", url, good, "--json")
        assert code == 1  # 127.0.0.1 is refused without the setting
        refused = json.loads(out)[0]
        assert (
            refused["status"] == "failed" and "KNOWNOTE_ALLOW_LOCAL_ADDRESSES" in refused["error"]
        )
        monkeypatch.setenv("KNOWNOTE_ALLOW_LOCAL_ADDRESSES", "1")
        code, out, _ = run(capsys, "--db", db, "import", "Web", url, "--json")
    assert code == 0 and json.loads(out)[0]["status"] == "imported"
    assert json.loads(out)[0]["file"] == url.split("://", 1)[1]


def test_ocr_reads_a_source_again_as_a_new_version(capsys, db, monkeypatch, tmp_path):
    monkeypatch.setenv("KNOWNOTE_OCR_ENGINE", "rapidocr")
    memo = tmp_path / "memo.pdf"
    memo.write_bytes(typed_pdf())
    _, out, _ = run(capsys, "--db", db, "import", "Memos", memo, "--json")
    first = json.loads(out)[0]["document_id"]
    code, out, err = run(capsys, "--db", db, "ocr", first, "--json")
    result = json.loads(out)
    assert code == 0, result
    assert result["status"] == "imported" and result["document_id"] != first
    assert result["warnings"][0].startswith("Read again by OCR: version 2")
    assert "by OCR" in err  # the pages' progress
    code, out, _ = run(capsys, "--db", db, "show", result["document_id"], "--json")
    shown = json.loads(out)
    assert "membership" in shown["text"]
    assert all(p["text"] == shown["text"][p["start"] : p["end"]] for p in shown["passages"])


def test_ocr_of_a_text_source_says_why_not(capsys, db):
    _, out, _ = run(
        capsys,
        "--db",
        db,
        "import",
        "Books",
        corpus_file("docs/web_text/md_codeblocks.md"),
        "--json",
    )
    code, out, _ = run(capsys, "--db", db, "ocr", json.loads(out)[0]["document_id"])
    assert code == 1 and "only PDFs and images can be read by OCR" in out


def test_a_database_of_an_old_version_is_upgraded_step_by_step_on_stderr(capsys, tmp_path):
    """The oldest database main wrote (tests/store/past_versions): each migration it lacks is
    said as it runs; the second command has nothing left to say."""
    from knownote.store.migrations import MIGRATIONS
    from tests.past_versions import LEVELS, unpack

    oldest = LEVELS[0]
    db = unpack(oldest, tmp_path)
    code, out, err = run(capsys, "--db", db, "check")
    missing = [m.__name__ for m in MIGRATIONS if m.__name__ not in oldest["migrations"]]
    assert code == 0 and "3 documents checked" in out
    assert err.splitlines() == [
        f"knownote: upgrading the database, step {n} of {len(missing)} ({name})"
        for n, name in enumerate(missing, start=1)
    ]
    assert run(capsys, "--db", db, "check")[2] == ""


def test_mindmap_prints_the_headings_and_writes_svg_opml_and_markdown(capsys, db, tmp_path):
    import xml.etree.ElementTree as ET

    page = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    assert run(capsys, "--db", db, "import", "Hills", page)[0] == 0
    code, out, err = run(capsys, "--db", db, "mindmap", "Hills")
    assert code == 0, err
    assert out.startswith("# Hills\n\n- [Gravity hill](http://") and "\n  - [" in out
    files = [tmp_path / name for name in ("map.svg", "map.opml", "map.md")]
    code, out, err = run(
        capsys, "--db", db, "mindmap", "Hills", "--svg", files[0], "--opml", files[1],
        "--markdown", files[2], "--depth", "1",
    )  # fmt: skip
    assert code == 0 and out == "" and err.count("knownote: wrote") == 3
    assert len(ET.parse(files[0]).getroot().findall(".//{http://www.w3.org/2000/svg}g")) == 2
    outlines = ET.parse(files[1]).getroot().findall(".//outline")
    assert len(outlines) > 1
    assert files[2].read_text().startswith("# Hills")


def test_mindmap_json_gives_each_node_its_exact_range_and_link(capsys, db):
    from knownote.store.db import Store

    page = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    assert run(capsys, "--db", db, "import", "Hills", page)[0] == 0
    code, out, err = run(capsys, "--db", db, "mindmap", "Hills", "--json")
    assert code == 0, err
    record = json.loads(out)
    store = Store.open(db)
    try:
        for node in record["nodes"]:
            (cite,) = node["cites"]
            text = store.document_text(cite["document_id"])
            piece = " ".join(text[cite["start"] : cite["end"]].split())
            if node["kind"] == "section":
                assert piece.startswith(node["label"])
            else:
                assert (cite["start"], cite["end"]) == (0, len(text))
            assert f"start={cite['start']}&end={cite['end']}" in cite["link"]
    finally:
        store.close()


def test_mindmap_of_ideas_says_how_to_make_one(capsys, db):
    page = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    assert run(capsys, "--db", db, "import", "Hills", page)[0] == 0
    code, out, err = run(capsys, "--db", db, "mindmap", "Hills", "--ideas")
    assert code == 2 and out == ""
    assert "--model" in err and err.count("\n") == 1


def test_mindmap_with_a_model_keeps_the_ideas_that_cite_passages(capsys, db, monkeypatch):
    from tests.ollama_standin import free_port
    from tests.openai_standin import OpenAIStandIn

    page = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    assert run(capsys, "--db", db, "import", "Hills", page)[0] == 0
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens
    reply = "- Gravity hills [1]\n  - An illusion [2]\n- Made up [77]"
    with OpenAIStandIn(reply=reply, models=("tiny",)) as server:
        monkeypatch.setenv("KNOWNOTE_OPENAI_BASE_URL", server.url)
        code, out, err = run(capsys, "--db", db, "mindmap", "Hills", "--model", "tiny", "--json")
    assert code == 0, err
    record = json.loads(out)
    assert [n["label"] for n in record["nodes"]] == ["Gravity hills", "An illusion"]
    assert record["dropped"] == 1 and "left out 1" in err
    assert all(c["passage_id"] for n in record["nodes"] for c in n["cites"])
    code, again, err = run(capsys, "--db", db, "mindmap", "Hills", "--ideas", "--json")
    assert code == 0 and json.loads(again)["nodes"] == record["nodes"]


def test_cards_are_made_printed_and_exported(capsys, db, tmp_path):
    import csv
    import sqlite3
    import zipfile

    run(
        capsys,
        "--db",
        db,
        "import",
        "Study",
        corpus_file("docs/web_text/md_wikipedia_gravity_hill.md"),
    )
    anki, table = tmp_path / "study.apkg", tmp_path / "study.csv"
    code, out, err = run(
        capsys, "--db", db, "cards", "Study", "--json", "--anki", anki, "--csv", table
    )
    found = json.loads(out)
    assert code == 0 and "cards for 1 new source" in err and found["notebook"] == "Study"
    card = found["cards"][0]
    assert {"front", "answer", "title", "where", "start", "end", "link", "uri"} <= set(card)
    assert card["link"].endswith(f"start={card['start']}&end={card['end']}")
    assert found["made_by"][0]["made_by"] == "sentences"
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["front"] for r in rows] == [c["front"] for c in found["cards"]]
    with zipfile.ZipFile(anki) as zf:
        (tmp_path / "c.anki2").write_bytes(zf.read("collection.anki2"))
    with sqlite3.connect(tmp_path / "c.anki2") as collection:
        assert collection.execute("SELECT count(*) FROM notes").fetchone()[0] == len(rows)
    code, out, err = run(capsys, "--db", db, "cards", "Study")
    assert code == 0 and "new source" not in err  # kept: nothing made again
    assert out.splitlines()[0] == f"[{card['id']}] {card['title']} · {card['where']}"


def test_cards_of_an_unknown_notebook_is_one_line(capsys, db):
    code, _, err = run(capsys, "--db", db, "cards", "Nowhere")
    assert code == 2 and err.count("\n") == 1 and "Nowhere" in err


def test_an_import_says_a_pdf_s_layouts_come_later_and_reindex_reads_them(capsys, db):
    from knownote.store.db import Store

    paper = corpus_file("docs/pdf/cjk_ko_card_terms_tables.pdf")
    code, out, _ = run(capsys, "--db", db, "import", "Cards", paper)
    assert code == 0
    assert "The page layouts of 1 PDF (tables, captions, footnotes) are read when" in out
    assert "knownote reindex" in out
    store = Store.open(db)
    try:
        assert len(store.documents_without_roles(10)) == 1
    finally:
        store.close()
    code, _, _ = run(capsys, "--db", db, "reindex")
    assert code == 0
    store = Store.open(db)
    try:
        assert store.documents_without_roles(10) == []
    finally:
        store.close()
