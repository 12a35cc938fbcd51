"""Extraction: file bytes -> canonical text, page ranges, title and warnings."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import pptx
import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pptx.util import Inches

from knownote.errors import (
    FileTooLarge,
    KnowNoteError,
    NoTextLayer,
    PasswordRequired,
    UnreadableFile,
    UnsupportedFile,
)
from knownote.read.extract import (
    Extracted,
    OcrLimits,
    clean_text,
    detect_kind,
    extract,
    pdf_page_text,
)

NO_OCR = OcrLimits(max_pages=0)  # tests of the text layer; OCR has its own tests (test_scans)

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
DOCS = CORPUS / "docs"
PASSWORDS = {"enc_password_openpassword.pdf": "openpassword", "enc_password_test_4p.pdf": "test"}
EXPECTED_ERRORS = {
    "broken_empty_0_bytes.pdf": (UnreadableFile, r"is empty \(0 bytes\)"),
    "broken_unreadable_pages_tree.pdf": (UnreadableFile, "is damaged"),
    "broken_truncated_multicolumn.pdf": (UnreadableFile, "is damaged"),
}
CORPUS_FILES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.glob("*/*")) or ["(absent)"]


def corpus(relative: str) -> Path:
    path = DOCS / relative
    if not path.is_file():
        pytest.skip(f"corpus file {path} is absent (the shared corpus is not checked out)")
    return path


def assert_well_formed(result: Extracted) -> None:
    text = result.text
    assert "\r" not in text and "\x00" not in text
    previous_end = -1
    for number, page in enumerate(result.pages, 1):
        assert page.number == number
        assert previous_end < page.start <= page.end <= len(text)
        page_text = text[page.start : page.end]
        assert page_text == page_text.strip()
        previous_end = page.end
    if result.pages:
        assert result.pages[0].start == 0 and result.pages[-1].end == len(text)


def make_pdf(*pages: str, title: str | None = None) -> bytes:
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        if text:
            page.insert_text((72, 72), text)
    if title is not None:
        doc.set_metadata({"title": title})
    return doc.tobytes()


def add_full_page_image(page: pymupdf.Page) -> None:
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
    pixmap.clear_with(180)
    page.insert_image(page.rect, pixmap=pixmap)


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_every_corpus_file_imports_or_fails_with_the_expected_error(relative: str) -> None:
    path = corpus(relative)
    data = path.read_bytes()
    if path.name in EXPECTED_ERRORS:
        error, message = EXPECTED_ERRORS[path.name]
        with pytest.raises(error, match=re.escape(path.name) + " " + message):
            extract(data, path.name)
        return
    result = extract(data, path.name, PASSWORDS.get(path.name), ocr=NO_OCR)
    assert_well_formed(result)
    assert len(result.text.strip()) > 100
    real_html = path.name.startswith("txt_actually_html")
    assert result.kind == ("html" if real_html else path.suffix.lstrip("."))


def test_encrypted_corpus_pdf_asks_for_its_password() -> None:
    data = corpus("pdf/enc_password_test_4p.pdf").read_bytes()
    with pytest.raises(PasswordRequired, match="password-protected"):
        extract(data, "enc_password_test_4p.pdf")
    with pytest.raises(PasswordRequired, match="wrong"):
        extract(data, "enc_password_test_4p.pdf", password="nope")
    assert len(extract(data, "enc_password_test_4p.pdf", password="test").pages) == 4


def test_owner_only_encrypted_pdf_opens_without_a_password() -> None:
    data = corpus("pdf/enc_owner_only_copy_protected.pdf").read_bytes()
    assert len(extract(data, "copy_protected.pdf").pages) == 2


def test_scanned_pdf_with_an_ocr_layer_imports_its_layer_when_ocr_is_off() -> None:
    data = corpus("pdf/cjk_zh_scanned_ocr_auditor_letter.pdf").read_bytes()
    result = extract(data, "letter.pdf", ocr=NO_OCR)
    assert len(result.pages) == 6 and result.ocr_pages == ()
    assert result.warnings[0].startswith("6 of 6 pages have no usable text layer")
    assert "OCR is off" in result.warnings[0]
    assert "审计" in result.text or "财务" in result.text


def test_long_book_extracts_whole_with_ligatures_expanded() -> None:
    # its speed is benchmarks/import.py's; a timed test here failed on a busy machine
    data = corpus("pdf/book_free_culture_lessig_352p.pdf").read_bytes()
    result = extract(data, "free_culture.pdf", ocr=NO_OCR)  # its cover page is an image
    assert len(result.pages) == 352 and result.title == "Free Culture"
    assert "ﬁ" not in result.text and "first" in result.text


def test_cp1252_html_decodes_the_euro_sign_and_accents() -> None:
    data = corpus("web_text/html_cp1252_encoded.html").read_bytes()
    text = extract(data, "fake.html").text
    assert "15,50 €" in text and "schöne" in text and "très" in text and "niño" in text


def test_txt_that_is_really_html_is_read_as_html() -> None:
    data = corpus("web_text/txt_actually_html_wikipedia_bates.txt").read_bytes()
    result = extract(data, "bates.txt")
    assert result.kind == "html" and detect_kind(data, "bates.txt") == "html"
    assert "<" not in result.text and "class=" not in result.text
    assert "Frederick Bates" in result.text and result.title.startswith("Frederick Bates")


def test_inline_xbrl_html_has_no_ix_markup_in_its_text() -> None:
    data = corpus("web_text/html_sec_10k_excerpt_ixbrl.html").read_bytes()
    text = extract(data, "10k.html").text
    assert "ix:" not in text and "<" not in text
    assert "Galaxy Gaming, Inc." in text and "000-30653" in text


def test_chinese_markdown_keeps_its_chinese_text() -> None:
    data = corpus("web_text/md_zh_distributed_training_notes.md").read_bytes()
    result = extract(data, "notes.md")
    assert result.kind == "md" and result.title == "分布式训练技术原理"
    assert "数据并行" in result.text


def test_epub_chapters_follow_the_spine_and_title_comes_from_the_opf() -> None:
    data = corpus("office/epub_winter_sports.epub").read_bytes()
    result = extract(data, "winter.epub")
    assert result.title == "Winter Sports in Switzerland"
    assert result.text.startswith("The Project Gutenberg eBook of Winter Sports")


# ---------------------------------------------------------------- PDF (built here)


def test_pdf_has_one_page_range_per_page_and_empty_pages_keep_their_number() -> None:
    data = make_pdf("First page text.", "", "Third page text.")
    result = extract(data, "three.pdf")
    assert [p.number for p in result.pages] == [1, 2, 3]
    assert result.pages[1].start == result.pages[1].end
    doc = pymupdf.open(stream=data, filetype="pdf")
    for page, pdf_page in zip(result.pages, doc, strict=True):
        assert result.text[page.start : page.end] == pdf_page_text(pdf_page)
    assert_well_formed(result)


def test_encrypted_pdf_opens_with_its_password_and_names_a_wrong_one() -> None:
    doc = pymupdf.open(stream=make_pdf("Secret minutes."), filetype="pdf")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="s3cret", owner_pw="own")
    with pytest.raises(PasswordRequired, match=r"report\.pdf is password-protected"):
        extract(data, "report.pdf")
    with pytest.raises(PasswordRequired, match=r"password for report\.pdf is wrong"):
        extract(data, "report.pdf", password="guess")
    assert extract(data, "report.pdf", password="s3cret").text == "Secret minutes."


def test_truncated_pdf_is_unreadable_not_a_traceback() -> None:
    data = make_pdf("Some text that will be cut off.")
    with pytest.raises(UnreadableFile, match=r"cut\.pdf is damaged"):
        extract(data[: len(data) // 3], "cut.pdf")


def test_image_only_pdf_without_anything_to_read_has_no_text() -> None:
    doc = pymupdf.open()
    add_full_page_image(doc.new_page())
    with pytest.raises(NoTextLayer, match=r"scan\.pdf has no text"):
        extract(doc.tobytes(), "scan.pdf")


def test_pdf_with_some_image_only_pages_imports_with_a_warning() -> None:
    doc = pymupdf.open(
        stream=make_pdf("Page one has words.", "", "Page three too."), filetype="pdf"
    )
    add_full_page_image(doc[1])
    result = extract(doc.tobytes(), "mixed.pdf", ocr=NO_OCR)
    assert result.warnings[0].startswith("1 of 3 pages have no usable text layer")
    assert "Page three too." in result.text


def test_pdf_with_leading_junk_before_the_header_still_reads() -> None:
    result = extract(b"junk\n" * 20 + make_pdf("Hello after junk."), "junk.pdf")
    assert result.kind == "pdf" and result.text == "Hello after junk."


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Annual Report 2023", "Annual Report 2023"),
        ("Microsoft Word - report.doc", None),
        ("untitled", None),
        ("scan0001.jpg (JPEG Image, 585 × 890 pixels)", None),
        ("  ", None),
    ],
)
def test_pdf_title_comes_from_metadata_unless_it_is_junk(title: str, expected: str | None) -> None:
    assert extract(make_pdf("Body text."), "x.pdf").title is None
    assert extract(make_pdf("Body text.", title=title), "x.pdf").title == expected


def test_too_many_pages_is_too_large() -> None:
    with pytest.raises(FileTooLarge, match="3 pages"):
        extract(make_pdf("a", "b", "c"), "long.pdf", max_pages=2)


def test_text_over_the_character_limit_is_too_large() -> None:
    with pytest.raises(FileTooLarge):
        extract(make_pdf("x" * 80), "x.pdf", max_chars=50)
    with pytest.raises(FileTooLarge):
        extract(b"word " * 100, "x.txt", max_chars=50)


# ---------------------------------------------------------------- DOCX and PPTX (built here)


def docx_bytes(document: docx.document.Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_table_cells_come_in_reading_order() -> None:
    document = docx.Document()
    document.add_paragraph("Before the table.")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "A1", (0, 1): "B1", (1, 0): "A2", (1, 1): "B2"}.items():
        table.cell(row, col).text = text
    document.add_paragraph("After the table.")
    result = extract(docx_bytes(document), "memo.docx")
    assert result.kind == "docx" and result.pages == ()
    assert result.text == "Before the table.\n\nA1 | B1\nA2 | B2\n\nAfter the table."


def test_docx_merged_and_nested_cells_are_not_duplicated() -> None:
    document = docx.Document()
    table = document.add_table(rows=3, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Wide"
    table.cell(1, 0).merge(table.cell(2, 0)).text = "Tall"
    table.cell(1, 1).text = "x"
    inner = table.cell(2, 2).add_table(rows=1, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text = "in1", "in2"
    text = extract(docx_bytes(document), "t.docx").text
    assert text.count("Wide") == 1 and text.count("Tall") == 1
    assert text.index("Wide") < text.index("Tall") < text.index("x") < text.index("in1 | in2")


def test_docx_title_comes_from_core_properties() -> None:
    document = docx.Document()
    document.add_paragraph("Body.")
    document.core_properties.title = "Quarterly Plan"
    assert extract(docx_bytes(document), "plan.docx").title == "Quarterly Plan"


def test_pptx_has_one_page_per_slide_with_text_tables_groups_and_notes() -> None:
    presentation = pptx.Presentation()
    blank = presentation.slide_layouts[6]
    first = presentation.slides.add_slide(blank)
    first.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Hello"
    group = first.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1)).text_frame.text = "Grouped"
    table = first.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Q1", "Q2"
    table.cell(1, 0).text, table.cell(1, 1).text = "10", "20"
    first.notes_slide.notes_text_frame.text = "Say hello warmly."
    presentation.slides.add_slide(blank)  # empty slide keeps its number
    third = presentation.slides.add_slide(blank)
    third.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Bye"
    buffer = io.BytesIO()
    presentation.save(buffer)
    result = extract(buffer.getvalue(), "deck.pptx")
    assert result.kind == "pptx" and [p.number for p in result.pages] == [1, 2, 3]
    slide1 = result.text[result.pages[0].start : result.pages[0].end]
    assert slide1 == "Hello\n\nGrouped\n\nQ1 | Q2\n10 | 20\n\nNotes:\nSay hello warmly."
    assert result.pages[1].start == result.pages[1].end
    assert result.text[result.pages[2].start : result.pages[2].end] == "Bye"
    assert_well_formed(result)


def test_damaged_docx_is_unreadable() -> None:
    document = docx.Document()
    document.add_paragraph("Hello")
    data = docx_bytes(document)
    with pytest.raises(UnreadableFile, match=r"broken\.docx is damaged"):
        extract(data[: len(data) // 2], "broken.docx")


def test_macro_enabled_word_file_is_unsupported_with_a_hint_to_resave() -> None:
    document = docx.Document()
    document.add_paragraph("Hello")
    source = zipfile.ZipFile(io.BytesIO(docx_bytes(document)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "[Content_Types].xml":
                data = data.replace(
                    b"officedocument.wordprocessingml.document.main+xml",
                    b"ms-word.document.macroEnabled.main+xml",
                )
            target.writestr(info, data)
    with pytest.raises(UnsupportedFile, match=r"macro\.docm .*regular \.docx"):
        extract(buffer.getvalue(), "macro.docm")


def test_zip_members_that_unpack_beyond_the_limit_are_too_large() -> None:
    document = docx.Document()
    document.add_paragraph("word " * 2000)
    with pytest.raises(FileTooLarge, match="unpacks to more than"):
        extract(docx_bytes(document), "big.docx", max_chars=1000)


# ---------------------------------------------------------------- EPUB (built here)


def make_epub(chapters: dict[str, str], spine: list[str], title: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        items = "".join(
            f'<item id="{key}" href="{key}.xhtml" media-type="application/xhtml+xml"/>'
            for key in chapters
        )
        refs = "".join(f'<itemref idref="{key}"/>' for key in spine)
        zf.writestr(
            "OPS/book.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>{title}</dc:title></metadata><manifest>{items}</manifest>"
            f"<spine>{refs}</spine></package>",
        )
        for key, body in chapters.items():
            zf.writestr(
                f"OPS/{key}.xhtml",
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title/></head><body>{body}</body></html>",
            )
    return buffer.getvalue()


def test_epub_has_one_page_per_spine_chapter_with_text() -> None:
    chapters = {"c1": "<h1>One</h1><p>First.</p>", "cover": "<img/>", "c2": "<p>Second.</p>"}
    data = make_epub(chapters, ["cover", "c2", "c1"], "A Small Book")
    result = extract(data, "small.epub")
    assert result.kind == "epub" and result.title == "A Small Book"
    assert result.text == "Second.\n\nOne\n\nFirst."
    assert [(p.number, p.start, p.end) for p in result.pages] == [(1, 0, 7), (2, 9, 20)]


def test_epub_without_a_readable_opf_is_damaged() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", "<container><rootfiles></rootfiles></container>")
    with pytest.raises(UnreadableFile, match=r"book\.epub is damaged"):
        extract(buffer.getvalue(), "book.epub")


# ---------------------------------------------------------------- HTML


def html_text(markup: str) -> str:
    return extract(markup.encode(), "page.html").text


def html_text_bytes(data: bytes) -> str:
    return extract(data, "page.html").text


def test_html_keeps_visible_text_only() -> None:
    markup = (
        "<html><head><title>T</title><style>p{}</style><script>var x = 1;</script></head><body>"
        "<nav>Menu</nav><p>Shown</p><noscript>enable js</noscript><template>tpl</template>"
        '<div style="display: none">hidden</div><p hidden>also hidden</p><svg><text>s</text></svg>'
        "</body></html>"
    )
    assert html_text(markup) == "Shown"


def test_html_blocks_break_lines_and_inline_elements_do_not() -> None:
    markup = "<body><h1>Title</h1><p>Some <b>bold</b>ly <a href='#'>linked</a>\n  words</p>"
    markup += "<ul><li>one</li><li>two</li></ul>line<br>break</body>"
    assert html_text(markup) == "Title\n\nSome boldly linked words\n\none\ntwo\n\nline\nbreak"


def test_html_table_cells_are_separated_and_rows_are_lines() -> None:
    markup = "<table><tr><th>Name</th><th></th><th>Age</th></tr><tr><td>Ann</td><td>31</td></tr>"
    assert html_text(markup + "</table>") == "Name | Age\nAnn | 31"


def test_html_pre_keeps_its_line_breaks() -> None:
    assert html_text("<p>Code:</p><pre>a = 1\n    b = 2</pre>") == "Code:\n\na = 1\n    b = 2"


def test_html_title_comes_from_the_title_element_then_the_first_h1() -> None:
    assert extract(b"<html><title>Page  Name</title><p>x</p>", "a.html").title == "Page Name"
    assert extract(b"<html><body><h1>Heading</h1><p>x</p>", "a.html").title == "Heading"


def test_html_declared_charset_is_used() -> None:
    markup = '<html><head><meta charset="windows-1251"></head><body><p>Привет, мир</p>'
    assert html_text_bytes(markup.encode("cp1251")) == "Привет, мир"


@pytest.mark.parametrize("prolog", ['<?xml version="1.0" encoding="utf-8"?>\n', ""])
def test_inline_xbrl_keeps_fact_values_and_drops_the_hidden_header(prolog: str) -> None:
    markup = (
        f'{prolog}<html xmlns="http://www.w3.org/1999/xhtml" '
        'xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"><body>'
        "<ix:header><ix:hidden><ix:nonNumeric name='dei:X'>secret</ix:nonNumeric></ix:hidden>"
        "</ix:header><p>Revenue was <ix:nonFraction name='us-gaap:Revenues' decimals='0'>"
        "1,234</ix:nonFraction> dollars.</p></body></html>"
    )
    assert html_text(markup) == "Revenue was 1,234 dollars."


def test_html_with_an_xml_prolog_is_html_even_as_txt() -> None:
    data = b'<?xml version="1.0" encoding="utf-8"?>\n<html><body><p>Filed</p></body></html>'
    assert detect_kind(data, "filing.txt") == "html"
    assert extract(data, "filing.txt").text == "Filed"


# ---------------------------------------------------------------- text, markdown, cleaning


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_text_with_a_bom_decodes(encoding: str) -> None:
    text = "Grüße, 世界 — naïve café"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    result = extract(data, "notes.txt")
    assert result.kind == "txt" and result.text == text


def test_undecodable_bytes_never_crash_and_are_reported() -> None:
    result = extract("Caf\xe9 cr\xe8me br\xfbl\xe9e and more words".encode("cp1252"), "menu.txt")
    assert result.text == "Café crème brûlée and more words"
    assert "encoding" in result.warnings[0]


def test_canonical_text_cleaning() -> None:
    raw = "a\r\nb\rc\x00d\x07e\u00a0f   \n\n\n\n\ng\t \n  e\u0301  "
    assert clean_text(raw) == "a\nb\ncde f\n\ng\n  é"


def test_text_file_is_cleaned_into_canonical_text() -> None:
    result = extract(b"  Line one  \r\n\r\n\r\n\r\nLine two\x00\r\n", "a.txt")
    assert result.text == "Line one\n\nLine two" and result.title is None


def test_markdown_stays_as_its_text_with_the_first_heading_as_title() -> None:
    source = "```\n# not a title\n```\n# Real *Title*\n\nSome **bold** text."
    result = extract(source.encode(), "doc.md")
    assert result.kind == "md" and result.text == source and result.title == "Real *Title*"


# ---------------------------------------------------------------- detection


def test_kind_is_detected_by_content_before_extension() -> None:
    document = docx.Document()
    document.add_paragraph("x")
    assert detect_kind(make_pdf("x"), "report.txt") == "pdf"
    assert detect_kind(docx_bytes(document), "download.bin") == "docx"
    assert detect_kind(b"# Title\n\ntext", "notes.markdown") == "md"
    assert detect_kind(b"plain words", "readme") == "txt"
    assert detect_kind(b"<!DOCTYPE html><p>x", "page.md") == "html"


def test_legacy_office_file_is_unsupported_with_a_hint_to_resave() -> None:
    ole2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    with pytest.raises(UnsupportedFile, match=r"old\.doc .*Save it as \.docx"):
        extract(ole2, "old.doc")


def test_binary_file_is_unsupported_and_lists_the_supported_formats() -> None:
    with pytest.raises(UnsupportedFile, match=r"data\.bin is not a format.*PDF"):
        extract(bytes(range(256)) * 8, "data.bin")
    with pytest.raises(UnreadableFile, match="damaged or truncated image"):
        extract(b"\x89PNG\r\n\x1a\n" + bytes(100), "photo.png")


def test_zip_without_a_document_is_unsupported() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(UnsupportedFile, match="ZIP archive"):
        extract(buffer.getvalue(), "bundle.zip")


def test_empty_file_is_unreadable() -> None:
    with pytest.raises(UnreadableFile, match=r"^notes\.txt is empty \(0 bytes\)"):
        extract(b"", "/some/folder/notes.txt")


def test_whitespace_only_file_has_no_text() -> None:
    with pytest.raises(NoTextLayer, match=r"blank\.txt contains no text"):
        extract(b" \n\t\r\n ", "blank.txt")


# ---------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_as_txt_only_ever_raise_knownote_errors(data: bytes) -> None:
    try:
        result = extract(data, "random.txt")
    except KnowNoteError:
        return
    assert_well_formed(result)
    assert clean_text(result.text) == result.text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_any_text_inside_html_extracts_cleanly(body: str) -> None:
    data = ("<html><body><p>" + body).encode("utf-8", errors="surrogatepass")
    try:
        result = extract(data, "page.html")
    except KnowNoteError:
        return
    assert "\r" not in result.text and "\x00" not in result.text


@given(st.text())
def test_cleaning_is_idempotent(text: str) -> None:
    once = clean_text(text)
    assert clean_text(once) == once
    assert "\n\n\n" not in once and "\r" not in once
