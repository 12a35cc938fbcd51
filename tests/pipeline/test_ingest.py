from knownote.pipeline.ingest import clean_filename, import_file
from knownote.read.extracted import page_of
from knownote.store.db import Page
from tests.conftest import corpus_file
from tests.invariants import assert_spans_valid


def import_path(store, notebook, settings, path, **kwargs):
    return import_file(store, notebook, path.name, path.read_bytes(), settings=settings, **kwargs)


def test_markdown_imports_with_exact_offsets(store, notebook, settings):
    path = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    result = import_path(store, notebook, settings, path)
    assert result.status == "imported" and result.error is None
    text = store.document_text(result.document_id)
    passages = store.passages(result.document_id)
    assert len(passages) == result.passages > 1
    assert all(p.text == text[p.start : p.end] for p in passages)
    assert_spans_valid(text, [(p.start, p.end) for p in passages], settings.passage_size)


def test_pdf_passages_carry_their_pages(store, notebook, settings):
    result = import_path(
        store, notebook, settings, corpus_file("docs/pdf/enc_password_test_4p.pdf"), password="test"
    )
    assert result.status == "imported" and result.pages == 4
    pages = {p.number: p for p in store.pages(result.document_id)}
    for passage in store.passages(result.document_id):
        assert pages[passage.page_start].start <= passage.start
        assert passage.end <= pages[passage.page_end].end
        assert passage.page_start <= passage.page_end


def test_same_file_twice_is_a_duplicate(store, notebook, settings):
    path = corpus_file("docs/office/docx_iceland_horse_short.docx")
    first = import_path(store, notebook, settings, path)
    second = import_path(store, notebook, settings, path)
    assert (first.status, second.status) == ("imported", "duplicate")
    assert second.document_id == first.document_id
    assert len(store.documents(notebook.id)) == 1


def test_encrypted_pdf_without_password_fails_and_asks_for_one(store, notebook, settings):
    result = import_path(
        store, notebook, settings, corpus_file("docs/pdf/enc_password_openpassword.pdf")
    )
    assert result.status == "failed" and result.needs_password
    assert "password" in result.error
    assert store.documents(notebook.id) == []


def test_broken_file_fails_and_leaves_nothing_behind(store, notebook, settings):
    result = import_path(
        store, notebook, settings, corpus_file("docs/pdf/broken_truncated_multicolumn.pdf")
    )
    assert result.status == "failed" and result.error
    assert store.documents(notebook.id) == []
    assert not store.files_dir.exists() or not list(store.files_dir.iterdir())


def test_oversized_file_is_refused_with_the_limit(store, notebook, settings):
    result = import_file(
        store, notebook, "big.txt", b"x" * (1024 * 1024 + 1), settings=settings.with_(max_file_mb=1)
    )
    assert result.status == "failed" and "limit is 1 MB" in result.error


def test_progress_goes_through_every_stage(store, notebook, settings):
    stages = []
    import_file(
        store,
        notebook,
        "note.txt",
        ("Hello there. " * 100).encode(),
        settings=settings,
        progress=lambda label, stage, done, total: stages.append(stage),
    )
    assert [s for i, s in enumerate(stages) if s not in stages[:i]] == [
        "extract",
        "split",
        "embed",
        "store",
    ]


def test_a_model_made_on_first_use_says_so_before_embedding(
    store, notebook, settings, embedder, monkeypatch
):
    assert embedder.prepared()  # the suite's model is made once per machine
    monkeypatch.setattr(embedder, "prepared", lambda: False)
    stages = []
    import_file(
        store,
        notebook,
        "note.txt",
        b"Hello there. " * 100,
        settings=settings,
        embedder=embedder,
        progress=lambda label, stage, done, total: stages.append(stage),
    )
    assert stages.index("model") == stages.index("embed") - 1


def test_passage_size_is_a_setting(store, notebook, settings):
    data = ("A sentence of some length here. " * 200).encode()
    result = import_file(
        store,
        notebook,
        "a.txt",
        data,
        settings=settings.with_(passage_size=200, passage_overlap=20),
    )
    assert max(p.end - p.start for p in store.passages(result.document_id)) <= 200
    document = store.document(result.document_id)
    assert (document.passage_size, document.passage_overlap) == (200, 20)  # kept with it


def test_file_names_lose_folders_and_control_characters():
    assert clean_filename("../../etc/passwd") == "passwd"
    assert clean_filename("C:\\Users\\me\\report.pdf") == "report.pdf"
    assert clean_filename("a\x00b.txt") == "ab.txt"
    assert len(clean_filename("x" * 5000 + ".pdf")) <= 200


def test_page_of_finds_the_page_holding_an_offset():
    pages = [Page(1, 0, 10), Page(2, 12, 20)]
    starts = [0, 12]
    assert [page_of(starts, pages, i) for i in (0, 9, 11, 12, 19)] == [1, 1, 1, 2, 2]
    assert page_of([], [], 5) is None


def test_markdown_headings_are_kept_and_passages_know_their_section(store, notebook, settings):
    path = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    result = import_path(store, notebook, settings, path)
    text = store.document_text(result.document_id)
    headings = store.headings(result.document_id)
    assert headings and headings[0].level == 1
    assert text[headings[0].start : headings[0].end] == "Gravity hill"
    assert all(not text[h.start : h.end].startswith("#") for h in headings)
    sections = [p.section for p in store.passages(result.document_id)]
    assert sections[0].startswith("Gravity hill")
    assert any(" › " in s for s in sections)


def test_an_import_sorts_the_keyword_rows_once_enough_arrived(
    store, notebook, settings, monkeypatch
):
    from knownote.store import db as store_module

    monkeypatch.setattr(store_module, "UNSORTED_TERMS_MIN", 1)
    import_path(store, notebook, settings, corpus_file("docs/web_text/md_codeblocks.md"))
    total = store.db.execute("SELECT count(*) FROM passage_terms").fetchone()[0]
    assert store.db.execute("SELECT sorted_rows FROM sorted_terms").fetchone() == (total,)
    order = store.db.execute("SELECT term_key FROM passage_terms ORDER BY rowid").fetchall()
    assert order == sorted(order)


def test_a_file_read_ahead_imports_as_the_same_file_read_in_its_turn(store, notebook, settings):
    from knownote.pipeline.ingest import ReadAhead

    path = corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")
    data = path.read_bytes()
    ahead = ReadAhead(data, path.name, settings)
    read = import_file(store, notebook, path.name, data, settings=settings, ahead=ahead)
    other = store.create_notebook("in turn", notebook.embedding_model, notebook.embedding_dim)
    in_turn = import_file(store, other, path.name, data, settings=settings)
    assert read.status == in_turn.status == "imported", (read.error, in_turn.error)
    text = store.document_text(read.document_id)
    assert text == store.document_text(in_turn.document_id)

    def placed(document_id: int) -> list[tuple]:
        return [(p.start, p.end, p.section, p.text) for p in store.passages(document_id)]

    assert placed(read.document_id) == placed(in_turn.document_id)
    assert store.roles(read.document_id) == store.roles(in_turn.document_id)
    passages = store.passages(read.document_id)
    assert all(p.text == text[p.start : p.end] for p in passages)
    assert_spans_valid(text, [(p.start, p.end) for p in passages], settings.passage_size)


def test_a_scan_read_ahead_tells_its_import_how_far_its_ocr_got(store, notebook, settings):
    from knownote.pipeline.ingest import ReadAhead

    path = corpus_file("docs/pdf/scan_book_page_image_only.pdf")
    ahead = ReadAhead(path.read_bytes(), path.name, settings)
    heard = []
    result = import_file(
        store, notebook, path.name, ahead.data, settings=settings, ahead=ahead,
        progress=lambda label, stage, done, total: heard.append((stage, done, total)),
    )  # fmt: skip
    assert result.status == "imported", result.error
    assert ("ocr", 1, 1) in heard
    assert heard.index(("ocr", 1, 1)) < heard.index(("embed", 0, result.passages))


def test_a_broken_file_read_ahead_fails_with_its_reason(store, notebook, settings):
    from knownote.pipeline.ingest import ReadAhead

    ahead = ReadAhead(b"", "empty.pdf", settings)
    result = import_file(store, notebook, "empty.pdf", b"", settings=settings, ahead=ahead)
    assert result.status == "failed" and "empty.pdf is empty" in result.error
