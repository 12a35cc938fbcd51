"""Size limits: files over a limit are refused with a message that says which limit, in bounded
memory.

Each hostile file is imported by `import_file` in a fresh Python process that reports its peak
resident memory (ru_maxrss); the same process importing a tiny file is the baseline. The zip bombs
are written by hand here: a deflate stream of zeros built from one repeated fully-flushed block,
so a 2 GiB member costs a 2 MB file and no time to make.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tomllib
import zlib
from pathlib import Path

import pymupdf
import pytest

from knownote.pipeline.ingest import import_file
from knownote.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
BOMB = 2048 * MB  # what each zip bomb member really inflates to

# Imports `path` as `name` into a fresh database, prints the result and the peak RSS in MB.
WORKER = """
import json, resource, sys
from pathlib import Path
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store

home, path, name, overrides = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
settings = Settings().with_(home=home, **json.loads(overrides))
store = Store.open(settings.db_path)
notebook = store.create_notebook("Limits", "all-MiniLM-L6-v2", 384)
result = import_file(store, notebook, name, path.read_bytes(), settings=settings)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"result": result.as_dict(), "peak_mb": peak}))
"""


def import_measured(
    tmp_path: Path, name: str, data: bytes, **overrides: object
) -> tuple[dict, float]:
    """The import result of `data` in a fresh process, and its peak RSS in MB."""
    run = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    run.mkdir()
    path = run / "upload"
    path.write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(run / "home"), str(path), name, json.dumps(overrides)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return report["result"], report["peak_mb"]


@pytest.fixture(scope="module")
def baseline_mb(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Peak RSS of the same process importing a file that is refused at once (a tiny image)."""
    _, peak = import_measured(tmp_path_factory.mktemp("baseline"), "x.png", b"\x89PNG\r\n")
    return peak


def report(case: str, size: int, peak: float, baseline: float) -> None:
    print(f"{case}: file {size / MB:.1f} MB, peak RSS {peak:.0f} MB (baseline {baseline:.0f} MB)")


# --- zip bombs ------------------------------------------------------------------------------


def deflated(prefix: bytes, zeros: int) -> bytes:
    """Raw deflate of `prefix` then `zeros` zero bytes (a multiple of 1 MiB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(b"\0" * MB) + c.flush(zlib.Z_FULL_FLUSH)
    # After a full flush nothing refers back, so every MiB of zeros compresses to the same block.
    assert block == c.compress(b"\0" * MB) + c.flush(zlib.Z_FULL_FLUSH)
    return head + block * (zeros // MB - 1) + c.flush()


def crc_of(prefix: bytes, zeros: int) -> int:
    crc = zlib.crc32(prefix)
    chunk = b"\0" * MB
    for _ in range(zeros // MB):
        crc = zlib.crc32(chunk, crc)
    return crc


def zip_archive(entries: list[tuple[str, bytes, int, int]]) -> bytes:
    """A ZIP of (name, raw deflate data, crc, declared size) members, headers as given."""
    out, central = bytearray(), bytearray()
    for name, data, crc, size in entries:
        offset, encoded = len(out), name.encode()
        out += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(encoded), 0
        )
        out += encoded + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            *(0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), size, len(encoded)),
            *(0, 0, 0, 0, 0, offset),
        )
        central += encoded
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0
    )
    return bytes(out + central + end)


def member(name: str, text: bytes) -> tuple[str, bytes, int, int]:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return name, c.compress(text) + c.flush(), zlib.crc32(text), len(text)


def bomb(name: str, prefix: bytes, *, lying: bool) -> tuple[str, bytes, int, int]:
    """A member that inflates to `prefix` and 2 GiB of zeros. A lying one declares only the
    prefix (size and CRC), as a crafted file would to slip past a check of declared sizes."""
    data = deflated(prefix, BOMB)
    if lying:
        return name, data, zlib.crc32(prefix), len(prefix)
    return name, data, crc_of(prefix, BOMB), len(prefix) + BOMB


CONTENT_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'content-types"/>'
)
CHAPTER = (
    b'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
    b"<p>Only the declared bytes of this chapter are ever read.</p></body></html>"
)
CONTAINER = (
    b'<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
    b'version="1.0"><rootfiles><rootfile full-path="content.opf" '
    b'media-type="application/oebps-package+xml"/></rootfiles></container>'
)
OPF = (
    b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
    b'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bomb</dc:title></metadata>'
    b'<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
    b'<spine><itemref idref="c1"/></spine></package>'
)


DOCUMENT = (
    b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
    b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Short.</w:t></w:r></w:p></w:body>'
    b"</w:document>"
)


def docx_bomb(lying: bool) -> bytes:
    return zip_archive(
        [
            member("[Content_Types].xml", CONTENT_TYPES),
            bomb("word/document.xml", DOCUMENT, lying=lying),
        ]
    )


def epub_bomb(lying: bool, part: str = "c1.xhtml") -> bytes:
    parts = {
        "mimetype": b"application/epub+zip",
        "META-INF/container.xml": CONTAINER,
        "content.opf": OPF,
        "c1.xhtml": CHAPTER,
    }
    return zip_archive(
        [
            bomb(name, text, lying=lying) if name == part else member(name, text)
            for name, text in parts.items()
        ]
    )


@pytest.mark.parametrize("make", [docx_bomb, epub_bomb], ids=["docx", "epub"])
def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path: Path, baseline_mb: float, make):
    data = make(lying=False)
    name = f"bomb.{make.__name__[:4]}"
    result, peak = import_measured(tmp_path, name, data)
    report(f"{name} declaring 2 GiB", len(data), peak, baseline_mb)
    assert result["status"] == "failed"
    assert "unpacks to more than 200 MB, over the limit" in result["error"]
    assert "max_text_chars" in result["error"]
    assert peak - baseline_mb < 64


@pytest.mark.parametrize(
    ("name", "data", "part"),
    [
        ("liar.docx", lambda: docx_bomb(lying=True), "word/document.xml"),
        ("liar.epub", lambda: epub_bomb(lying=True), "c1.xhtml"),
        ("liar-mimetype.epub", lambda: epub_bomb(lying=True, part="mimetype"), "mimetype"),
    ],
)
def test_a_zip_bomb_that_lies_about_its_size_is_caught_by_the_bytes_it_inflates_to(
    tmp_path: Path, baseline_mb: float, name: str, data, part: str
):
    """Its headers declare only a small valid prefix (size and CRC), so the declared sizes pass;
    without checking actual bytes, zipfile.read inflates the whole 2 GiB first."""
    data = data()
    result, peak = import_measured(tmp_path, name, data)
    report(f"{name} declaring a few bytes, inflating to 2 GiB", len(data), peak, baseline_mb)
    assert result["status"] == "failed"
    assert f"{name} is damaged: its part {part} unpacks to more than the " in result["error"]
    assert peak - baseline_mb < 64


# --- pages and characters -------------------------------------------------------------------


def pdf_with_pages(count: int) -> bytes:
    doc = pymupdf.open()
    doc.new_page(width=200, height=200).insert_text((20, 20), "One short line per page.")
    while doc.page_count < count:  # doubling: a 10,000-page file in a few seconds
        copy = pymupdf.open(stream=doc.tobytes())
        doc.insert_pdf(copy, to_page=min(copy.page_count, count - doc.page_count) - 1)
    return doc.tobytes()


def test_a_pdf_with_ten_thousand_pages_is_refused_before_reading_its_pages(
    tmp_path: Path, baseline_mb: float
):
    data = pdf_with_pages(10_000)
    result, peak = import_measured(tmp_path, "huge.pdf", data)
    report("huge.pdf with 10,000 pages", len(data), peak, baseline_mb)
    assert result["status"] == "failed"
    assert "huge.pdf has 10000 pages, more than the limit of 5000" in result["error"]
    assert peak - baseline_mb < 64


def pdf_with_inflating_page(zeros: int) -> bytes:
    """One page whose content stream inflates to a line of text and `zeros` NUL bytes (white
    space to a PDF reader), written by hand: the stream has no Adler-32 trailer, as MuPDF allows."""
    stream = b"\x78\xda" + deflated(b"BT /F1 12 Tf 20 150 Td (A tiny page.) Tj ET\n", zeros)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_a_pdf_page_that_inflates_to_256_mb_is_read_as_a_stream(tmp_path: Path):
    """MuPDF interprets a content stream as it inflates it: time grows with the stream (about
    10 s per GiB here), memory does not."""
    path = tmp_path / "inflating.pdf"
    path.write_bytes(pdf_with_inflating_page(256 * MB))
    script = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "from knownote.read.extract import extract\n"
        "data = Path(sys.argv[1]).read_bytes()\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "text = extract(data, 'inflating.pdf').text\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(json.dumps([text, before, after]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    text, before, after = json.loads(out.stdout)
    size = path.stat().st_size / MB
    print(f"inflating.pdf: file {size:.1f} MB, 256 MB stream, RSS {before:.0f} -> {after:.0f} MB")
    assert text == "A tiny page."
    assert after - before < 64


def test_a_text_of_one_50_mb_line_is_refused_and_says_which_limit(
    tmp_path: Path, baseline_mb: float
):
    line = b"lorem ipsum dolor sit amet " * (50 * MB // 27)
    result, peak = import_measured(tmp_path, "one-line.txt", line)
    report("one-line.txt, 50 MB without a line break", len(line), peak, baseline_mb)
    assert result["status"] == "failed"
    assert "more than 20,000,000 characters of text" in result["error"]
    assert "max_text_chars" in result["error"]
    # The bytes, the decoded text and a cleaned copy or two (measured: 4.7 times the file).
    assert peak - baseline_mb < 6 * len(line) / MB


def test_the_largest_accepted_one_line_text_splits_in_bounded_memory():
    script = (
        "import json, resource\n"
        "from knownote.index.split import split\n"
        "from knownote.index.tokenize import term_counts\n"
        "text = ('lorem ipsum dolor sit amet ' * 800_000)[:20_000_000]\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "spans = split(text, 500, 50)\n"
        "terms = [term_counts(text[s.start:s.end]) for s in spans[:2000]]\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(json.dumps([len(spans), before, after]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr
    passages, before, after = json.loads(out.stdout)
    print(f"20M-character line: {passages:,} passages, RSS {before:.0f} -> {after:.0f} MB")
    assert passages > 40_000
    assert after - before < 64  # spans are two integers each


def test_a_file_over_max_file_mb_says_so(store, settings):
    notebook = store.create_notebook("Limits", "all-MiniLM-L6-v2", 384)
    result = import_file(
        store, notebook, "big.txt", b"a" * (2 * MB), settings=settings.with_(max_file_mb=1)
    )
    assert result.status == "failed"
    assert result.error == "big.txt is 2 MB; the limit is 1 MB (setting max_file_mb)."
    assert store.documents(notebook.id) == []


def test_the_upload_limit_of_streamlit_is_our_file_limit():
    """Streamlit refuses a bigger upload in the browser before the app sees it; the two agree."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == Settings().max_file_mb


@pytest.mark.browser
def test_an_upload_over_streamlits_limit_is_refused_in_the_browser(tmp_path: Path):
    """Streamlit's own check (server.maxUploadSize, here lowered to 1 MB) speaks first; the
    file never reaches the app, so nothing is imported."""
    from playwright.sync_api import expect

    from tests.browser.harness import chromium, shot, streamlit_server

    with (
        chromium() as browser,
        streamlit_server(tmp_path, STREAMLIT_SERVER_MAX_UPLOAD_SIZE="1") as server,
    ):
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(server.url)
        page.get_by_label("Name", exact=True).fill("Limits")
        page.get_by_role("button", name="Create notebook").click()
        expect(page.get_by_text("1MB per file")).to_be_visible(timeout=60_000)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            [{"name": "big.txt", "mimeType": "text/plain", "buffer": b"word " * (MB // 2)}]
        )
        message = page.get_by_text("File must be 1.0MB or smaller.")
        expect(message).to_be_visible(timeout=30_000)
        shot(page, "upload-over-the-limit")
        page.wait_for_timeout(2000)
        assert page.get_by_text("Last import").count() == 0
        print(f"over the upload limit the browser says: {message.text_content()!r}")
