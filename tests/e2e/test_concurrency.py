"""One store shared by many sessions, as the app's Streamlit threads share it.

The sessions call exactly the `knownote` functions the app's views call (import_file, ask,
list_chats, load_chat, export_markdown, set_document_enabled, delete_chat, delete_document, the
notebook and document lists) from several threads at once, against one database file; then the
rows are counted and the whole database is checked. The races below let another session act
just before a write begins (a real store that runs that action in another thread first), which
is the interleaving a busy server can produce.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from knownote.answer import chats
from knownote.answer.ask import ask
from knownote.errors import NotFound
from knownote.notebooks import delete_notebook
from knownote.pipeline.ingest import import_file
from knownote.search.retrieve import search
from knownote.store.db import Store, sha256_hex
from tests.conftest import corpus_file
from tests.invariants import assert_store_consistent, orphan_rows, row_counts

SHARED = "docs/web_text/md_wikipedia_gravity_hill.md"
OWN = [
    "docs/office/docx_en_rag_intro.docx",
    "docs/office/docx_iceland_horse_short.docx",
    "docs/web_text/txt_war_and_peace_excerpt.txt",
    "docs/office/pptx_sample_presentation_4slides.pptx",
]
QUESTIONS = ["What is a gravity hill?", "Why does the horizon matter?", "What is retrieval?"]


def session(store, embedder, settings, shared, own, path, errors, gate) -> None:
    """One browser session: imports, questions, list views, a toggle and a deleted chat."""
    try:
        gate.wait()
        for notebook, relative in ((own, path), (shared, SHARED), (shared, path)):
            file = corpus_file(relative)
            result = import_file(
                store, notebook, file.name, file.read_bytes(), settings=settings, embedder=embedder
            )
            assert result.status in ("imported", "duplicate"), result.error
        chat_id = None
        for question in QUESTIONS:
            answer = ask(
                store, embedder, shared.id, question,
                llm=None, model=None, settings=settings, chat_id=chat_id,
            )  # fmt: skip
            chat_id = answer.chat_id
            assert answer.passages
        mine = ask(store, embedder, own.id, QUESTIONS[0], llm=None, model=None, settings=settings)
        store.notebooks()
        for document in store.documents(own.id):
            store.set_document_enabled(document.id, False)
            store.set_document_enabled(document.id, True)
        for chat in chats.list_chats(store, shared.id):
            chats.load_chat(store, chat.id)
        chats.export_markdown(store, chat_id)
        search(store, embedder, shared.id, "horizon", k=5)
        chats.delete_chat(store, mine.chat_id)
    except BaseException as e:  # reported by the test thread, with its traceback
        errors.append(e)


def churn(store, embedder, settings, rounds, errors, gate) -> None:
    """A session that makes a notebook, imports the shared file, asks, and deletes it all."""
    try:
        gate.wait()
        file = corpus_file(SHARED)
        for i in range(rounds):
            notebook = store.create_notebook(f"Churn {i}", embedder.name, embedder.dim)
            result = import_file(
                store, notebook, file.name, file.read_bytes(), settings=settings, embedder=embedder
            )
            assert result.status == "imported", result.error
            ask(store, embedder, notebook.id, QUESTIONS[0], llm=None, model=None, settings=settings)
            store.delete_document(result.document_id)
            delete_notebook(store, notebook.id)
    except BaseException as e:
        errors.append(e)


def test_sessions_at_once_lose_and_duplicate_nothing(store, embedder, settings):
    shared = store.create_notebook("Shared", embedder.name, embedder.dim)
    owns = [store.create_notebook(f"Own {i}", embedder.name, embedder.dim) for i in range(4)]
    errors: list[BaseException] = []
    gate = threading.Barrier(len(owns) + 1)
    threads = [
        threading.Thread(
            target=session, args=(store, embedder, settings, shared, own, path, errors, gate)
        )
        for own, path in zip(owns, OWN, strict=True)
    ]
    threads.append(
        threading.Thread(target=churn, args=(store, embedder, settings, 3, errors, gate))
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if errors:
        raise errors[0]
    shared_files = sorted(d.filename for d in store.documents(shared.id))
    assert shared_files == sorted([Path(SHARED).name, *(Path(p).name for p in OWN)])
    for own, path in zip(owns, OWN, strict=True):
        assert [d.filename for d in store.documents(own.id)] == [Path(path).name]
        assert chats.list_chats(store, own.id) == []
    shared_chats = chats.list_chats(store, shared.id)
    assert len(shared_chats) == len(owns)
    for chat in shared_chats:
        turns = chats.load_chat(store, chat.id)
        assert [t.question for t in turns] == QUESTIONS
        assert all(t.passages and t.message_id for t in turns)
    (messages,) = store.db.execute("SELECT count(*) FROM messages").fetchone()
    assert messages == 2 * len(QUESTIONS) * len(owns)
    assert [n.name for n in store.notebooks()] == ["Shared"] + [o.name for o in owns]
    gravity = corpus_file(SHARED).read_bytes()
    assert store.read_file(sha256_hex(gravity)) == gravity  # the churned copies did not take it
    assert assert_store_consistent(store, settings.passage_size, settings.passage_overlap) == 9
    print(f"{len(threads)} sessions: 15 imports, 19 questions, 3 notebooks made and deleted; "
          f"rows {row_counts(store)}")  # fmt: skip


class RacingStore(Store):
    """A real store on which another session acts just before the n-th write begins."""

    def race(self, action: Callable[[], None], skip: int = 0) -> None:
        self._action, self._skip, self.others = action, skip, []

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        action = getattr(self, "_action", None)
        if action is not None:
            if self._skip:
                self._skip -= 1
            else:
                self._action = None
                other = threading.Thread(target=action)
                other.start()
                other.join(timeout=2)  # a session holding the lock makes the other one wait
                self.others.append(other)
        with super().transaction() as db:
            yield db

    def settle(self) -> None:
        for other in self.others:
            other.join(timeout=30)


@pytest.fixture
def racing(db_path: Path):
    store = RacingStore.open(db_path)
    yield store
    store.close()


def import_corpus(store, notebook, settings, embedder, relative):
    file = corpus_file(relative)
    return import_file(
        store, notebook, file.name, file.read_bytes(), settings=settings, embedder=embedder
    )


def test_an_import_into_a_notebook_deleted_meanwhile_stores_nothing(racing, embedder, settings):
    notebook = racing.create_notebook("Gone soon", embedder.name, embedder.dim)
    racing.race(lambda: delete_notebook(racing, notebook.id))
    result = import_corpus(racing, notebook, settings, embedder, SHARED)
    racing.settle()
    # Either the import failed, or it committed first and the delete took it with the notebook.
    assert result.status in ("failed", "imported"), result.error
    assert orphan_rows(racing) == {}
    assert racing.db.execute("SELECT count(*) FROM documents").fetchone() == (0,)
    assert not any(racing.files_dir.iterdir())


def test_a_question_in_a_notebook_deleted_meanwhile_saves_no_chat(racing, embedder, settings):
    notebook = racing.create_notebook("Gone soon", embedder.name, embedder.dim)
    import_corpus(racing, notebook, settings, embedder, SHARED)
    racing.race(lambda: delete_notebook(racing, notebook.id))
    with pytest.raises(NotFound, match="deleted"):
        ask(racing, embedder, notebook.id, QUESTIONS[0], llm=None, model=None, settings=settings)
    racing.settle()
    assert orphan_rows(racing) == {}
    assert racing.db.execute("SELECT count(*) FROM chats").fetchone() == (0,)


def test_an_answer_to_a_chat_deleted_meanwhile_saves_no_message(racing, embedder, settings):
    notebook = racing.create_notebook("Kept", embedder.name, embedder.dim)
    import_corpus(racing, notebook, settings, embedder, SHARED)
    first = ask(
        racing, embedder, notebook.id, QUESTIONS[0], llm=None, model=None, settings=settings
    )
    racing.race(lambda: chats.delete_chat(racing, first.chat_id), skip=1)  # after the question
    with pytest.raises(NotFound, match="deleted"):
        ask(
            racing, embedder, notebook.id, QUESTIONS[1],
            llm=None, model=None, settings=settings, chat_id=first.chat_id,
        )  # fmt: skip
    racing.settle()
    assert orphan_rows(racing) == {}
    assert racing.db.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    assert racing.db.execute("SELECT count(*) FROM answer_passages").fetchone() == (0,)


def test_deleting_a_copy_while_the_same_file_imports_keeps_its_file(racing, embedder, settings):
    first = racing.create_notebook("First", embedder.name, embedder.dim)
    second = racing.create_notebook("Second", embedder.name, embedder.dim)
    old = import_corpus(racing, first, settings, embedder, SHARED)
    racing.race(lambda: racing.delete_document(old.document_id))
    new = import_corpus(racing, second, settings, embedder, SHARED)
    racing.settle()
    assert new.status == "imported"
    assert racing.documents(first.id) == []
    digest = sha256_hex(corpus_file(SHARED).read_bytes())
    assert racing.read_file(digest) == corpus_file(SHARED).read_bytes()
    assert_store_consistent(racing, settings.passage_size, settings.passage_overlap)
