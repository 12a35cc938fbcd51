"""The Streamlit app through AppTest: widgets driven by key, `.run()` after every change.

No Ollama server runs here: OLLAMA_HOST points at a closed port, so answers take the quoted
passages path, exactly as on a machine without Ollama.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from knownote.settings import Settings
from knownote.store.db import Store
from knownote.ui.download import unpack
from tests.conftest import corpus_file
from tests.ollama_standin import free_port

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = int(os.environ.get("KNOWNOTE_APPTEST_TIMEOUT", "120"))  # the first import loads the model

NOTES = (
    "Dense passage retrieval encodes questions and passages as vectors.\n\n"
    "Keyword search ranks passages by the terms they share with the question.\n\n"
    "Hybrid search combines both rankings into one list."
)
HOSTILE = (
    "Careful reading matters.\n\n"
    "This source says <script>alert(1)</script> and <img src=x onerror=alert(2)> "
    "about careful reading."
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("KNOWNOTE_HOME", str(home))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens
    monkeypatch.delenv("KNOWNOTE_PASSWORD", raising=False)
    return home


def start(home: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def create_notebook(at: AppTest, name: str = "Reading") -> AppTest:
    at.text_input(key="new_notebook_name").set_value(name).run()
    at.button(key="create_notebook").click().run()
    assert not at.exception
    return at


def upload(at: AppTest, *files: tuple[str, bytes, str]) -> AppTest:
    key = f"upload_{at.session_state['upload_round']}"
    at.file_uploader(key=key).set_value(list(files)).run()
    assert not at.exception
    return settle(at)


def settle(at: AppTest) -> AppTest:
    """Wait until the app's import worker has nothing queued or running, then rerun the page."""
    db = duckdb.connect(str(Settings().db_path))  # not Store.open: it would tidy files mid-import
    try:
        deadline = time.monotonic() + TIMEOUT
        while db.execute(
            "SELECT count(*) FROM import_jobs WHERE status IN ('queued', 'running')"
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "the imports did not finish"
            time.sleep(0.1)
    finally:
        db.close()
    at.run()
    assert not at.exception
    return at


def store_for(home: Path) -> Store:
    """The store the app has open (the same process shares one database instance)."""
    return Store.open(Settings().with_(home=home).db_path)


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]
    parts += [i.value for i in at.info]
    return "\n".join(parts)


def all_html(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def test_first_paint_asks_for_a_notebook(home: Path):
    at = start(home)
    assert "Create a notebook" in at.info[0].value
    assert "Not connected: answering with quoted passages" in texts(at)


def test_first_paint_does_not_load_torch(home: Path):
    script = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({APP!r}, default_timeout=60)\n"
        "at.run()\n"
        "assert not at.exception, at.exception\n"
        "print(json.dumps(sorted(m for m in ('torch', 'sentence_transformers') "
        "if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + script],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_create_notebook_selects_it(home: Path):
    at = create_notebook(start(home), "Thesis")
    notebooks = store_for(home).notebooks()
    assert [n.name for n in notebooks] == ["Thesis"]
    assert at.selectbox(key="notebook").value == notebooks[0].id
    assert at.header[0].value == "Thesis"


def test_create_notebook_without_a_name_says_so(home: Path):
    at = start(home)
    at.button(key="create_notebook").click().run()
    assert "Give the new notebook a name." in at.error[0].value


def test_create_notebook_twice_says_it_exists(home: Path):
    at = create_notebook(create_notebook(start(home), "Same"), "Same")
    assert "already exists" in at.error[0].value


def test_rename_notebook(home: Path):
    at = create_notebook(start(home), "Old name")
    at.text_input(key="rename_to").set_value("New name").run()
    at.button(key="rename_notebook").click().run()
    assert not at.exception
    assert at.header[0].value == "New name"


def test_delete_notebook_asks_first(home: Path):
    at = create_notebook(start(home), "Doomed")
    at.button(key="delete_notebook").click().run()
    assert "cannot be undone" in at.warning[0].value
    at.button(key="cancel_delete_notebook").click().run()
    assert [n.name for n in store_for(home).notebooks()] == ["Doomed"]
    at.button(key="delete_notebook").click().run()
    at.button(key="confirm_delete_notebook").click().run()
    assert not at.exception
    assert store_for(home).notebooks() == []
    assert "Deleted the notebook “Doomed”." in at.info[0].value
    assert "Create a notebook" in at.info[1].value


def test_upload_imports_files_and_lists_them(home: Path):
    at = create_notebook(start(home))
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"), ("more.md", b"# More\n\nText.", ""))
    shown = texts(at)
    assert f"✓ notes\\.txt: 1 passage, {len(NOTES)} characters" in shown
    assert "✓ more\\.md" in shown
    assert "2 sources · 2 used in answers" in at.main.subheader[0].value


def test_sources_view_names_the_languages_of_a_notebook_of_two(home: Path):
    english = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md").read_bytes()
    chinese = corpus_file("docs/web_text/md_zh_distributed_training_notes.md").read_bytes()
    at = create_notebook(start(home))
    upload(at, ("gravity.md", english, ""), ("训练.md", chinese, ""))
    [caption] = [c.value for c in at.caption if c.value.startswith("In ")]
    assert "Chinese (" in caption and "English (" in caption
    assert "not only its own" in caption


def test_upload_of_a_broken_file_shows_the_reason(home: Path):
    at = create_notebook(start(home))
    upload(at, ("empty.pdf", b"", "application/pdf"))
    assert at.error[0].value.startswith("empty\\.pdf\\: empty\\.pdf is empty")  # escaped


def test_encrypted_pdf_asks_for_its_password_and_retries(home: Path):
    data = corpus_file("docs/pdf/enc_password_test_4p.pdf").read_bytes()
    at = create_notebook(start(home))
    upload(at, ("locked.pdf", data, "application/pdf"))
    assert "is encrypted" in texts(at)
    password = next(t for t in at.text_input if t.key.startswith("pdf_password_"))
    password.set_value("test")  # a form: the value goes with the submit
    next(b for b in at.button if b.key.startswith("retry_")).click().run()
    assert not settle(at).exception
    assert "✓ locked\\.pdf: 4 pages" in texts(at)
    assert "is encrypted" not in texts(at)


def test_switching_a_source_off_and_deleting_it(home: Path):
    at = create_notebook(start(home))
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    (document,) = store_for(home).documents(store_for(home).notebooks()[0].id)
    at.toggle(key=f"enabled_{document.id}").set_value(False).run()
    assert not store_for(home).document(document.id).enabled
    at.button(key=f"delete_{document.id}").click().run()
    at.button(key=f"confirm_delete_{document.id}").click().run()
    assert not at.exception
    assert store_for(home).documents(document.notebook_id) == []


def test_extracted_text_view_shows_page_markers(home: Path):
    data = corpus_file("docs/pdf/enc_owner_only_copy_protected.pdf").read_bytes()
    at = create_notebook(start(home))
    upload(at, ("paper.pdf", data, "application/pdf"))
    (document,) = store_for(home).documents(store_for(home).notebooks()[0].id)
    at.toggle(key=f"show_text_{document.id}").set_value(True).run()
    assert not at.exception
    assert at.code[0].value.startswith("── page 1 · chars 0–")
    assert "── page 2 · chars" in at.code[0].value


def test_question_without_ollama_answers_with_cited_excerpts(home: Path):
    at = create_notebook(start(home))
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    at.radio(key="view").set_value("Chat").run()
    at.chat_input(key="question").set_value("What is dense passage retrieval?").run()
    assert not at.exception
    html = all_html(at)
    assert 'class="kn-card"' in html and "<mark>" in html
    assert "[1] notes.txt · chars 0–" in html
    assert 'class="kn-cite" href="#' in html  # to its card, or to the span inside it
    # The reason it is quoted (no model connected), as saved with the answer.
    assert "Not connected to a model" in texts(at)
    assert at.selectbox(key="chat").value is not None
    at.button(key="download_chat").click().run()  # the Markdown goes to this session's page
    (saver,) = at.get("bidi_component")
    head, markdown = unpack(saver.proto.bytes)
    assert head["name"] == f"knownote-chat-{at.selectbox(key='chat').value}.md"
    assert "What is dense passage retrieval?" in markdown.decode()


def test_document_text_and_names_are_escaped(home: Path):
    at = create_notebook(start(home))
    upload(at, ("<img src=x onerror=alert(3)>.txt", HOSTILE.encode(), "text/plain"))
    at.radio(key="view").set_value("Chat").run()
    at.chat_input(key="question").set_value("What does the source say?").run()
    assert not at.exception
    html = all_html(at)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(3)&gt;.txt" in html
    assert "<script" not in html and "<img" not in html


def test_delete_chat_asks_first(home: Path):
    at = create_notebook(start(home))
    upload(at, ("notes.txt", NOTES.encode(), "text/plain"))
    at.radio(key="view").set_value("Chat").run()
    at.chat_input(key="question").set_value("What is keyword search?").run()
    at.button(key="delete_chat").click().run()
    at.button(key="confirm_delete_chat").click().run()
    assert not at.exception
    assert at.selectbox(key="chat").value is None


def test_password_gate(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KNOWNOTE_PASSWORD", "open sesame")
    at = start(home)
    assert not at.sidebar.selectbox and not at.info
    at.text_input(key="password").set_value("wrong")
    at.button[0].click().run()
    assert "not right" in at.error[0].value
    at.text_input(key="password").set_value("open sesame")
    at.button[0].click().run()
    assert not at.exception
    assert "Create a notebook" in at.info[0].value


def test_settings_change_retrieval_and_k(home: Path):
    at = start(home)
    at.selectbox(key="mode").set_value("keyword").run()
    at.slider(key="k").set_value(3).run()
    assert not at.exception
    assert at.session_state["mode"] == "keyword"
    assert at.session_state["k"] == 3


def test_cited_pdf_pages_of_an_encrypted_pdf_ask_for_its_password_again(home: Path):
    data = corpus_file("docs/pdf/enc_password_test_4p.pdf").read_bytes()
    at = create_notebook(start(home))
    upload(at, ("locked.pdf", data, "application/pdf"))
    next(t for t in at.text_input if t.key.startswith("pdf_password_")).set_value("test")
    next(b for b in at.button if b.key.startswith("retry_")).click().run()
    settle(at).radio(key="view").set_value("Chat").run()
    at.chat_input(key="question").set_value("How do I back up files?").run()
    assert not at.exception
    assert any(t.key.startswith("on_page_") and t.value for t in at.toggle)
    assert "It is password-protected: enter the password of locked.pdf" in texts(at)
    assert not at.get("image")
    field = next(t for t in at.text_input if t.key.startswith("page_password_"))
    field.set_value("test")
    next(b for b in at.button if b.label == "Show the page").click().run()
    assert not at.exception
    assert "password-protected" not in texts(at)
    images = at.get("image")
    assert images
    assert "the cited passage is highlighted" in str(images[0].proto)
    shown = len(images)
    next(t for t in at.toggle if t.key.startswith("whole_")).set_value(True).run()
    assert not at.exception
    assert len(at.get("image")) == shown + 1  # the whole page below its crop


def test_an_encrypted_pdf_is_one_calm_prompt_and_a_wrong_password_says_so(home: Path):
    data = corpus_file("docs/pdf/enc_password_test_4p.pdf").read_bytes()
    at = create_notebook(start(home))
    upload(at, ("locked.pdf", data, "application/pdf"))
    assert not at.error  # no red failure beside the prompt
    assert texts(at).count("locked\\.pdf") == 1
    next(t for t in at.text_input if t.key.startswith("pdf_password_")).set_value("nope")
    next(b for b in at.button if b.key.startswith("retry_")).click().run()
    assert "That password is wrong" in texts(settle(at))
    assert not store_for(home).documents(store_for(home).notebooks()[0].id)


def test_sources_can_be_filtered_by_name_sorted_and_paged(home: Path):
    at = create_notebook(start(home))
    files = [(f"note-{i:02}.txt", f"Note number {i}. {'x' * i}".encode(), "") for i in range(33)]
    upload(at, *files, ("alpha.md", b"# Alpha\n\nThe first letter.", ""))
    at.button(key="dismiss_results").click().run()
    assert len(titles(at)) == 30 and titles(at)[0] == "**Alpha**"  # newest first, one page
    at.button(key="show_more_sources").click().run()
    assert len(titles(at)) == 34
    at.text_input(key="source_filter").set_value("NOTE-1").run()
    assert titles(at) == [f"**note\\-{i}\\.txt**" for i in range(19, 9, -1)]
    at.selectbox(key="source_sort").set_value("Largest first").run()
    at.text_input(key="source_filter").set_value("").run()
    assert titles(at)[0] == "**note\\-32\\.txt**"


def titles(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**")]
