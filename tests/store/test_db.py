import subprocess
import sys

import numpy as np
import pytest

from knownote.errors import DatabaseInUse, KnowNoteError, NotFound
from knownote.index.analyze import text_terms
from knownote.index.context import NewPassage
from knownote.notebooks import delete_notebook
from knownote.store.db import TERM_KEY, Page, Store, sha256_hex, term_key

TEXT = "First page text.\n\nSecond page, with more words."


def unit_vectors(n: int, dim: int) -> np.ndarray:
    v = np.random.default_rng(0).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def add(store, notebook, text=TEXT, data=b"file bytes", pages=None):
    passages = [
        NewPassage(0, 16, 1, 1, {"first": 1}),
        NewPassage(18, len(text), 2, 2, {"second": 1}),
    ]
    store.save_file(data)
    return store.add_document(
        notebook_id=notebook.id,
        title="T",
        filename="t.pdf",
        kind="pdf",
        sha256=sha256_hex(data),
        text=text,
        pages=pages if pages is not None else [Page(1, 0, 16), Page(2, 18, len(text))],
        passages=passages,
        vectors=unit_vectors(2, notebook.embedding_dim),
    )


@pytest.fixture
def small_notebook(store):
    return store.create_notebook("Small", "test-model", 8)


def test_stored_passage_text_is_the_document_slice(store, small_notebook):
    doc_id = add(store, small_notebook)
    text = store.document_text(doc_id)
    assert [p.text for p in store.passages(doc_id)] == [
        text[p.start : p.end] for p in store.passages(doc_id)
    ]
    assert [p.text for p in store.passages(doc_id)] == ["First page text.", TEXT[18:]]


def test_pages_and_counts_are_recorded(store, small_notebook):
    doc_id = add(store, small_notebook)
    assert store.pages(doc_id) == [Page(1, 0, 16), Page(2, 18, len(TEXT))]
    assert store.notebook(small_notebook.id).passages == 2
    assert store.document(doc_id).passages == 2


def test_vectors_are_fixed_size_float_arrays(store, small_notebook):
    doc_id = add(store, small_notebook)
    (kind,) = store.db.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'vectors_8' "
        "AND column_name = 'embedding'"
    ).fetchone()
    assert kind == "FLOAT[8]"
    assert np.allclose(np.linalg.norm(store.vectors(doc_id), axis=1), 1.0, atol=1e-5)


def test_same_file_twice_is_not_stored_twice(store, small_notebook):
    assert add(store, small_notebook) is not None
    assert add(store, small_notebook) is None
    assert len(store.documents(small_notebook.id)) == 1


def test_failure_inside_the_import_leaves_nothing(store, small_notebook):
    # after the document's row: a page without an end is refused before it reaches the table
    with pytest.raises(TypeError):
        add(store, small_notebook, pages=[Page(1, 0, None)])
    store.discard_file_if_unused(sha256_hex(b"file bytes"))
    for table in ("documents", "pages", "passages", "passage_terms"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert not list(store.files_dir.iterdir())


def test_original_bytes_are_kept_under_their_hash(store, small_notebook):
    doc_id = add(store, small_notebook, data=b"%PDF- original")
    digest = store.document(doc_id).sha256
    assert store.file_path(digest).name == digest
    assert store.read_file(digest) == b"%PDF- original"


def test_delete_document_removes_rows_and_file(store, small_notebook):
    doc_id = add(store, small_notebook)
    digest = store.document(doc_id).sha256
    store.delete_document(doc_id)
    for table in ("documents", "pages", "passages", "passage_terms", "vectors_8"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert not store.file_path(digest).exists()


def test_delete_notebook_removes_its_documents(store, small_notebook):
    add(store, small_notebook)
    delete_notebook(store, small_notebook.id)
    assert store.notebooks() == []
    assert store.db.execute("SELECT count(*) FROM passages").fetchone() == (0,)


def test_orphan_files_are_removed_when_the_database_opens(db_path):
    store = Store.open(db_path)
    store.save_file(b"left behind by a killed import")
    store.close()
    store = Store.open(db_path)
    assert list(store.files_dir.iterdir()) == []
    store.close()


def test_notebook_names_are_unique_and_not_blank(store, small_notebook):
    with pytest.raises(KnowNoteError, match="already exists"):
        store.create_notebook("Small", "m", 8)
    with pytest.raises(KnowNoteError, match="needs a name"):
        store.create_notebook("  ", "m", 8)


def test_rename_notebook(store, small_notebook):
    store.rename_notebook(small_notebook.id, "Renamed")
    assert store.notebook(small_notebook.id).name == "Renamed"


def test_missing_document_is_not_found(store):
    with pytest.raises(NotFound):
        store.document(12345)


def test_disabling_a_document_is_stored(store, small_notebook):
    doc_id = add(store, small_notebook)
    store.set_document_enabled(doc_id, False)
    assert store.document(doc_id).enabled is False


def test_second_process_gets_a_clear_message(db_path):
    store = Store.open(db_path)
    code = (
        "import sys\nfrom knownote.store.db import Store\n"
        "from knownote.errors import DatabaseInUse\n"
        f"try:\n    Store.open({str(db_path)!r})\nexcept DatabaseInUse as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    store.close()
    assert "in use by another KnowNote process" in out.stdout
    assert DatabaseInUse.__doc__


def test_a_term_key_computed_in_python_is_the_one_sql_stores(store):
    text = "Trained models, naïve Bayes, 3.2 Training; 日本の最高峰は富士山; Ärger über Öl."
    terms, _ = text_terms(text * 3, "stem:en")
    terms = [*terms, "", "x" * 300, "^heading"]
    (keys,) = store.db.execute(
        f"SELECT list({TERM_KEY}) FROM (SELECT unnest(?::VARCHAR[]) AS term)", [terms]
    ).fetchone()
    assert len(terms) > 20
    assert [term_key(term) for term in terms] == keys


def test_a_notebooks_languages_are_its_sources_main_ones_and_common_second_ones(
    store, small_notebook
):
    # Twelve English sources, one with a stray "Aragonese" list of names; two Chinese sources,
    # one of them with English; and one German source whose second language is French.
    kept = [("en",)] * 10 + [("en", "an"), ("zh", "en"), ("zh",), ("de", "fr")]
    for i, languages in enumerate(kept):
        document_id = add(store, small_notebook, data=f"file {i}".encode())
        store.set_languages(document_id, languages)
    assert store.notebook_languages(small_notebook.id) == ["en", "zh", "de"]
    store.set_languages(add(store, small_notebook, data=b"file x"), ("es", "fr"))
    assert store.notebook_languages(small_notebook.id) == ["en", "fr", "zh", "de", "es"]


BILINGUAL = (
    "The committee approved the budget for the new library after a long debate.\n\n"
    "委员会经过长时间的辩论，批准了新图书馆的预算，并决定明年开始施工。"
)


def test_each_passage_records_its_language_among_its_document_s(store, small_notebook):
    cut = BILINGUAL.index("\n\n")
    passages = [
        NewPassage(0, cut, None, None, {"x": 1}),
        NewPassage(cut + 2, len(BILINGUAL), None, None, {"y": 1}),
    ]
    document_id = store.add_document(
        notebook_id=small_notebook.id,
        title="T",
        filename="t.md",
        kind="markdown",
        sha256="b",
        text=BILINGUAL,
        pages=[],
        passages=passages,
        vectors=unit_vectors(2, 8),
        languages=("zh", "en"),
    )
    rows = store.db.execute(
        "SELECT language FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
    ).fetchall()
    assert rows == [("en",), ("zh",)]
    assert store.passage_languages(small_notebook.id) == {"en": 1, "zh": 1}
    store.set_document_enabled(document_id, False)
    assert store.passage_languages(small_notebook.id) == {}


def test_languages_read_after_the_import_reach_the_passages(store, small_notebook):
    document_id = add(store, small_notebook)  # stored before its languages were read
    assert store.passage_languages(small_notebook.id) == {}
    store.set_languages(document_id, ("en",))
    assert store.passage_languages(small_notebook.id) == {"en": 2}


def test_storing_a_document_does_not_load_pandas(db_path):
    # pandas, loaded by Arrow arrays made from Python lists, was 3.2 s of a cold import
    code = (
        "import sys, numpy as np\n"
        "from knownote.index.context import NewPassage\n"
        "from knownote.store.db import Page, Store\n"
        f"store = Store.open({str(db_path)!r})\n"
        "nb = store.create_notebook('n', 'm', 8)\n"
        "store.add_document(notebook_id=nb.id, title='T', filename='t.txt', kind='text',\n"
        "    sha256='h', text='ab cd', pages=[Page(1, 0, 5)], vectors=np.ones((2, 8), 'f4'),\n"
        "    passages=[NewPassage(0, 2, 1, 1, {'ab': 1}), NewPassage(3, 5, None, None, {})])\n"
        "print(store.db.execute('SELECT count(*) FROM passage_codes').fetchone()[0],\n"
        "      'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["2", "False"], out.stderr
