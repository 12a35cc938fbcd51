"""Offsets -> glyphs -> highlighted page images, checked against what PyMuPDF itself extracts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knownote.errors import KnowNoteError, NotFound, PageMismatch, PasswordRequired
from knownote.index.split import split
from knownote.pipeline.ingest import import_file
from knownote.read.extract import PDF_TEXT_FLAGS, clean_text, extract, pdf_page_text
from knownote.show import pdf_page
from knownote.show.pdf_page import page_glyphs, passage_pages, render_page
from tests.conftest import corpus_file

PDFS = [
    ("docs/pdf/paper_dpr_2004.04906_2col.pdf", None),
    ("docs/pdf/paper_tracemonkey_pldi09_2col.pdf", None),
    ("docs/pdf/gov_federal_register_3col.pdf", None),
    ("docs/pdf/cjk_ja_miyazawa_preface_vertical.pdf", None),
    ("docs/pdf/cjk_ja_official_gazette_vertical.pdf", None),
    ("docs/pdf/cjk_zh_textbook_credits.pdf", None),
    ("docs/pdf/cjk_ko_card_terms_tables.pdf", None),
    ("docs/pdf/enc_password_test_4p.pdf", "test"),
]


def open_pdf(path: Path, password: str | None = None) -> pymupdf.Document:
    doc = pymupdf.open(path)
    if password:
        assert doc.authenticate(password)
    return doc


def rotated_copy(tmp_path: Path, relative: str, page_index: int, rotation: int) -> Path:
    doc = pymupdf.open(corpus_file(relative))
    doc[page_index].set_rotation(rotation)
    target = tmp_path / f"rotated-{rotation}.pdf"
    doc.save(target)
    return target


class PageChars:
    """The characters PyMuPDF extracts from a page (rawdict), with their boxes."""

    def __init__(self, page: pymupdf.Page) -> None:
        chars = [
            (char["c"], char["bbox"])
            for block in page.get_text("rawdict", flags=PDF_TEXT_FLAGS)["blocks"]
            for line in block.get("lines", [])
            for span in line["spans"]
            for char in span["chars"]
        ]
        self.text = [c for c, _ in chars]
        self.boxes = np.array([b for _, b in chars], dtype=float).reshape(-1, 4)

    def inside(self, rects: list[tuple[float, float, float, float]]) -> str:
        """The characters whose box lies inside one of the rectangles, in extraction order."""
        if not rects:
            return ""
        r = np.array(rects, dtype=float)[None, :, :]
        b = self.boxes[:, None, :]
        eps = 0.01
        inside = (
            (r[..., 0] - eps <= b[..., 0])
            & (b[..., 2] <= r[..., 2] + eps)
            & (r[..., 1] - eps <= b[..., 1])
            & (b[..., 3] <= r[..., 3] + eps)
        ).any(axis=1)
        return "".join(c for c, hit in zip(self.text, inside, strict=True) if hit)


def no_space(text: str) -> str:
    return "".join(clean_text(text).split())


def check_passages(path: Path, password: str | None) -> int:
    """For every passage, the glyphs inside its highlight are its text; returns how many."""
    data = path.read_bytes()
    extracted = extract(data, path.name, password=password)
    doc = open_pdf(path, password)
    glyphs, chars = {}, {}
    for p in extracted.pages:
        glyphs[p.number] = page_glyphs(doc[p.number - 1])
        chars[p.number] = PageChars(doc[p.number - 1])
        assert glyphs[p.number].text == extracted.text[p.start : p.end]
    spans = split(extracted.text)
    for span in spans:
        for p in extracted.pages:
            if p.start < span.end and span.start < p.end:
                lo, hi = max(span.start, p.start) - p.start, min(span.end, p.end) - p.start
                page = glyphs[p.number]
                inside = no_space(chars[p.number].inside(page.rects(lo, hi)))
                # a table's cell separators are on no glyph; its rows are not MuPDF's order
                wanted = no_space(
                    "".join(
                        c
                        for c, box in zip(page.text[lo:hi], page.boxes[lo:hi], strict=True)
                        if box is not None or c.isspace()
                    )
                )
                raw = doc[p.number - 1].get_text("text", flags=PDF_TEXT_FLAGS)
                reordered = page.text != clean_text(raw)
                assert (sorted(inside) == sorted(wanted)) if reordered else inside == wanted
    return len(spans)


@pytest.mark.parametrize(("relative", "password"), PDFS)
def test_the_glyphs_inside_each_highlight_are_the_passage(relative, password):
    checked = check_passages(corpus_file(relative), password)
    print(f"{relative}: {checked} passages, every highlight exact")  # shown with pytest -s
    assert checked > 0


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_rotated_page_highlights_the_passage(tmp_path, rotation):
    path = rotated_copy(tmp_path, "docs/pdf/paper_dpr_2004.04906_2col.pdf", 2, rotation)
    assert open_pdf(path)[2].rotation == rotation
    checked = check_passages(path, None)
    print(f"page 3 turned {rotation}°: {checked} passages, every highlight exact")
    assert checked > 0


def yellow(png: bytes) -> np.ndarray:
    pix = pymupdf.Pixmap(png)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    return (r > 200) & (g > 170) & (b < 120)


def test_rotated_page_is_painted_where_the_unrotated_one_is(tmp_path):
    straight = open_pdf(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf"))
    turned = open_pdf(rotated_copy(tmp_path, "docs/pdf/paper_dpr_2004.04906_2col.pdf", 2, 90))
    stored = pdf_page_text(straight[2])
    start = stored.index("Encoders")
    a = render_page(straight, "straight", 3, stored, start, start + 300, 1.0)
    b = render_page(turned, "turned", 3, stored, start, start + 300, 1.0)
    assert (a.width, a.height) == (b.height, b.width)
    got = yellow(b.png)

    def overlap(expected: np.ndarray) -> float:
        return (expected & got).sum() / (expected | got).sum()

    assert yellow(a.png).sum() > 1000
    # /Rotate 90 turns the page clockwise; pixel rounding of each glyph's edges costs a little.
    assert overlap(np.rot90(yellow(a.png), k=-1)) > 0.85
    assert overlap(np.rot90(yellow(a.png), k=1)) < 0.2


def test_highlight_lands_on_ink_with_a_cropbox_offset():
    path = corpus_file("docs/pdf/gov_irs_i1040nr_2007_50p_tables.pdf")
    doc = open_pdf(path)
    assert doc[0].cropbox.y0 > 0  # the visible page is a window into a taller media box
    stored = pdf_page_text(doc[0])
    start = stored.index("Tax benefits extended")
    image = render_page(doc, "irs", 1, stored, start, start + 200, 1.0)
    plain = doc[0].get_pixmap(alpha=False)
    pixels = np.frombuffer(plain.samples, dtype=np.uint8).reshape(plain.height, plain.width, 3)
    dark = pixels.min(axis=2) < 128
    inked = sum(dark[y0:y1, x0:x1].any() for x0, y0, x1, y1 in image.rects)
    letters = len("".join(stored[start : start + 200].split()))  # spaces have no ink
    assert letters <= inked <= len(image.rects)


def test_a_page_that_reads_differently_is_not_highlighted():
    doc = open_pdf(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf"))
    stored = pdf_page_text(doc[0])
    with pytest.raises(PageMismatch, match="cannot be highlighted exactly"):
        render_page(doc, "dpr-changed", 1, stored.replace("Dense", "Sparse", 1), 0, 20, 1.0)


def test_a_table_page_imported_before_rows_were_read_is_still_highlighted():
    doc = open_pdf(corpus_file("docs/pdf/cjk_zh_textbook_credits.pdf"))
    before = page_glyphs(doc[0], table_rows=False).text  # what an older KnowNote stored
    assert before != pdf_page_text(doc[0])  # today the grid's rows are read row by row
    start = before.index("\n", len(before) // 2)
    image = render_page(doc, "credits-before-rows", 1, before, start - 12, start, 1.0)
    assert image.rects


# ---------------------------------------------------------------- cleaning keeps the boxes


def boxes_for(raw: str) -> list:
    return [(float(i), 0.0, float(i) + 1, 1.0) for i in range(len(raw))]


@pytest.mark.parametrize(
    "raw",
    [
        "plain\n",
        "  leading and trailing  \n\n\n\n",
        "crlf\r\nline\rend\n",
        "tabs\tand\u00a0nbsp\n",
        "controls\x00\x07\x1b here\x0c page\n",
        "blank\n\n\n\nlines\n",
        "cafe\u0301 and e\u0301te\u0301\n",
        "\u212b angstrom \uf900 compatibility\n",
        "\u1100\u1161\u11a8 jamo\n",
        "surrogate \ud800 here\n",
        "trailing \u3000\n",
    ],
)
def test_cleaning_with_boxes_gives_clean_text(raw):
    cleaned = pdf_page._clean_with_boxes(raw, boxes_for(raw), [0] * len(raw))
    assert cleaned.text == clean_text(raw)
    assert len(cleaned.boxes) == len(cleaned.text)


def test_a_composed_character_covers_both_glyphs():
    raw = "e\u0301x"
    cleaned = pdf_page._clean_with_boxes(raw, boxes_for(raw), [0, 0, 0])
    assert cleaned.text == "éx"
    assert cleaned.boxes == [(0.0, 0.0, 2.0, 1.0), (2.0, 0.0, 3.0, 1.0)]


def test_inserted_newlines_and_edge_spaces_are_not_painted():
    glyphs = pdf_page.PageGlyphs(
        "ab cd\nef", ((0, 0, 1, 1), (1, 0, 2, 1), (2, 0, 3, 1), (3, 0, 4, 1), (4, 0, 5, 1),
                     None, (0, 2, 1, 3), (1, 2, 2, 3)), (1, 1, 1, 1, 1, 1, 2, 2),
    )  # fmt: skip
    assert glyphs.rects(0, 8) == [(0, 0, 1, 1), (1, 0, 2, 1), (2, 0, 3, 1), (3, 0, 4, 1),
                                  (4, 0, 5, 1), (0, 2, 1, 3), (1, 2, 2, 3)]  # fmt: skip
    assert glyphs.rects(2, 4) == [(3, 0, 4, 1)]  # the space at the edge is not painted


@given(
    st.text(
        alphabet=st.sampled_from(
            list("ab \n\t\r\u00a0\u0301\u0308\u3000\u00e9\u212b\x00\x0c\u1100\u1161\u11a8")
        ),
        max_size=40,
    )
)
def test_cleaning_with_boxes_matches_clean_text_on_random_text(raw):
    cleaned = pdf_page._clean_with_boxes(raw, boxes_for(raw), [0] * len(raw))
    assert cleaned.text == clean_text(raw)


# ---------------------------------------------------------------- through the store


@pytest.fixture
def imported(store, notebook, settings, embedder):
    def run(relative: str, password: str | None = None) -> int:
        path = corpus_file(relative)
        result = import_file(
            store,
            notebook,
            path.name,
            path.read_bytes(),
            settings=settings,
            embedder=embedder,
            password=password,
        )
        assert result.status == "imported", result.error
        return result.document_id

    return run


def test_a_passage_over_a_page_break_is_highlighted_on_both_pages(store, imported):
    document_id = imported("docs/pdf/enc_password_test_4p.pdf", "test")
    passage = next(p for p in store.passages(document_id) if p.page_start != p.page_end)
    images = passage_pages(store, document_id, passage.start, passage.end, password="test")
    assert [i.page for i in images] == [passage.page_start, passage.page_end]
    for image in images:
        assert image.png.startswith(b"\x89PNG") and image.rects
        assert yellow(image.png).sum() > 500
        assert yellow(image.crop_png).sum() == yellow(image.png).sum()  # all of it in view
        x0, y0, x1, y1 = image.crop
        assert x1 - x0 >= image.width // 2 and y1 - y0 >= image.height // 3


def test_without_the_whole_page_only_the_crop_is_encoded(store, imported):
    document_id = imported("docs/pdf/paper_dpr_2004.04906_2col.pdf")
    passage = store.passages(document_id)[5]
    whole = passage_pages(store, document_id, passage.start, passage.end)
    crops = passage_pages(store, document_id, passage.start, passage.end, whole_page=False)
    assert [i.png for i in crops] == [None] * len(whole)
    assert [i.crop_png for i in crops] == [i.crop_png for i in whole]


def test_an_encrypted_pdf_asks_for_its_password(store, imported):
    document_id = imported("docs/pdf/enc_password_test_4p.pdf", "test")
    passage = store.passages(document_id)[0]
    with pytest.raises(PasswordRequired, match="enter the password"):
        passage_pages(store, document_id, passage.start, passage.end)
    with pytest.raises(PasswordRequired, match="wrong"):
        passage_pages(store, document_id, passage.start, passage.end, password="nope")


def test_pages_are_rendered_once_per_document_page_and_zoom(store, imported, monkeypatch):
    document_id = imported("docs/pdf/cjk_ja_miyazawa_preface_vertical.pdf")
    passage = store.passages(document_id)[1]
    first = passage_pages(store, document_id, passage.start, passage.end, zoom=1.5)

    def fail(*args, **kwargs):
        raise AssertionError("rendered again")

    monkeypatch.setattr(pymupdf.Page, "get_pixmap", fail)
    again = passage_pages(store, document_id, passage.start, passage.end, zoom=1.5)
    assert again == first
    with pytest.raises(AssertionError, match="rendered again"):
        passage_pages(store, document_id, passage.start, passage.end, zoom=1.25)


def test_a_document_without_pages_to_show_says_so(store, imported):
    document_id = imported("docs/web_text/md_codeblocks.md")
    with pytest.raises(NotFound, match="not a PDF"):
        passage_pages(store, document_id, 0, 10)


def test_a_zoom_out_of_range_is_refused(store):
    with pytest.raises(KnowNoteError, match="Zoom 0 is out of range"):
        passage_pages(store, 1, 0, 10, zoom=0)


def test_a_missing_original_file_says_so(store, imported):
    document_id = imported("docs/pdf/cjk_ja_miyazawa_preface_vertical.pdf")
    store.file_path(store.document(document_id).sha256).unlink()
    with pytest.raises(NotFound, match="is not kept"):
        passage_pages(store, document_id, 0, 10)


def orange(png: bytes) -> np.ndarray:
    """Pixels of the stronger highlight (a support span): white paper * STRONG is orange."""
    pix = pymupdf.Pixmap(png)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    return (r > 200) & (g > 110) & (g < 160) & (b < 60)


def test_a_support_span_is_painted_more_strongly_inside_the_passage():
    doc = open_pdf(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf"))
    stored = pdf_page_text(doc[2])
    start = stored.index("Encoders")
    plain = render_page(doc, "dpr-plain", 3, stored, start, start + 300, 1.0)
    both = render_page(
        doc, "dpr-both", 3, stored, start, start + 300, 1.0, strong=[(start + 100, start + 200)]
    )
    assert orange(plain.png).sum() == 0 and both.strong_rects
    assert orange(both.png).sum() > 200
    assert 0 < yellow(both.png).sum() < yellow(plain.png).sum()  # the rest keeps the light mark
    x0 = min(r[0] for r in both.strong_rects)
    y0 = min(r[1] for r in both.strong_rects)
    assert any(x0 <= r[0] and y0 <= r[1] for r in both.rects)  # drawn among the passage's glyphs
