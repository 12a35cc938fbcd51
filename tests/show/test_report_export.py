"""A report's exports keep every citation: read back by the library that wrote them and by a
second reader (mammoth for Word, pypdf for PDF), each note's range resolves to the source's
stored text and to the quote the note shows.

The reports are made from real stored documents (a Wikipedia page in Markdown, the first pages
of the free-culture book, Chinese notes in Markdown), each cite a passage's `text[start:end]`.
"""

from __future__ import annotations

import html
import logging
import re
import shutil
import subprocess
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import docx
import mammoth
import pymupdf
import pypdf
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from lxml import etree

from knownote.answer.ranges import SpanLinks
from knownote.answer.report import Report, ReportCite, ReportLine
from knownote.answer.support import NO_CLOSE_MATCH
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.show.report_export import (
    STALE,
    note_where,
    pieces,
    report_docx,
    report_markdown,
    report_pdf,
    shown_range,
)
from knownote.store.db import Store
from tests.conftest import corpus_file

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
APP = "http://127.0.0.1:8501"
HOSTILE = 'Tom & Jerry <script>alert("x")</script> *bold* [a](javascript:x) \x00\x0b'
CHARS = re.compile(r"chars ([\d,]+)–([\d,]+)")
FOOTER = re.compile(r"^\d+ / \d+$", re.M)
MAMMOTH_STYLES = "p[style-name='Title'] => h1:fresh\np[style-name='Quote'] => blockquote > p:fresh"


def flat(text: str) -> str:
    """Text without its whitespace: where a layout breaks lines is not part of a quote."""
    return re.sub(r"\s+", "", text)


def import_bytes(store, notebook, settings, embedder, name: str, data: bytes) -> int:
    result = import_file(store, notebook, name, data, settings=settings, embedder=embedder)
    assert result.status == "imported", result.error
    return result.document_id


@pytest.fixture(scope="module")
def sources(tmp_path_factory, embedder):
    """(store, notebook id, {name: document id}) of real documents; tests only read it."""
    settings = Settings().with_(home=tmp_path_factory.mktemp("reports"))
    store = Store.open(settings.db_path)
    notebook = store.create_notebook("Reports", embedder.name, embedder.dim)
    with pymupdf.open(corpus_file("docs/pdf/book_free_culture_lessig_352p.pdf")) as book:
        book.select(list(range(10, 14)))  # the preface: pages of running text
        pages = book.tobytes()
    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    zh = corpus_file("docs/web_text/md_zh_distributed_training_notes.md")
    ids = {
        "book": import_bytes(store, notebook, settings, embedder, "free_culture.pdf", pages),
        "gravity": import_bytes(
            store, notebook, settings, embedder, gravity.name, gravity.read_bytes()
        ),
        "zh": import_bytes(store, notebook, settings, embedder, zh.name, zh.read_bytes()),
    }
    yield store, notebook.id, ids
    store.close()


def cite_of(store, n: int, document_id: int, index: int, span: bool = False, stale=False):
    """The `index`th passage of a stored document as mark n, optionally with its first
    sentence (or line) as the support span."""
    passage = store.passages(document_id)[index]
    text = store.document_text(document_id)
    found = None
    if span:
        ends = [i for i in range(passage.start + 20, passage.end - 1) if text[i] in ".。\n"]
        found = (passage.start + 1, ends[0] + 1 if ends else (passage.start + passage.end) // 2)
    return ReportCite(
        n,
        document_id,
        store.document(document_id).title,
        passage.start,
        passage.end,
        text[passage.start : passage.end],
        page=passage.page_start,
        span=found,
        stale=stale,
    )


def english_report(store, ids) -> Report:
    cites = (
        cite_of(store, 1, ids["gravity"], 0),
        cite_of(store, 2, ids["gravity"], 1, span=True),
        cite_of(store, 3, ids["book"], 0),
        cite_of(store, 4, ids["book"], 2, span=True),
        cite_of(store, 5, ids["book"], 3, stale=True),
    )
    lines = (
        ReportLine("What the sources say", "heading"),
        ReportLine("Gravity hills look uphill [1] yet slope down [2].", cites=(1, 2)),
        ReportLine("Culture is built on the past [3].", cites=(3,), unsupported=True),
        ReportLine("Key terms", "heading"),
        ReportLine("A place where a road seems to climb. [1]", "item", (1,), label="gravity hill"),
        ReportLine("The book appears. [4]", "item", (4,), label="Free Culture", date="2004"),
        ReportLine("A quoted line [5]", "quote", (5,)),
        ReportLine(f"{HOSTILE} [99] [2]", cites=(2,)),
    )
    return Report(
        "briefing", 'Gravity & <culture> "report"', 1, lines, cites, model="m", written=6, kept=5
    )


def chinese_report(store, ids) -> Report:
    cites = (cite_of(store, 1, ids["zh"], 0), cite_of(store, 2, ids["zh"], 2, span=True))
    lines = (
        ReportLine("分布式训练", "heading"),
        ReportLine("数据并行把数据分到多张卡上[1]。每张卡保存完整的模型[2]。", cites=(1, 2)),
        ReportLine("模型并行[2]", "item", (2,), label="术语"),
    )
    return Report("study-guide", "分布式训练 学习指南", 1, lines, cites, model="m", written=3)


def marks(report: Report) -> list[ReportCite]:
    """The cites of the report's marks, in reading order (one Word footnote each)."""
    known = {c.n for c in report.cites}
    return [report.cite(p) for x in report.lines for p in pieces(x, known) if isinstance(p, int)]


def link_range(url: str) -> tuple[int, int, int]:
    """(document, start, end) of an app link."""
    query = parse_qs(urlsplit(url).query)
    return int(query["source"][0]), int(query["start"][0]), int(query["end"][0])


def expected_links(report: Report, links: SpanLinks) -> set[str]:
    return {links.link(c.document_id, *shown_range(c)[:2]) for c in report.cites if not c.stale}


@pytest.mark.parametrize(
    ("text", "cites", "expected"),
    [
        ("a [1] b [2].", (1, 2), ["a ", 1, " b ", 2, "."]),
        ("[1][2]", (1, 2), [1, 2]),
        ("quoted [12] then [1]", (1,), ["quoted [12] then ", 1]),
        ("not cited [3]", (1,), ["not cited [3]"]),
        ("unknown to the report [7]", (7,), ["unknown to the report [7]"]),
        ("数据并行[1]。", (1,), ["数据并行", 1, "。"]),
        ("", (), []),
    ],
)
def test_a_line_splits_into_text_and_its_own_marks(text, cites, expected):
    assert list(pieces(ReportLine(text, cites=cites), {1, 2, 3, 12})) == expected


def test_a_note_says_page_or_time_and_the_range_it_quotes():
    quote = "0123456789abcdefghij"
    talk = ReportCite(1, 4, "Talk", 100, 120, quote, seconds=(62.0, 75.5), span=(105, 110))
    assert note_where(talk) == "Talk, 1:02–1:15, chars 105–110 (in the passage at chars 100–120)"
    assert shown_range(talk) == (105, 110, "56789")
    book = ReportCite(2, 4, "Book", 1000, 1020, quote, page=4, span=(990, 1010))
    assert note_where(book) == "Book, p. 4, chars 1,000–1,020"  # a span outside: the passage
    assert shown_range(book) == (1000, 1020, quote)


# ---- Markdown --------------------------------------------------------------------------------


def test_markdown_footnotes_give_range_quote_and_link(sources):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    out = report_markdown(report, links)
    body, _, notes = out.partition("\n## Notes\n")
    assert "[^1]" in body and "[^2]" in body and "[^99]" not in body
    assert "\\[99\\]" in body  # a bracketed number the line does not cite stays text
    assert "<script>" not in out and "\\<script\\>" in out
    assert f"*({NO_CLOSE_MATCH})*" in body
    assert "**2004 — Free Culture\\:**" in body and "**gravity hill\\:**" in body
    assert "\n- A place" not in body  # items carry their term
    for c in report.cites:
        start, end, _ = shown_range(c)
        head = next(x for x in notes.splitlines() if x.startswith(f"[^{c.n}]: "))
        assert f"chars {start:,}–{end:,}" in head
        if c.stale:
            assert STALE in head and "open in KnowNote" not in head
        else:
            assert f"(<{links.link(c.document_id, start, end)}>)" in head
        text = store.document_text(c.document_id)
        shown = notes.split(head, 1)[1].split("\n[^", 1)[0]
        said = " ".join(re.sub(r"^ {4}> ?", "", x) for x in shown.splitlines() if x.strip())
        assert " ".join(re.sub(r"\\(.)", r"\1", said).split()) == " ".join(text[start:end].split())
    assert "open in KnowNote" not in report_markdown(report)


# ---- Word ------------------------------------------------------------------------------------


def paragraph_text(p) -> str:
    out = []
    for x in p.iter(f"{W}t", f"{W}tab", f"{W}br"):
        out.append(x.text or "" if x.tag == f"{W}t" else "\t" if x.tag == f"{W}tab" else "\n")
    return "".join(out)


def word_notes(path: Path) -> list[dict]:
    """Each footnote read back with python-docx: its id, its first line, its link, its quote."""
    document = docx.Document(str(path))
    part = document.part.part_related_by(RT.FOOTNOTES)
    root = etree.fromstring(part.blob)
    notes = root.findall(f"{W}footnote")
    assert [(n.get(f"{W}id"), n.get(f"{W}type")) for n in notes[:2]] == [
        ("-1", "separator"),
        ("0", "continuationSeparator"),
    ]
    out = []
    for note in notes[2:]:
        head, quote = note.findall(f"{W}p")
        assert head.find(f".//{W}footnoteRef") is not None
        hyperlink = head.find(f"{W}hyperlink")
        link = None
        if hyperlink is not None:
            rel = part.rels[hyperlink.get(R_ID)]
            assert rel.is_external and rel.reltype == RT.HYPERLINK
            link = rel.target_ref
        out.append(
            {
                "id": int(note.get(f"{W}id")),
                "head": paragraph_text(head),
                "link": link,
                "quote": paragraph_text(quote),
            }
        )
    return out


def test_word_footnotes_read_back_with_python_docx(sources, tmp_path):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    path = tmp_path / "report.docx"
    report_docx(report, path, links)

    document = docx.Document(str(path))
    assert document.core_properties.title == report.title
    body = document.element.body
    refs = [int(r.get(f"{W}id")) for r in body.iter(f"{W}footnoteReference")]
    notes = word_notes(path)
    assert refs == [n["id"] for n in notes] == list(range(1, len(marks(report)) + 1))
    settings = document.settings.element.find(f"{W}footnotePr")
    assert [x.get(f"{W}id") for x in settings] == ["-1", "0"]
    styles = [p.style.name for p in document.paragraphs]
    assert styles.count("Heading 1") == 2 and styles.count("List Bullet") == 2
    assert "Quote" in styles and styles[0] == "Title"
    assert any(NO_CLOSE_MATCH in p.text for p in document.paragraphs)

    for note, cite in zip(notes, marks(report), strict=True):
        start, end = (int(x.replace(",", "")) for x in CHARS.search(note["head"]).groups())
        assert (start, end) == shown_range(cite)[:2]
        assert note["head"].startswith(f" [{cite.n}] {cite.title}")
        text = store.document_text(cite.document_id)
        assert note["quote"] == text[start:end]  # exactly, tabs and line breaks included
        if cite.stale:
            assert STALE in note["head"] and note["link"] is None
        else:
            assert link_range(note["link"]) == (cite.document_id, start, end)


def test_word_footnotes_read_back_with_mammoth(sources, tmp_path):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    path = tmp_path / "report.docx"
    report_docx(report, path, links)
    with path.open("rb") as f:
        result = mammoth.convert_to_html(f, style_map=MAMMOTH_STYLES)
    assert result.messages == []  # nothing it could not read
    page = result.value
    notes = re.findall(r'<li id="footnote-(\d+)">(.*?)</li>', page, re.S)
    assert [int(n) for n, _ in notes] == list(range(1, len(marks(report)) + 1))
    for (_, note), cite in zip(notes, marks(report), strict=True):
        start, end, _ = shown_range(cite)
        text = html.unescape(re.sub(r"<[^>]+>", "", note))
        assert f"chars {start:,}–{end:,}" in text
        assert flat(store.document_text(cite.document_id)[start:end]) in flat(text)
        hrefs = [html.unescape(h) for h in re.findall(r'href="(http[^"]+)"', note)]
        assert hrefs == ([] if cite.stale else [links.link(cite.document_id, start, end)])
    assert "<h1>What the sources say</h1>" in page and "<blockquote>" in page


def test_word_without_links_or_marks(sources, tmp_path):
    store, _, ids = sources
    report = english_report(store, ids)
    path = tmp_path / "plain.docx"
    report_docx(report, path)
    assert all(n["link"] is None for n in word_notes(path))
    bare = Report("faq", "No marks", 1, (ReportLine("Nothing cited."),), ())
    report_docx(bare, tmp_path / "bare.docx")
    document = docx.Document(str(tmp_path / "bare.docx"))
    assert RT.FOOTNOTES not in {r.reltype for r in document.part.rels.values()}


# ---- PDF -------------------------------------------------------------------------------------


def pdf_text(pages: list[str]) -> str:
    """The pages' text without the page-number footers, whitespace dropped."""
    return flat("".join(FOOTER.sub("", page) for page in pages))


def test_pdf_reads_back_with_pymupdf(sources, tmp_path):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    path = tmp_path / "report.pdf"
    report_pdf(report, path, links)

    with pymupdf.open(path) as document:
        assert document.metadata["title"] == report.title
        text = pdf_text([page.get_text() for page in document])
        found = [link for page in document for link in page.get_links()]
    uris = [x["uri"] for x in found if x["kind"] == pymupdf.LINK_URI]
    assert sorted(uris) == sorted(expected_links(report, links))  # one annotation each
    jumps = [x for x in found if x["kind"] == pymupdf.LINK_GOTO]
    assert len(jumps) == len(marks(report))
    for uri in uris:
        document_id, start, end = link_range(uri)
        assert flat(store.document_text(document_id)[start:end]) in text
    for cite in report.cites:
        assert flat(shown_range(cite)[2]) in text
    assert flat(HOSTILE[: HOSTILE.index("\x00")]) in text
    assert flat(NO_CLOSE_MATCH) in text and flat(STALE) in text
    assert "ﬁ" not in text and "ﬂ" not in text  # ligatures read back as their letters


def test_pdf_reads_back_with_pypdf(sources, tmp_path, caplog):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    path = tmp_path / "report.pdf"
    report_pdf(report, path, links)
    with caplog.at_level(logging.WARNING, logger="pypdf"), warnings.catch_warnings():
        warnings.simplefilter("error")
        reader = pypdf.PdfReader(path, strict=True)
        assert reader.metadata.title == report.title
        text = pdf_text([page.extract_text() for page in reader.pages])
        annots = [a.get_object() for page in reader.pages for a in page.get("/Annots") or []]
    assert [r.getMessage() for r in caplog.records if r.name.startswith("pypdf")] == []
    assert all(a["/Subtype"] == "/Link" for a in annots)
    uris = [a["/A"]["/URI"] for a in annots if "/A" in a and a["/A"].get("/S") == "/URI"]
    assert sorted(uris) == sorted(expected_links(report, links))
    for uri in uris:
        document_id, start, end = link_range(uri)
        assert flat(store.document_text(document_id)[start:end]) in text


# ---- Chinese ---------------------------------------------------------------------------------


def test_a_chinese_report_keeps_its_glyphs_and_ranges(sources, tmp_path):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = chinese_report(store, ids)
    report_pdf(report, tmp_path / "zh.pdf", links)
    report_docx(report, tmp_path / "zh.docx", links)

    with pymupdf.open(tmp_path / "zh.pdf") as document:
        assert document.metadata["title"] == report.title
        text = pdf_text([page.get_text() for page in document])
        traces = [span for page in document for span in page.get_texttrace()]
    assert flat("数据并行把数据分到多张卡上[1]。") in text
    for cite in report.cites:
        assert flat(shown_range(cite)[2]) in text
    cjk = [
        (span["font"], glyph)
        for span in traces
        for char, glyph, *_ in span["chars"]
        if "\u4e00" <= chr(char) <= "\u9fff"
    ]
    assert len(cjk) > 100
    assert all(glyph > 0 for _, glyph in cjk)  # no missing-glyph boxes
    assert all("Droid Sans Fallback" in font for font, _ in cjk)  # the CJK font in the wheel

    reader = pypdf.PdfReader(tmp_path / "zh.pdf")
    second = pdf_text([page.extract_text() for page in reader.pages])
    for cite in report.cites:
        assert flat(shown_range(cite)[2]) in second

    for note, cite in zip(word_notes(tmp_path / "zh.docx"), marks(report), strict=True):
        start, end, _ = shown_range(cite)
        assert note["quote"] == store.document_text(cite.document_id)[start:end]
        assert link_range(note["link"]) == (cite.document_id, start, end)
    assert "数据并行把数据分到多张卡上[^1]。" in report_markdown(report, links)


# ---- LibreOffice -----------------------------------------------------------------------------


@pytest.mark.skipif(
    shutil.which("soffice") is None, reason="needs LibreOffice (Debian libreoffice-writer-nogui)"
)
def test_libreoffice_opens_the_word_file_with_its_footnotes_and_links(sources, tmp_path):
    store, notebook_id, ids = sources
    links = SpanLinks(APP, notebook_id)
    report = english_report(store, ids)
    path = tmp_path / "report.docx"
    report_docx(report, path, links)
    run = subprocess.run(
        [
            "soffice",
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path / "out"),
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    with pymupdf.open(tmp_path / "out" / "report.pdf") as document:
        text = flat("".join(page.get_text() for page in document))
        uris = [x["uri"] for p in document for x in p.get_links() if x["kind"] == pymupdf.LINK_URI]
    assert set(uris) == expected_links(report, links)
    for cite in marks(report):
        start, end, quote = shown_range(cite)
        assert flat(f"[{cite.n}] {cite.title}, ") in text
        assert flat(f"chars {start:,}–{end:,}") in text
        # a long note may go on at the foot of the next page: its ends, each whole
        assert flat(quote[:60]) in text and flat(quote[-60:]) in text


def test_pdf_characters_beyond_the_bmp_read_back_in_both_readers(tmp_path, caplog):
    line = "math 𝑥 + 𝔸, arrows 🠿 ❚❘❙, 重力"  # fallback fonts: math, symbols, CJK
    report_pdf(Report("faq", "Symbols", 1, (ReportLine(line),), ()), tmp_path / "s.pdf")
    with pymupdf.open(tmp_path / "s.pdf") as document:
        assert line in document[0].get_text()
    with caplog.at_level(logging.WARNING, logger="pypdf"):
        reader = pypdf.PdfReader(tmp_path / "s.pdf", strict=True)
        assert line in reader.pages[0].extract_text()
    assert [r.getMessage() for r in caplog.records if r.name.startswith("pypdf")] == []


def test_a_paragraphs_later_sentences_go_on_it_in_every_export(sources, tmp_path):
    store, _, ids = sources
    cites = (cite_of(store, 1, ids["zh"], 0), cite_of(store, 2, ids["zh"], 2))
    lines = (
        ReportLine("数据并行把数据分到多张卡上[1]。", cites=(1,)),
        ReportLine("每张卡保存完整的模型[2]。", cites=(2,), continues=True),
        ReportLine("另一段落[1]。", cites=(1,)),
        ReportLine("术语一[1]", "item", (1,)),
        ReportLine("它的第二句[2]。", "item", (2,), continues=True),
    )
    report = Report("briefing", "段落", 1, lines, cites, model="m", written=5, kept=5)
    body = report_markdown(report).split("## Notes")[0]
    assert "数据并行把数据分到多张卡上[^1]。 每张卡保存完整的模型[^2]。\n\n另一段落" in body
    assert "- 术语一[^1] 它的第二句[^2]。\n" in body
    report_docx(report, tmp_path / "r.docx")
    texts = [p.text for p in docx.Document(str(tmp_path / "r.docx")).paragraphs]
    assert "数据并行把数据分到多张卡上。 每张卡保存完整的模型。" in texts
    assert "术语一 它的第二句。" in texts and "另一段落。" in texts
    report_pdf(report, tmp_path / "r.pdf")
    with pymupdf.open(tmp_path / "r.pdf") as pdf:
        shown = flat("".join(page.get_text() for page in pdf))
    assert flat("数据并行把数据分到多张卡上[1]。 每张卡保存完整的模型[2]。") in shown
