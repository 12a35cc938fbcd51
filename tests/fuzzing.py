"""A deterministic mutation fuzzer over every format KnowNote reads, run through the real import.

Shared by tests/pipeline/test_fuzz.py (a short run and the replay of every input that ever failed)
and benchmarks/fuzz.py (the long run). A case is a seed (a corpus document, or one built here for
the formats the corpus lacks: scans and photos, recordings, notebook archives) and a case number;
`mutate(seed, run_seed, case)` always gives the same bytes for the same three, so a failure is
kept as a recipe (tests/fuzz_regressions.json) and never as the bytes themselves.

Each case is imported with `import_file` (what the app's queue and `knownote import` call, with
the time limit of the reading child) or, for an archive, `import_notebook` (`knownote
import-notebook`), into a real DuckDB store with the real embedding model. It must end imported or
refused with one of the errors of knownote/errors.py; anything else is a fault: an exception that
escaped (or that the reading child met and could only report: `ReaderFailed`), a case that took
longer than its limit, or rows left behind by a refused file (and, for an imported one, a
document that `knownote check` would not pass).
"""

from __future__ import annotations

import io
import json
import lzma
import random
import re
import shutil
import struct
import tempfile
import time
import traceback
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from knownote.errors import KnowNoteError
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store import check
from knownote.store.archive import import_notebook
from knownote.store.db import Store

CORPUS_DOCS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "docs"
REGRESSIONS = Path(__file__).with_name("fuzz_regressions.json")
# The failed inputs of built seeds, kept as bytes: a built seed changes with the code that makes
# it (a new archive format adds entries, so the same case mutates it differently).
KEPT_INPUTS = Path(__file__).with_name("fuzz_inputs")

# Outcomes that are faults; every other outcome is "imported", "duplicate" or an error's class name.
UNHANDLED, CRASH, HANG, HALF = "unhandled", "reader crashed", "hang", "half-import"
FAULTS = (UNHANDLED, HANG, HALF)

_KINDS = {"pdf": "pdf", "docx": "docx", "pptx": "pptx", "epub": "epub", "html": "html",
          "htm": "html", "md": "md", "txt": "txt", "png": "image", "jpg": "image",
          "tif": "image", "webp": "image", "wav": "recording", "flac": "recording",
          "mp3": "recording", "ogg": "recording", "knownote": "archive"}  # fmt: skip


@dataclass(frozen=True)
class Seed:
    name: str  # "docs/pdf/x.pdf" for a corpus file, "built/..." for one made here
    filename: str
    kind: str
    size: int
    load: Callable[[], bytes]

    @property
    def weight(self) -> float:
        """Its share of cases: big files (slow to import) and OCR and speech (slow to read) get
        fewer, every seed some."""
        weight = min(1.0, (40_000 / max(self.size, 1)) ** 2)
        if self.kind in ("recording", "image") or "scan" in self.name:
            weight *= 0.1
        return max(weight, 0.0002)


# --- seeds ----------------------------------------------------------------------------------


def corpus_seeds(root: Path = CORPUS_DOCS) -> list[Seed]:
    seeds = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        ext = path.suffix.lower().lstrip(".")
        if ext in _KINDS:
            seeds.append(Seed(f"docs/{path.relative_to(root)}", path.name, _KINDS[ext],
                              path.stat().st_size, path.read_bytes))  # fmt: skip
    return seeds


_SCAN_TEXT = "Fuzzing a scan: the quick brown fox reads 42 pages.\nSecond line of the page."


def _page_image(fmt: str) -> bytes:
    import pymupdf

    with pymupdf.open() as doc:
        page = doc.new_page(width=360, height=120)
        page.insert_text((20, 40), _SCAN_TEXT, fontsize=14)
        pix = page.get_pixmap(dpi=110)
    if fmt in ("png", "jpg"):
        return pix.tobytes(fmt)
    from PIL import Image

    out = io.BytesIO()
    Image.frombytes("RGB", (pix.width, pix.height), pix.samples).save(
        out,
        format={"tif": "TIFF", "webp": "WEBP"}[fmt],
        **({"lossless": True} if fmt == "webp" else {}),
    )
    return out.getvalue()


def _speech_wav() -> bytes:
    import shutil
    import subprocess

    text = "Fuzzing a recording keeps every word it says."
    if shutil.which("espeak-ng") is None:  # a tone: it still exercises every decoder
        t = np.arange(16000 * 2) / 16000
        samples = (np.sin(2 * np.pi * 440 * t) * 8000).astype("<i2").tobytes()
        return _wav(samples)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(target), text], check=True,
                       capture_output=True)  # fmt: skip
        return target.read_bytes()


def _wav(samples: bytes, rate: int = 16000) -> bytes:
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples)
    return out.getvalue()


def _speech(container: str) -> bytes:
    wav = _speech_wav()
    if container == "wav":
        return wav
    from tests.speech import convert

    return convert(wav, container, {"flac": "flac", "mp3": "libmp3lame"}[container])


ARCHIVE_TEXT = (
    "# Fuzzing notebook archives\n\nA notebook archive holds the original bytes, the rows and "
    "a manifest with the hash of every entry.\n\nImporting one checks every passage against "
    "the text at its offsets, so a damaged archive is refused whole.\n"
)
_FIXED_TIME = (2026, 1, 1, 0, 0, 0)


def _archive(embedder) -> bytes:
    """A one-document notebook archive, made the same to the byte on every run: the export's
    clock readings are replaced by a fixed time and the manifest's hashes made to match."""
    import datetime

    import pyarrow as pa

    from knownote.store.archive import digests, export_notebook
    from knownote.store.db import sha256_hex

    fixed = datetime.datetime(*_FIXED_TIME, tzinfo=datetime.UTC)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings().with_(home=Path(folder))
        store = Store.open(settings.db_path)
        try:
            notebook = store.create_notebook("Archived", embedder.name, embedder.dim)
            import_file(store, notebook, "archive.md", ARCHIVE_TEXT.encode(), settings=settings,
                        embedder=embedder)  # fmt: skip
            target = Path(folder) / "a.knownote"
            export_notebook(store, notebook.id, target)
        finally:
            store.close()
        with zipfile.ZipFile(target) as zf:
            entries = {info.filename: zf.read(info) for info in zf.infolist()}
    manifest = json.loads(entries["manifest.json"])
    manifest["created_at"] = fixed.isoformat()
    manifest["notebook"]["created_at"] = fixed.isoformat()
    tables = {}
    for name in list(entries):
        if not name.startswith("tables/"):
            continue
        rows = pa.ipc.open_file(pa.py_buffer(entries[name])).read_all()
        for i, column in enumerate(rows.schema):
            if pa.types.is_timestamp(column.type):
                rows = rows.set_column(i, column, pa.array([fixed] * rows.num_rows, column.type))
        sink = io.BytesIO()
        with pa.ipc.new_file(sink, rows.schema) as writer:
            writer.write_table(rows)
        entries[name] = sink.getvalue()
        manifest["entries"][name] = {"size": len(entries[name]),
                                     "sha256": sha256_hex(entries[name])}  # fmt: skip
        tables[name.removeprefix("tables/").removesuffix(".arrow")] = rows
    manifest["digests"] = digests(tables, manifest["notebook"])
    entries["manifest.json"] = json.dumps(manifest, ensure_ascii=False, indent=1).encode()
    return _zip([(zipfile.ZipInfo(n, _FIXED_TIME), d) for n, d in entries.items()])


_EPUB_CHAPTER = (
    '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
    "<head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p></body></html>"
)


def _epub() -> bytes:
    """A two-chapter EPUB 3 (the corpus has one EPUB only, and a large one)."""
    chapters = [("One", "A fuzzed book has chapters &amp; a table of contents."),
                ("Two", "Each chapter is an XHTML part named in the package.")]  # fmt: skip
    opf = (
        '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/'
        '1.1/"><dc:identifier id="id">fuzz</dc:identifier><dc:title>Fuzzed book</dc:title>'
        "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        + "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                  for i in range(len(chapters)))
        + "</manifest><spine>" + "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        + "</spine></package>"
    )  # fmt: skip
    nav = _EPUB_CHAPTER.format(title="Contents", body="".join(
        f'<a href="c{i}.xhtml">{t}</a> ' for i, (t, _) in enumerate(chapters)))  # fmt: skip
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
        '"application/oebps-package+xml"/></rootfiles></container>'
    )
    parts = [("mimetype", "application/epub+zip", zipfile.ZIP_STORED),
             ("META-INF/container.xml", container, zipfile.ZIP_DEFLATED),
             ("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED),
             ("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)]  # fmt: skip
    parts += [(f"OEBPS/c{i}.xhtml", _EPUB_CHAPTER.format(title=t, body=b), zipfile.ZIP_DEFLATED)
              for i, (t, b) in enumerate(chapters)]  # fmt: skip
    return _zip([(_info(name, method), text.encode()) for name, text, method in parts])


def built_seeds(embedder) -> list[Seed]:
    """Seeds for the formats the corpus has no file of."""
    made: list[tuple[str, str, Callable[[], bytes]]] = [
        (f"built/scan.{fmt}", f"scan.{fmt}", lambda fmt=fmt: _page_image(fmt))
        for fmt in ("png", "jpg", "tif", "webp")
    ]
    made += [(f"built/speech.{c}", f"speech.{c}", lambda c=c: _speech(c))
             for c in ("wav", "flac", "mp3")]  # fmt: skip
    made.append(("built/notebook.knownote", "notebook.knownote", lambda: _archive(embedder)))
    made.append(("built/book.epub", "book.epub", _epub))
    seeds = []
    for name, filename, make in made:
        data = make()
        ext = filename.rsplit(".", 1)[1]
        seeds.append(Seed(name, filename, _KINDS[ext], len(data), lambda data=data: data))
    return seeds


# --- mutations ------------------------------------------------------------------------------

Mutation = Callable[[bytes, random.Random], bytes]
_TOKENS = [b"\x00", b"\xff" * 8, b"\xef\xbb\xbf", b"\xfe\xff", b"%PDF-1.7\n", b"PK\x03\x04",
           b"<", b">", b"&", b"]]>", b"endobj", b"stream\n", b"<</Length 99999999>>",
           b"\r\n\r\n", b"\xe2\x80\xae", b"\xc3\x28", b"\xf4\x90\x80\x80", b"obj", b"R",
           b"9999999999"]  # fmt: skip


def _span(n: int, rng: random.Random) -> tuple[int, int]:
    start = rng.randrange(n + 1)
    return start, min(n, start + rng.choice([1, 4, 16, 64, 512, 4096]))


def flip(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    out = bytearray(data)
    for _ in range(rng.choice([1, 2, 4, 16, 64])):
        i = rng.randrange(len(out))
        out[i] = out[i] ^ (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(256)
    return bytes(out)


def insert(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    choice = rng.random()
    if choice < 0.4:
        piece = rng.choice(_TOKENS) * rng.choice([1, 1, 3, 100])
    elif choice < 0.7 and data:
        start, end = _span(len(data), rng)
        piece = data[start:end]
    else:
        piece = rng.randbytes(rng.choice([1, 8, 64, 1024]))
    return data[:at] + piece + data[at:]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def cut(data: bytes, rng: random.Random) -> bytes:
    start, end = _span(len(data), rng)
    return data[:start] + data[end:]


def repeat(data: bytes, rng: random.Random) -> bytes:
    start, end = _span(len(data), rng)
    return data[:end] + data[start:end] * rng.choice([2, 10, 200]) + data[end:]


BYTES: dict[str, Mutation] = {"flip": flip, "insert": insert, "truncate": truncate, "cut": cut,
                              "repeat": repeat}  # fmt: skip


# Markup: tags unbalanced, entities, huge attributes, encodings.
_TAG = re.compile(rb"<(/?)([A-Za-z][\w:.-]*)([^<>]*)>")


def _tags(data: bytes) -> list[re.Match]:
    return list(_TAG.finditer(data, 0, 2_000_000))


def unbalance(data: bytes, rng: random.Random) -> bytes:
    tags = _tags(data)
    if not tags or rng.random() < 0.3:
        at = rng.randrange(len(data) + 1)
        return (
            data[:at]
            + rng.choice([b"</p>", b"<div>", b"</body></html>", b"<b><i>", b"<"])
            + data[at:]
        )
    tag = rng.choice(tags)
    if rng.random() < 0.5:
        return data[: tag.start()] + data[tag.end() :]  # an opening or closing tag dropped
    swapped = b"<%s%s%s>" % (b"" if tag.group(1) else b"/", tag.group(2), tag.group(3))
    return data[: tag.start()] + swapped + data[tag.end() :]


def entities(data: bytes, rng: random.Random) -> bytes:
    refs = [b"&nosuch;", b"&#0;", b"&#x110000;", b"&#xD800;", b"&#99999999999;", b"&amp",
            b"&lt;&gt;" * 1000, b"&#x202E;", b"&"]  # fmt: skip
    if rng.random() < 0.3:  # internal entities that expand (a few levels: bounded, not a bomb)
        depth = rng.choice([2, 3, 5])
        decls = b'<!ENTITY e0 "ha">' + b"".join(
            b'<!ENTITY e%d "%s">' % (i, b"&e%d;" % (i - 1) * 10) for i in range(1, depth + 1)
        )
        root = (_TAG.search(data) or re.match(rb"()(x)()", b"x")).group(2)
        doctype = b"<!DOCTYPE %s [%s]>" % (root, decls)
        body = data if not data.startswith(b"<?xml") else data[data.find(b"?>") + 2 :]
        head = data[: len(data) - len(body)]
        text_at = body.find(b">", body.find(b"<t")) + 1 if b"<t" in body else len(body) // 2
        body = body[:text_at] + b"&e%d;" % depth + body[text_at:]
        return head + doctype + body
    at = _text_position(data, rng)
    return data[:at] + rng.choice(refs) + data[at:]


def _text_position(data: bytes, rng: random.Random) -> int:
    """A position just after a tag (in text, mostly), or anywhere."""
    tags = _tags(data)
    return rng.choice(tags).end() if tags else rng.randrange(len(data) + 1)


def huge_attribute(data: bytes, rng: random.Random) -> bytes:
    tags = [t for t in _tags(data) if not t.group(1)]
    value = rng.choice([b"A", b"\xe4\xb8\xad", b"&amp;"]) * rng.choice([10_000, 1_000_000])
    attribute = b' data-x="%s"' % value
    if not tags:
        return data + b"<p" + attribute + b">x</p>"
    tag = rng.choice(tags)
    at = tag.start() + 1 + len(tag.group(2))
    return data[:at] + attribute + data[at:]


def encoding(data: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(5)
    if choice == 0:  # re-encoded, with or without a byte order mark
        codec = rng.choice(["utf-16-le", "utf-16-be", "utf-32-le", "utf-16"])
        return data.decode("utf-8", "replace").encode(codec, "replace")
    label = rng.choice([b"utf-16", b"utf-32", b"cp037", b"shift_jis", b"x-no-such-charset",
                        b"latin-1", b"utf-7", b"gb18030", b""])  # fmt: skip
    if choice == 1 and data.startswith(b"<?xml"):
        end = data.find(b"?>") + 2
        return b'<?xml version="1.0" encoding="%s"?>' % label + data[end:]
    if choice == 2:
        return b'<?xml version="1.0" encoding="%s"?>' % label + data
    if choice == 3:
        return b'<meta charset="%s">' % label + data
    at = _text_position(data, rng)  # bytes that are not UTF-8 in the middle of the text
    return (
        data[:at]
        + rng.choice([b"\xff\xfe\x00", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80" * 50])
        + data[at:]
    )


def nesting(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([100, 5_000, 100_000])
    tag = rng.choice([b"div", b"w:sdt", b"b", b"table", b"li"])
    at = _text_position(data, rng)
    closing = b"</%s>" % tag * depth if rng.random() < 0.7 else b""
    return data[:at] + b"<%s>" % tag * depth + b"deep" + closing + data[at:]


def unterminated(data: bytes, rng: random.Random) -> bytes:
    at = _text_position(data, rng)
    return (
        data[:at]
        + rng.choice([b"<!--", b"<![CDATA[", b"<?pi", b'<a href="', b"<!DOCTYPE"])
        + data[at:]
    )


MARKUP: dict[str, Mutation] = {"unbalance": unbalance, "entities": entities,
                               "huge_attribute": huge_attribute, "encoding": encoding,
                               "nesting": nesting, "unterminated": unterminated}  # fmt: skip


# PDF: cross-reference tables and objects broken.
_XREF_ROW = re.compile(rb"(\d{10}) (\d{5}) ([nf])")
_OBJ = re.compile(rb"(\d+) (\d+) obj\b")
_LENGTH = re.compile(rb"/Length (\d+)")
_STREAM = re.compile(rb"stream\r?\n")


def xref_offsets(data: bytes, rng: random.Random) -> bytes:
    rows = list(_XREF_ROW.finditer(data))
    if not rows:
        return startxref(data, rng)
    out = bytearray(data)
    for row in rng.sample(rows, min(len(rows), rng.choice([1, 3, 1000]))):
        value = rng.choice([0, rng.randrange(len(data) + 1), len(data) + 10, 9_999_999_999])
        out[row.start(1) : row.end(1)] = b"%010d" % value
    return bytes(out)


def startxref(data: bytes, rng: random.Random) -> bytes:
    at = data.rfind(b"startxref")
    if at < 0:
        return flip(data, rng)
    end = data.find(b"%%EOF", at)
    end = end if end > 0 else len(data)
    value = rng.choice([b"0", b"-5", b"99999999999", b"%d" % rng.randrange(len(data)), b"x"])
    return data[:at] + b"startxref\n" + value + b"\n" + data[end:]


def delete_object(data: bytes, rng: random.Random) -> bytes:
    objects = list(_OBJ.finditer(data))
    if not objects:
        return cut(data, rng)
    obj = rng.choice(objects)
    end = data.find(b"endobj", obj.end())
    end = len(data) if end < 0 else end + len(b"endobj")
    return data[: obj.start()] + data[end:]


def stream_length(data: bytes, rng: random.Random) -> bytes:
    lengths = list(_LENGTH.finditer(data))
    if not lengths:
        return insert(data, rng)
    length = rng.choice(lengths)
    n = int(length.group(1))
    value = rng.choice([0, max(0, n - rng.randrange(1, 100)), n + rng.randrange(1, 1000), 2**40])
    return data[: length.start(1)] + b"%d" % value + data[length.end(1) :]


def stream_truncate(data: bytes, rng: random.Random) -> bytes:
    starts = list(_STREAM.finditer(data))
    if not starts:
        return truncate(data, rng)
    start = rng.choice(starts).end()
    end = data.find(b"endstream", start)
    if end < 0:
        return data[:start]
    keep = rng.randrange(end - start + 1)
    return data[: start + keep] + data[end:]


def object_tamper(data: bytes, rng: random.Random) -> bytes:
    swaps = [(rb"/Count \d+", [b"/Count 2147483647", b"/Count -1", b"/Count 0"]),
             (rb"/Type\s*/Page\b", [b"/Type /Pages", b"/Type /Catalog"]),
             (rb"/Kids\s*\[", [b"/Kids [1 0 R ", b"/Kids [999999 0 R "]),
             (rb"/FlateDecode", [b"/LZWDecode", b"/DCTDecode", b"/JBIG2Decode", b"/NoSuch"]),
             (rb"\d+ 0 R", [b"0 0 R", b"999999 0 R", b"1 0 R"]),
             (rb"/Root \d+ 0 R", [b"/Root 999 0 R", b"/Root 0 0 R"]),
             (rb"/Encrypt", [b"/Encrypt"]),
             (rb"/MediaBox\s*\[[^\]]*\]", [b"/MediaBox [0 0 1e30 1e30]", b"/MediaBox [0 0 0 0]",
                                           b"/MediaBox []"])]  # fmt: skip
    rng.shuffle(swaps)
    for pattern, replacements in swaps:
        found = list(re.finditer(pattern, data[:5_000_000]))
        if found:
            hit = rng.choice(found)
            return data[: hit.start()] + rng.choice(replacements) + data[hit.end() :]
    return flip(data, rng)


def trailer(data: bytes, rng: random.Random) -> bytes:
    at = data.rfind(b"trailer")
    if at < 0:
        return data[: data.rfind(b"%%EOF")] if b"%%EOF" in data else truncate(data, rng)
    return data[:at] + rng.choice([b"", b"trailer\n<< /Size 1 >>\n", b"trailer <<"])


PDF: dict[str, Mutation] = {"xref_offsets": xref_offsets, "startxref": startxref,
                            "delete_object": delete_object, "stream_length": stream_length,
                            "stream_truncate": stream_truncate, "object_tamper": object_tamper,
                            "trailer": trailer}  # fmt: skip


# ZIP containers: entries removed, renamed, duplicated, recompressed, their parts tampered with.
def _zip(entries: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    sink = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # duplicate names are the point
        with zipfile.ZipFile(sink, "w") as zf:
            for info, data in entries:
                zf.writestr(info, data)
    return sink.getvalue()


def _entries(data: bytes) -> list[tuple[zipfile.ZipInfo, bytes]] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return [(_info(i.filename, i.compress_type), zf.read(i)) for i in zf.infolist()]
    # what a damaged member raises while it is inflated (lzma and bz2 ones too)
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError,
            NotImplementedError):  # fmt: skip
        return None


def _info(name: str, compress_type: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, _FIXED_TIME)
    info.compress_type = compress_type
    return info


def zip_remove(entries, rng):
    del entries[rng.randrange(len(entries))]


def zip_rename(entries, rng):
    i = rng.randrange(len(entries))
    info, data = entries[i]
    name = rng.choice([info.filename.upper(), info.filename + ".bak", "../" + info.filename,
                       "/" + info.filename, info.filename.replace("/", "\\"),
                       rng.choice(entries)[0].filename, "\u00e9" + info.filename, ""])  # fmt: skip
    entries[i] = (_info(name, info.compress_type), data)


def zip_duplicate(entries, rng):
    info, data = rng.choice(entries)
    copy = data if rng.random() < 0.5 else flip(data, rng)
    entries.insert(
        rng.randrange(len(entries) + 1), (_info(info.filename, info.compress_type), copy)
    )


def zip_recompress(entries, rng):
    methods = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]
    chosen = range(len(entries)) if rng.random() < 0.5 else [rng.randrange(len(entries))]
    for i in chosen:
        info, data = entries[i]
        entries[i] = (_info(info.filename, rng.choice(methods)), data)


def zip_part(entries, rng):
    """One part tampered with: its markup if it is XML or HTML, its bytes otherwise."""
    endings = (".xml", ".rels", ".xhtml", ".html", ".opf", ".ncx")
    markup = [i for i, (info, _) in enumerate(entries) if info.filename.lower().endswith(endings)]
    if markup and rng.random() < 0.8:
        i = rng.choice(markup)
        _, mutation = rng.choice(list(MARKUP.items()))
    else:
        i = rng.randrange(len(entries))
        _, mutation = rng.choice(list(BYTES.items()))
    info, data = entries[i]
    entries[i] = (info, mutation(data, rng))


def archive_manifest(entries, rng):
    """The archive's manifest with a value of the wrong type, size or meaning."""
    names = [info.filename for info, _ in entries]
    if "manifest.json" not in names:
        return zip_part(entries, rng)
    i = names.index("manifest.json")
    try:
        manifest = json.loads(entries[i][1])
    except ValueError:  # damaged by an earlier step: its bytes instead
        return zip_part(entries, rng)
    if not isinstance(manifest, dict):
        return zip_part(entries, rng)
    key = rng.choice(["version", "format", "notebook", "entries", "rows", "digests"])
    value = rng.choice([None, -1, 2**70, "x", [], {}, 1.5, True])
    if isinstance(manifest.get(key), dict) and manifest[key] and rng.random() < 0.7:
        inner = rng.choice(sorted(manifest[key]))
        manifest[key][inner] = value
    else:
        manifest[key] = value
    entries[i] = (entries[i][0], json.dumps(manifest).encode())


ZIP = {"zip_remove": zip_remove, "zip_rename": zip_rename, "zip_duplicate": zip_duplicate,
       "zip_recompress": zip_recompress, "zip_part": zip_part}  # fmt: skip


def _zip_mutation(op) -> Mutation:
    def mutate(data: bytes, rng: random.Random) -> bytes:
        entries = _entries(data)
        if not entries:
            return flip(data, rng)
        op(entries, rng)
        return _zip(entries)

    return mutate


def png_size(data: bytes, rng: random.Random) -> bytes:
    """A PNG or WAV header that claims another size (with its checksum made right)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        w, h = rng.choice([(0, 0), (100_000, 100_000), (2**31 - 1, 1), (1, 2**31 - 1)])
        ihdr = b"IHDR" + struct.pack(">II", w, h) + data[24:29]
        return data[:12] + ihdr + struct.pack(">I", zlib.crc32(ihdr)) + data[33:]
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        at = data.find(b"data")
        if at > 0:
            size = rng.choice([0, 2**32 - 1, len(data) * 10])
            return data[: at + 4] + struct.pack("<I", size) + data[at + 8 :]
        return data[:24] + struct.pack("<I", rng.choice([0, 1, 2**32 - 1])) + data[28:]
    return flip(data, rng)


def mutations(kind: str) -> dict[str, Mutation]:
    """The mutations that fit a kind of file (byte mutations fit every kind)."""
    table = dict(BYTES)
    if kind == "html":
        table.update(MARKUP)
    if kind in ("md", "txt"):  # text in markup's clothes; nothing here makes megabytes of it
        table.update({n: MARKUP[n] for n in ("unbalance", "entities", "encoding", "unterminated")})
    if kind == "pdf":
        table.update(PDF)
    if kind in ("docx", "pptx", "epub", "archive"):
        table.update({name: _zip_mutation(op) for name, op in ZIP.items()})
    if kind == "archive":
        table["archive_manifest"] = _zip_mutation(archive_manifest)
    if kind in ("image", "recording"):
        table["header_size"] = png_size
    return table


def mutate(seed: Seed, data: bytes, run_seed: int, case: int) -> tuple[bytes, str]:
    """Case `case` of `seed` in run `run_seed`: always the same bytes, and the mutations'
    names."""
    rng = random.Random(f"{run_seed}/{seed.name}/{case}")
    table = mutations(seed.kind)
    names = sorted(table)
    structural = [n for n in names if n not in BYTES]
    steps = rng.choice([1, 1, 1, 2, 3])
    applied = []
    for step in range(steps):
        pool = structural if structural and step == 0 and rng.random() < 0.7 else names
        name = rng.choice(pool)
        data = table[name](data, rng)
        applied.append(name)
    return data, "+".join(applied)


EVERY_SEED = 5000  # each block of this many cases starts with one case of every seed


def pick(seeds: list[Seed], run_seed: int, case: int) -> Seed:
    """The seed of case `case`: every seed once in each block of EVERY_SEED cases, the other
    cases by weight."""
    if case % EVERY_SEED < len(seeds):
        return seeds[case % EVERY_SEED]
    rng = random.Random(f"{run_seed}/pick/{case}")
    return rng.choices(seeds, weights=[s.weight for s in seeds])[0]


# --- running --------------------------------------------------------------------------------


class CachedEmbedder:
    """The real embedder, remembering each passage's vector by its text: mutated copies of a
    document share most passages, and the model still embeds every new one."""

    def __init__(self, embedder, limit: int = 50_000) -> None:
        self.inner, self.name, self.limit = embedder, embedder.name, limit
        self.cache: dict[str, np.ndarray] = {}
        self.embedded = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_passages(self, texts, progress=None) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if new:
            if len(self.cache) + len(new) > self.limit:
                self.cache.clear()
            for text, vector in zip(new, self.inner.embed_passages(new), strict=True):
                self.cache[text] = vector
            self.embedded += len(new)
        if progress:
            progress(len(texts), len(texts))
        return (
            np.stack([self.cache[t] for t in texts])
            if texts
            else np.zeros((0, self.dim), "float32")
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


@dataclass(frozen=True)
class Outcome:
    seed: str
    kind: str
    case: int
    mutation: str
    size: int
    outcome: str  # "imported", "duplicate", an error class's name, or one of FAULTS / CRASH
    seconds: float
    detail: str = ""

    @property
    def fault(self) -> bool:
        return self.outcome in FAULTS


def _kept_files(store: Store) -> set[str]:
    folder = store.files_dir
    return {p.name for p in folder.iterdir()} if folder and folder.is_dir() else set()


def _rows(store: Store) -> tuple:
    """The number of rows in every table (in one query: it runs twice per case) and the kept
    files."""
    listed = "SELECT table_name FROM information_schema.tables ORDER BY table_name"
    tables = [row[0] for row in store.db.execute(listed).fetchall()]
    counts = store.db.execute(
        "SELECT " + ", ".join(f'(SELECT count(*) FROM "{t}")' for t in tables)
    ).fetchall()[0]
    return tuple(zip(tables, counts, strict=True)), _kept_files(store)


class Runner:
    """Cases imported one after another into a store that is checked whole (`knownote check`)
    and replaced every `per_db` cases."""

    def __init__(self, settings: Settings, embedder, folder: Path, per_db: int = 150) -> None:
        self.settings, self.embedder, self.folder, self.per_db = settings, embedder, folder, per_db
        self.store: Store | None = None
        self.in_store: list[Outcome] = []
        self.documents: dict[int, int] = {}  # document id -> its case's place in in_store
        self.databases = 0

    def _open(self) -> Store:
        if self.store is None:
            self.databases += 1
            self.home = self.folder / f"db{self.databases}"
            self.store = Store.open(self.settings.with_(home=self.home).db_path)
            self.notebook = self.store.create_notebook(
                "Fuzz", self.embedder.name, self.embedder.dim
            )
        return self.store

    def rotate(self) -> list[Outcome]:
        """`knownote check` on the current store (a case whose document fails it becomes a
        half-import), then a fresh store for the next cases; the finished cases."""
        if self.store is None:
            return []
        finished = self.in_store
        _, problems = check.check_store(self.store)
        if problems:
            blamed = False
            for document_id, place in self.documents.items():
                found = check.document_problems(self.store.db, document_id)
                if found:
                    finished[place] = replace(finished[place], outcome=HALF,
                                              detail="; ".join(found)[:1000])  # fmt: skip
                    blamed = True
            if not blamed:  # orphan rows or kept files: the last case of the store is named
                said = "knownote check: " + "; ".join(problems)[:1000]
                finished[-1] = replace(finished[-1], outcome=HALF, detail=said)
        self.store.close()
        shutil.rmtree(self.home, ignore_errors=True)
        self.store, self.in_store, self.documents = None, [], {}
        return finished

    def run(self, seed: Seed, data: bytes, case: int, mutation: str) -> list[Outcome]:
        """Import one case; the cases finished by it (all of a store when it is replaced)."""
        store = self._open()
        before = _rows(store)
        limit = self.settings.max_extract_seconds * max(1, _pages_guess(seed)) + 60
        started = time.monotonic()
        detail = ""
        try:
            if seed.kind == "archive":
                outcome, detail = self._archive(store, data, case)
            else:
                result = import_file(store, self.notebook, seed.filename, data,
                                     settings=self.settings, embedder=self.embedder)  # fmt: skip
                if result.status == "failed":
                    outcome, detail = result.error_kind or "KnowNoteError", result.error or ""
                else:
                    outcome = result.status  # its document is checked whole in rotate()
                    if result.status == "imported":
                        self.documents[result.document_id] = len(self.in_store)
        except Exception:  # the fuzzer's whole point: anything that escapes is a finding
            outcome, detail = UNHANDLED, traceback.format_exc()[-3000:]
        took = time.monotonic() - started
        outcome = {"ReaderFailed": UNHANDLED, "ReaderCrashed": CRASH}.get(outcome, outcome)
        if outcome not in ("imported", "duplicate", HALF, UNHANDLED) and _rows(store) != before:
            outcome, detail = HALF, f"rows or kept files changed by a refused file: {detail}"
        if took > limit:
            outcome, detail = HANG, f"{took:.0f} s (limit {limit:.0f} s): {detail}"
        self.in_store.append(Outcome(seed.name, seed.kind, case, mutation, len(data), outcome,
                                     took, detail[:3000]))  # fmt: skip
        return self.rotate() if len(self.in_store) >= self.per_db else []

    def _archive(self, store: Store, data: bytes, case: int) -> tuple[str, str]:
        path = self.folder / "case.knownote"
        path.write_bytes(data)
        try:
            import_notebook(store, path, name=f"Archive {case}",
                            max_bytes=self.settings.max_archive_mb * 1024 * 1024)  # fmt: skip
        except KnowNoteError as e:
            return type(e).__name__, str(e)
        return "imported", ""


_PAGES: dict[str, int] = {}


def _pages_guess(seed: Seed) -> int:
    """The seed's pages (PDF) or minutes, for the bound past which a case counts as a hang."""
    if seed.name not in _PAGES:
        from knownote.read.timelimit import count_parts

        _PAGES[seed.name] = count_parts(seed.load())
    return _PAGES[seed.name] * 2


def cases(
    seeds: list[Seed], run_seed: int, count: int, start: int = 0
) -> Iterator[tuple[Seed, int]]:
    for case in range(start, start + count):
        yield pick(seeds, run_seed, case), case


def fuzz_settings(home: Path, seconds: float = 10.0) -> Settings:
    """The app's settings with a shorter reading limit (seconds per page), so that a file
    that hangs a reader costs the run seconds, not minutes."""
    return Settings().with_(home=home, max_extract_seconds=seconds)


# --- regressions ----------------------------------------------------------------------------


def load_regressions() -> list[dict]:
    return json.loads(REGRESSIONS.read_text()) if REGRESSIONS.exists() else []


def regenerate(recipe: dict, seeds: dict[str, Seed]) -> tuple[Seed, bytes, str]:
    """A kept recipe's seed, input bytes and mutations: a corpus document's made again, a built
    seed's as kept in KEPT_INPUTS."""
    seed = seeds[recipe["seed"]]
    if not recipe["seed"].startswith("docs/"):
        kept = KEPT_INPUTS / (recipe["sha256"] + Path(recipe["seed"]).suffix)
        return seed, kept.read_bytes(), recipe["mutation"]
    data, mutation = mutate(seed, seed.load(), recipe["run_seed"], recipe["case"])
    return seed, data, mutation
