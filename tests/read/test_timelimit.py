"""Files built to hang the importer are stopped by the per-page time limit, with a clear
message, while the rest of the app keeps answering."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from knownote.pipeline.ingest import import_file
from knownote.read.timelimit import count_parts
from tests.conftest import corpus_file
from tests.hostile_files import nested_forms_pdf
from tests.invariants import row_counts

ROOT = Path(__file__).resolve().parents[2]


def test_a_pdf_page_that_never_finishes_drawing_is_stopped(store, notebook, settings, embedder):
    before = row_counts(store)
    started = time.monotonic()
    limited = settings.with_(max_extract_seconds=3)
    result = import_file(store, notebook, "laughs.pdf", nested_forms_pdf(), settings=limited,
                         embedder=embedder)  # fmt: skip
    took = time.monotonic() - started
    assert result.status == "failed"
    assert "longer than 3 seconds" in result.error and "max_extract_seconds" in result.error
    assert took < 90  # the limit plus starting an interpreter on a loaded machine
    assert row_counts(store) == before


def test_the_app_keeps_answering_while_a_file_hangs(store, notebook, settings, embedder):
    slow = threading.Thread(target=import_file, args=(store, notebook, "laughs.pdf",
                            nested_forms_pdf()), kwargs={"settings": settings.with_(
                            max_extract_seconds=4), "embedder": embedder})  # fmt: skip
    slow.start()
    time.sleep(1.5)  # the child is drawing by now
    worst = 0.0
    for _ in range(20):
        t = time.monotonic()
        store.notebooks()
        worst = max(worst, time.monotonic() - t)
    assert slow.is_alive(), "the hostile file must still be being read"
    slow.join()
    assert worst < 0.5


def test_the_limit_is_per_page(store, notebook, settings, embedder):
    path = corpus_file("docs/pdf/paper_tracemonkey_pldi09_2col.pdf")
    assert count_parts(path.read_bytes()) == 14
    assert count_parts(b"plain text") == 1
    limited = settings.with_(max_extract_seconds=1.5)
    result = import_file(store, notebook, "laughs.pdf", nested_forms_pdf(), settings=limited,
                         embedder=embedder)  # fmt: skip
    assert "(1.5 seconds per page" in result.error


def test_a_normal_file_still_imports_with_its_errors_as_before(store, notebook, settings, embedder):
    path = corpus_file("docs/pdf/enc_password_test_4p.pdf")
    refused = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                          embedder=embedder)  # fmt: skip
    assert refused.status == "failed" and refused.needs_password
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                         embedder=embedder, password="test")  # fmt: skip
    assert result.status == "imported", result.error


def test_a_reader_server_that_died_is_started_again(settings):
    from knownote.read import timelimit

    read = dict(max_chars=1000, max_pages=10, seconds=30)
    assert timelimit.extract_with_time_limit(b"before", "a.txt", **read).text == "before"
    timelimit._SERVER.process.kill()  # as the kernel's OOM killer would
    timelimit._SERVER.process.wait()
    assert timelimit.extract_with_time_limit(b"after", "a.txt", **read).text == "after"


def test_a_child_killed_while_reading_is_reported_as_a_crash(
    store, notebook, settings, embedder, monkeypatch
):
    """What a library that crashes on a file looks like to the app: the child stops unanswered."""
    import os
    import signal

    from knownote.read import timelimit

    fork = timelimit._SERVER.fork

    def fork_and_kill(layouts=False):
        pid, sock = fork(layouts)
        threading.Timer(1.0, os.kill, (pid, signal.SIGSEGV)).start()
        return pid, sock

    monkeypatch.setattr(timelimit._SERVER, "fork", fork_and_kill)
    limited = settings.with_(max_extract_seconds=30)
    result = import_file(store, notebook, "laughs.pdf", nested_forms_pdf(), settings=limited,
                         embedder=embedder)  # fmt: skip
    assert result.error_kind == "ReaderCrashed", result.error
    assert f"exit code {-signal.SIGSEGV}" in result.error


def test_a_reader_server_started_ahead_reads_the_first_file(settings):
    from knownote.read import timelimit

    timelimit._SERVER.stop()
    timelimit.start_reader_server()
    started = timelimit._SERVER.process
    assert started is not None and started.poll() is None
    read = dict(max_chars=1000, max_pages=10, seconds=30)
    assert timelimit.extract_with_time_limit(b"ahead", "a.txt", **read).text == "ahead"
    assert timelimit._SERVER.process is started


def test_text_and_markdown_are_read_without_loading_the_other_readers():
    """What lets the reader server answer a text file while PyMuPDF still loads."""
    code = (
        "import sys; from knownote.read.extract import extract; "
        "assert extract(b'# Notes\\n\\nplain words', 'a.md').text; "
        "assert extract('中文的笔记'.encode(), 'b.txt').text; "
        "print(sorted(m for m in ('pymupdf', 'lxml', 'docx', 'pptx', 'trafilatura') "
        "if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=ROOT)  # fmt: skip
    assert shown.stdout.strip() == "[]"


def test_a_server_just_started_reads_text_and_pdfs_whatever_it_has_loaded(settings):
    """Its first children are forked before PyMuPDF and its layout model have loaded (they load
    what they need themselves), the later ones after: each reads as `extract` does here."""
    from knownote.read import timelimit
    from knownote.read.extract import extract

    timelimit._SERVER.stop()
    timelimit.start_reader_server()
    read = dict(max_chars=1_000_000, max_pages=100, seconds=60)
    assert (
        timelimit.extract_with_time_limit("先读这个".encode(), "a.txt", **read).text == "先读这个"
    )
    paper = corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf").read_bytes()
    here = extract(paper, "dpr.pdf")
    assert {"formula", "figure"} <= {r.role for r in here.roles}  # the layout model's
    for _ in range(2):
        there = timelimit.extract_with_time_limit(paper, "dpr.pdf", **read)
        assert (there.text, there.roles) == (here.text, here.roles)
    pdf = corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf").read_bytes()
    assert (
        "中华人民共和国国务院侨务办公室"
        in timelimit.extract_with_time_limit(pdf, "zh.pdf", **read).text
    )


def _settled_server() -> Path:
    """The reader server's /proc folder, once its CPU time stands still (its readers loaded)."""
    from knownote.read import timelimit

    proc = Path(f"/proc/{timelimit._SERVER.process.pid}")

    def cpu() -> list[str]:  # user and system time
        return proc.joinpath("stat").read_text().split(")")[1].split()[11:13]

    used = []
    while used != (used := cpu()):
        time.sleep(0.5)
    return proc


def test_a_server_started_for_text_files_leaves_pymupdf_to_a_pdf_that_comes(settings):
    """`knownote import` of Markdown or text alone: the server does not load PyMuPDF (a second
    of CPU beside the model's loading); a PDF read all the same is read as `extract` reads it."""
    from knownote.read import timelimit
    from knownote.read.extract import extract

    timelimit._SERVER.stop()
    timelimit.start_reader_server(pdfs=False)
    read = dict(max_chars=1_000_000, max_pages=100, seconds=60)
    assert timelimit.extract_with_time_limit("# 笔记\n\n先读这个".encode(), "a.md", **read).text
    assert "mupdf" not in _settled_server().joinpath("maps").read_text()
    pdf = corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf").read_bytes()
    there, here = timelimit.extract_with_time_limit(pdf, "zh.pdf", **read), extract(pdf, "zh.pdf")
    assert "中华人民共和国国务院侨务办公室" in there.text and there.text == here.text
    timelimit._SERVER.stop()
    timelimit.start_reader_server()
    assert "mupdf" in _settled_server().joinpath("maps").read_text()


def test_the_server_loads_the_layout_model_for_the_first_child_that_reads_layouts(settings):
    """Not before: an import that leaves a PDF's layouts for later never pays for it."""
    from knownote.read import timelimit
    from knownote.read.extract import extract

    def server_mb() -> float:
        """The server's memory, once it has loaded its readers."""
        status = _settled_server().joinpath("status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024

    timelimit._SERVER.stop()
    read = dict(max_chars=1_000_000, max_pages=100, seconds=60)
    paper = corpus_file("docs/pdf/cjk_ko_card_terms_tables.pdf").read_bytes()
    assert timelimit.extract_with_time_limit(paper, "ko.pdf", layout=False, **read).layout_later
    before = server_mb()
    assert timelimit.extract_with_time_limit(paper, "ko.pdf", layout=False, **read).layout_later
    assert server_mb() - before < 5
    there = timelimit.extract_with_time_limit(paper, "ko.pdf", **read)
    here = extract(paper, "ko.pdf")
    assert (there.text, there.roles) == (here.text, here.roles)  # the model's tables among them
    assert server_mb() - before > 20  # the model, kept for the next child
