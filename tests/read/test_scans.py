"""Scans and photos: image files become sources read by OCR, their citations are highlighted on
the image, and hostile images are refused by a named limit in bounded memory (peak RSS of a fresh
process, as in test_limits) while the other files of an upload still import."""

from __future__ import annotations

import io
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from benchmarks.ocr_order import GARBAGE, mojibake, mojibake_gbk, symbol_soup
from knownote.pipeline.ingest import import_file, ocr_progress_text
from knownote.read.extract import OcrLimits, extract, pdf_page_text, pdf_pages_to_ocr
from knownote.read.ocr import layer_noise
from knownote.read.pdf import _read_layers
from knownote.read.pdf_headings import page_layer
from knownote.read.scans import (
    ReadFirst,
    has_invisible_layer_over_image,
    layers_to_judge,
    noisy_layer,
    ocr_pdf_page,
    ocr_pdf_pages,
)
from knownote.show.pdf_page import passage_pages
from tests.conftest import DOCS, corpus_file
from tests.e2e.test_corpus import OCR_PAGES, PASSWORDS
from tests.e2e.test_limits import deflated, import_measured
from tests.read.test_ocr import needs_tesseract

SENTENCE = "Harbour tides rise twice daily"


def text_image(text: str = SENTENCE, fmt: str = "PNG") -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=80)
    page.insert_text((12, 45), text, fontsize=20)
    pix = page.get_pixmap(dpi=150, alpha=False)
    out = io.BytesIO()
    Image.frombytes("RGB", (pix.width, pix.height), pix.samples).save(out, fmt)
    return out.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(bytes(1000))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def tiff_declaring(width: int, height: int) -> bytes:
    tags = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
            (273, 4, 8), (277, 3, 1), (278, 4, height), (279, 4, width * height)]  # fmt: skip
    ifd = struct.pack("<H", len(tags))
    for tag, kind, value in tags:
        ifd += (
            struct.pack("<HHII", tag, kind, 1, value)
            if kind == 4
            else struct.pack("<HHIHH", tag, kind, 1, value, 0)
        )
    return b"II*\x00" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0)


def test_a_png_photo_of_text_imports_by_ocr_and_says_so(store, notebook, settings, embedder):
    seen = []
    result = import_file(
        store, notebook, "note.png", text_image(), settings=settings, embedder=embedder,
        progress=lambda _f, stage, done, total: seen.append((stage, done, total)),
    )  # fmt: skip
    assert result.status == "imported", result.error
    assert result.warnings == ("1 page read by OCR; check quotes against the page image.",)
    assert ("ocr", 0, 1) in seen and ("ocr", 1, 1) in seen
    document = store.document(result.document_id)
    assert document.kind == "image" and store.ocr_page_numbers(document.id) == [1]
    assert store.document_text(document.id) == SENTENCE


def test_a_cited_word_is_highlighted_on_the_image_itself(store, notebook, settings, embedder):
    result = import_file(
        store, notebook, "note.png", text_image(), settings=settings, embedder=embedder
    )
    start = SENTENCE.index("tides")
    (image,) = passage_pages(store, result.document_id, start, start + len("tides"))
    assert len(image.rects) == len("tides")
    x0 = min(r[0] for r in image.rects)
    x1 = max(r[2] for r in image.rects)
    # "tides" is the second of five words: its highlight sits in the left half of the line.
    assert 0.15 * image.width < x0 < x1 < 0.6 * image.width
    (whole,) = passage_pages(store, result.document_id, 0, len(SENTENCE))
    assert len(whole.rects) >= len(SENTENCE.replace(" ", ""))  # every letter (and some spaces)


def test_every_frame_of_a_tiff_is_a_page():
    frames = [Image.open(io.BytesIO(text_image(t))) for t in ("First page here", "Second page")]
    out = io.BytesIO()
    frames[0].save(out, "TIFF", save_all=True, append_images=frames[1:])
    result = extract(out.getvalue(), "two.tiff")
    assert [p.number for p in result.ocr_pages] == [1, 2]
    assert result.text == "First page here\n\nSecond page"


def test_webp_and_jpeg_are_images_too():
    for fmt in ("WEBP", "JPEG"):
        assert extract(text_image(fmt=fmt), f"note.{fmt.lower()}").text == SENTENCE


def test_a_truncated_image_is_refused_as_damaged():
    data = text_image()
    with pytest.raises(Exception, match=r"cut\.png is a damaged or truncated image"):
        extract(data[: len(data) // 2], "cut.png")


def test_a_thousand_frame_tiff_is_refused_by_the_ocr_page_limit():
    frame = Image.new("L", (8, 8), 255)
    out = io.BytesIO()
    frame.save(out, "TIFF", save_all=True, append_images=[frame] * 999)
    with pytest.raises(Exception, match=r"1,000 frames.*limit of 200.*max_ocr_pages"):
        extract(out.getvalue(), "many.tiff")


def huge_image_pdf(pages: int) -> bytes:
    """A PDF whose pages each draw a 30,000 × 30,000 grey image (900 MB decoded, 1 MB stored)."""
    image = deflated(b"", 30_000 * 30_000)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /XObject /Subtype /Image /Width 30000 /Height 30000 /BitsPerComponent 8 "
        b"/ColorSpace /DeviceGray /Filter /FlateDecode /Length %d >>\nstream\n"
        % len(image)
        + image
        + b"\nendstream",
    ]
    draw = b"q 612 0 0 792 0 0 cm /Im0 Do Q"
    for i in range(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
            "/Resources << /XObject << /Im0 3 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(draw) + draw + b"\nendstream")
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Peak RSS of the worker importing a file refused at once (a damaged image)."""
    return import_measured(tmp_path_factory.mktemp("baseline"), "x.png", b"\x89PNG\r\n")[1]


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("bomb.png", png_declaring(50_000, 50_000), r"50,000 × 50,000 pixels.*100 megapixels"),
        ("bomb.tiff", tiff_declaring(50_000, 50_000), r"50,000 × 50,000 pixels.*100 megapixels"),
        (
            "huge.pdf",
            huge_image_pdf(3),
            r"decodes to 900 MB.*limit of 300 MB.*max_image_megapixels",
        ),
    ],
    ids=["png", "tiff", "pdf"],
)
def test_decompression_bombs_are_refused_by_the_pixel_limit_in_bounded_memory(
    tmp_path: Path,
    baseline: float,
    name: str,
    data: bytes,
    message: str,
):
    result, peak = import_measured(tmp_path, name, data)
    assert result["status"] == "failed"
    assert re.search(message, result["error"]), result["error"]
    print(
        f"{name}: file {len(data) / 1e6:.1f} MB, peak RSS {peak:.0f} MB "
        f"(baseline {baseline:.0f} MB)"
    )
    assert peak - baseline < 100


def test_other_files_of_an_upload_still_import_after_a_bomb(store, notebook, settings, embedder):
    bomb = import_file(
        store, notebook, "bomb.png", png_declaring(50_000, 50_000), settings=settings,
        embedder=embedder,
    )  # fmt: skip
    good = import_file(
        store, notebook, "good.png", text_image(), settings=settings, embedder=embedder
    )
    assert bomb.status == "failed" and "max_image_megapixels" in bomb.error
    assert good.status == "imported"


def test_ocr_limits_are_settings(settings):
    with pytest.raises(Exception, match=r"limit of 1 megapixels"):
        extract(png_declaring(1200, 1000), "x.png", ocr=OcrLimits(max_megapixels=1))


def test_the_noisy_ocr_layer_of_the_auditor_letter_is_judged_noise_and_a_clean_one_is_not():
    path = corpus_file("docs/pdf/cjk_zh_scanned_ocr_auditor_letter.pdf")
    with pymupdf.open(path) as doc:
        assert all(has_invisible_layer_over_image(page) for page in doc)
        assert noisy_layer([pdf_page_text(page) for page in doc])
    # The same kind of layer without misread numbers is kept as it is.
    assert not noisy_layer(["截至2015年12月31日，神鹰集团在该担保项下实际融资余额为1.57亿元"])


def test_a_born_digital_page_has_no_invisible_layer():
    with pymupdf.open(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")) as doc:
        assert not any(has_invisible_layer_over_image(page) for page in doc)


def test_only_a_page_that_hides_text_has_its_images_drawn_to_look_for_an_ocr_layer(monkeypatch):
    """Drawing a page's images costs about as much as reading its text layer; a page none of
    whose characters is drawn invisibly has no OCR layer, so the paper's pages are not drawn,
    and the Chinese letter's six, each under an invisible layer, are."""
    drawn: list[int] = []
    image_info = pymupdf.Page.get_image_info
    monkeypatch.setattr(
        pymupdf.Page,
        "get_image_info",
        lambda page, *a, **k: drawn.append(page.number) or image_info(page, *a, **k),
    )
    with pymupdf.open(corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")) as doc:
        assert not any(page_layer(page).hides_text for page in doc)
        assert _read_layers(doc).to_read == [] and drawn == []
    with pymupdf.open(corpus_file("docs/pdf/cjk_zh_scanned_ocr_auditor_letter.pdf")) as doc:
        assert all(page_layer(page).hides_text for page in doc)
        assert _read_layers(doc).to_read == list(range(6))  # a noisy layer: read by OCR
        assert set(drawn) == set(range(6))


def test_ocr_progress_says_which_page_is_being_read():
    assert ocr_progress_text(2, 12) == "Reading page 3 of 12 by OCR"
    assert ocr_progress_text(12, 12) == "Read 12 pages by OCR"


def test_a_transparent_png_is_read_on_white():
    grey = Image.open(io.BytesIO(text_image())).convert("L")
    transparent = Image.new("RGBA", grey.size, (0, 0, 0, 0))
    transparent.putalpha(grey.point(lambda v: 255 - v))  # ink opaque, paper transparent
    out = io.BytesIO()
    transparent.save(out, "PNG")
    assert extract(out.getvalue(), "clear.png").text == SENTENCE


PDFS = sorted((DOCS / "pdf").glob("*.pdf")) if DOCS.is_dir() else []


@pytest.mark.skipif(not PDFS, reason=f"needs the shared corpus ({DOCS} is absent)")
def test_on_every_page_of_the_corpus_only_scans_and_image_only_pages_go_to_ocr():
    chosen = {}
    for path in PDFS:
        try:
            doc = pymupdf.open(path)
        except pymupdf.FileDataError:  # the empty file
            continue
        with doc:
            if doc.needs_pass:
                doc.authenticate(PASSWORDS[path.name])
            if pages := pdf_pages_to_ocr(doc):
                chosen[path.name] = pages
    assert chosen == OCR_PAGES


# ---------------------------------------------------------------- an OCR layer poor in its letters

ENG = OcrLimits(engine="tesseract", languages="eng", dpi=150)
LETTERS = str.maketrans("sSmDeunt", "aaiEcnmf")  # "Desiring" -> "Eeairing", digits kept


def _scan_with_layer(corrupt: bool) -> tuple[bytes, str]:
    """The corpus's photographed book page as a page image with an invisible OCR layer (render
    mode 3) of Tesseract's words, every word of five letters or more with its letters misread
    when `corrupt`; the layer's text as MuPDF reads it is returned too."""
    from knownote.read.scans import ocr_pdf_page

    source = pymupdf.open(corpus_file("docs/pdf/scan_book_page_image_only.pdf"))
    pix = source[0].get_pixmap(dpi=150, alpha=False)
    doc = pymupdf.open()
    page = doc.new_page(width=source[0].rect.width, height=source[0].rect.height)
    page.insert_image(page.rect, pixmap=pix)
    text, boxes = ocr_pdf_page(page, ENG, "scan")
    at = 0
    for word in text.replace("\n", " ").split(" "):
        box = boxes.boxes[text.index(word, at)] if word else None
        at = text.index(word, at) + len(word) if word else at
        if box is None or not box[3] > box[1]:
            continue
        shown = word.translate(LETTERS) if corrupt and len(word) >= 5 else word
        size = float(box[3] - box[1]) * 0.9
        page.insert_text((float(box[0]), float(box[3])), shown, fontsize=size, render_mode=3)
    data = doc.tobytes()
    return data, pdf_page_text(pymupdf.open(stream=data)[0])


@needs_tesseract("eng")
def test_a_layer_poor_in_its_letters_gives_way_to_a_fresh_reading():
    data, layer = _scan_with_layer(corrupt=True)
    assert not noisy_layer([layer])  # the digit test alone would keep it
    extracted = extract(data, "memo.pdf", ocr=ENG)
    assert len(extracted.ocr_pages) == 1  # read by OCR
    assert extracted.text != layer
    fresh = set(extracted.text.split())
    poor = set(layer.split()) - fresh
    assert len(poor) > 20  # the misread words are gone ...
    assert "obsession" in extracted.text.lower()  # ... and the page's words are read


@needs_tesseract("eng")
def test_a_good_layer_over_a_page_image_is_kept_as_it_is():
    data, layer = _scan_with_layer(corrupt=False)
    extracted = extract(data, "memo.pdf", ocr=ENG)
    assert extracted.ocr_pages == ()
    assert extracted.text == layer


# ---------------------------------------------------------------- an OCR layer of garbage

MEMO = [
    "MEMORANDUM FOR THE DIRECTOR",
    "SUBJECT: Harbour survey of the northern piers",
    "1. The survey team measured the tides at the northern piers",
    "twice daily for three weeks and found the channel shallower",
    "than the charts show near the second pier.",
    "2. We recommend that dredging begin before the winter storms",
    "and that the pilots be told of the shallow channel at once.",
]
MEMO_ZH = [  # over 200 characters: a shorter text beside a page image counts as no layer
    "关于北港码头测量的备忘录",
    "一、测量小组连续三周每天两次测量北港码头的潮位",
    "发现第二码头附近的航道比海图所示更浅",
    "退潮时航道最浅处不足五米，大型货船无法通过",
    "二、建议在冬季风暴之前开始疏浚航道",
    "并立即通知引航员注意第二码头附近的浅水区",
    "三、疏浚期间北港码头的货船改由南港码头停靠",
    "南港码头的仓库和起重机可以满足临时需要",
    "四、测量数据和海图副本随本备忘录一并送上",
    "请于下周一之前批复，以便安排疏浚船只和人员",
    "五、附件：潮位记录表三份，航道水深图一份",
    "测量船航行日志一份，引航员意见书两份",
    "港务局测量科，二〇二四年十一月五日",
]


def _memo_scan(lines: list[str], layer: list[str] | None, chinese: bool = False) -> bytes:
    """A typed memo as a page image (typewriter type, 150 dpi) with an invisible layer (render
    mode 3) holding `layer`'s lines where the memo's lines are, as OCR software writes one."""
    typed = pymupdf.open()
    page = typed.new_page(width=595, height=842)
    font = "china-s" if chinese else "cour"
    for i, text in enumerate(lines):
        page.insert_text((60, 90 + 28 * i), text, fontsize=14 if chinese else 11, fontname=font)
    doc = pymupdf.open()
    scan = doc.new_page(width=595, height=842)
    scan.insert_image(scan.rect, pixmap=page.get_pixmap(dpi=150, alpha=False))
    writer = pymupdf.TextWriter(scan.rect)
    for i, text in enumerate(layer or []):
        writer.append((60, 90 + 28 * i), text, font=pymupdf.Font("cjk"), fontsize=11)
    writer.write_text(scan, render_mode=3)
    return doc.tobytes()


@pytest.mark.parametrize("garble", ["soup", "cipher", "broken"])
def test_a_garbage_layer_over_a_typed_memo_is_read_again_by_ocr(garble: str):
    data = _memo_scan(MEMO, GARBAGE[garble]("\n".join(MEMO)).split("\n"))
    with pymupdf.open(stream=data) as doc:
        assert has_invisible_layer_over_image(doc[0])
        assert not noisy_layer([pdf_page_text(doc[0])])  # the digit test alone keeps it
    extracted = extract(data, "memo.pdf")
    assert len(extracted.ocr_pages) == 1
    assert "northern piers" in extracted.text and "dredging" in extracted.text


def test_a_garbage_layer_is_read_again_without_a_dictionary_too():
    # RapidOCR alone (no Tesseract, so no dictionary to judge a layer by), as pip installs it
    data = _memo_scan(MEMO, symbol_soup("\n".join(MEMO)).split("\n"))
    extracted = extract(data, "memo.pdf", ocr=OcrLimits(engine="rapidocr", languages="none"))
    assert len(extracted.ocr_pages) == 1
    assert "dredging" in extracted.text


@pytest.mark.parametrize("garble", [mojibake, mojibake_gbk], ids=["cp1252", "gbk"])
def test_a_chinese_mojibake_layer_is_read_again_by_ocr(garble):
    data = _memo_scan(MEMO_ZH, [garble(line) for line in MEMO_ZH], chinese=True)
    extracted = extract(data, "memo.pdf")
    assert len(extracted.ocr_pages) == 1
    assert "航道" in extracted.text and "疏浚" in extracted.text


@pytest.mark.parametrize("lines, chinese", [(MEMO, False), (MEMO_ZH, True)], ids=["en", "zh"])
def test_a_good_layer_over_a_typed_memo_stays(lines: list[str], chinese: bool):
    data = _memo_scan(lines, lines, chinese)
    layer = pdf_page_text(pymupdf.open(stream=data)[0])
    assert not layer_noise(layer).garbled
    extracted = extract(data, "memo.pdf")
    assert extracted.ocr_pages == ()
    assert extracted.text == layer


@pytest.mark.skipif(not PDFS, reason=f"needs the shared corpus ({DOCS} is absent)")
def test_no_page_of_the_corpus_has_its_layer_judged_against_ocr():
    for path in PDFS:
        try:
            doc = pymupdf.open(path)
        except pymupdf.FileDataError:  # the empty file
            continue
        with doc:
            if doc.needs_pass:
                doc.authenticate(PASSWORDS[path.name])
            found = _read_layers(doc)
            assert layers_to_judge(found.texts, found.layered, OcrLimits(), found.to_read) == []


def _text_page_and_its_picture(relative: str) -> pymupdf.Document:
    """The corpus PDF's first page, then the same page as a picture alone (no text layer)."""
    source = pymupdf.open(corpus_file(relative))
    doc = pymupdf.open()
    doc.insert_pdf(source, to_page=0)
    picture = source[0].get_pixmap(dpi=150)
    doc.new_page(width=source[0].rect.width, height=source[0].rect.height).insert_image(
        source[0].rect, pixmap=picture
    )
    return doc


@pytest.mark.parametrize(
    ("doc", "to_read"),
    [
        (lambda: pymupdf.open(corpus_file("docs/pdf/book_free_culture_lessig_352p.pdf")), [0, 254]),
        (lambda: _text_page_and_its_picture("docs/pdf/cjk_zh_textbook_credits.pdf"), [1]),
    ],
    ids=["english book with a scanned cover and plate", "chinese page and its picture"],
)
def test_pages_without_a_text_layer_are_read_by_ocr_while_the_rest_is_read(doc, to_read):
    """What they read is what reading them after the text layer reads."""
    doc, limits = doc(), OcrLimits()
    with ReadFirst(limits, "a.pdf") as first:
        layers = _read_layers(doc, blank=first.start)
        assert layers.to_read == to_read and sorted(first.started) == to_read
        read = list(ocr_pdf_pages((doc[i] for i in to_read), limits, "a.pdf", first.started))
    after = [ocr_pdf_page(doc[i], limits, "a.pdf") for i in to_read]
    assert [text for text, _ in read] == [text for text, _ in after]
    assert all(text.strip() for text, _ in read)
    for (_, early), (_, late) in zip(read, after, strict=True):
        np.testing.assert_array_equal(early.boxes, late.boxes)
        np.testing.assert_array_equal(early.lines, late.lines)


@pytest.mark.skipif(not PDFS, reason=f"needs the shared corpus ({DOCS} is absent)")
def test_a_books_scanned_plate_is_found_among_the_first_pages_read(monkeypatch):
    """Pages whose resources name images are read first (18 of the English book's 352), so its
    plate on page 255 starts OCR before the other pages' text layers; each page's text and lines
    are the same as read in page order."""
    import knownote.read.pdf as pdf

    doc = pymupdf.open(corpus_file("docs/pdf/book_free_culture_lessig_352p.pdf"))
    order: list[int] = []
    read_layer = pdf.page_layer
    monkeypatch.setattr(
        pdf, "page_layer", lambda page: order.append(page.number) or read_layer(page)
    )
    found: dict[int, int] = {}  # blank page -> how many layers had been read when it was found
    layers = _read_layers(
        doc, with_lines=True, blank=lambda page: found.setdefault(page.number, len(order))
    )
    assert set(found) == {0, 254} and max(found.values()) <= 18  # in page order: 255th
    assert sorted(order) == list(range(352)) and layers.to_read == [0, 254]
    for index in (0, 1, 100, 254, 351):
        layer = read_layer(doc[index])
        assert layers.texts[index] == layer.text
        assert layers.lines[index] == (layer.lines(layer.text) if layer.text else [])
