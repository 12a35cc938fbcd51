"""File bytes -> canonical text, page ranges and warnings.

The text returned here is the canonical text of a document: every offset in the system indexes
exactly this string, so all cleaning happens here and nowhere later. Pages are cleaned one by one
and joined with "\\n\\n"; the separator belongs to no page.
"""

from __future__ import annotations

import codecs
import io
import posixpath
import re
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import charset_normalizer
import docx
import docx.opc.exceptions
import pptx
import pptx.exc
import pymupdf
from lxml import etree
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape

from knownote.errors import (
    FileTooLarge,
    NoTextLayer,
    PasswordRequired,
    UnreadableFile,
    UnsupportedFile,
)
from knownote.sections import Heading
from knownote.store import OcrPage

SUPPORTED = (
    "PDF, Word (.docx), PowerPoint (.pptx), EPUB, HTML, Markdown, plain text, "
    "and scans or photos (PNG, JPEG, TIFF, WebP) read by OCR"
)
PAGE_SEPARATOR = "\n\n"
# Ligatures are expanded ("ﬁ" -> "fi") so words are searchable; everything else is MuPDF's default.
PDF_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES


OcrProgress = Callable[[int, int], None]  # (pages read by OCR so far, pages to read)


@dataclass(frozen=True)
class OcrLimits:
    """How pages are read by OCR, and the limits that keep a hostile file bounded."""

    dpi: int = 200
    max_megapixels: int = 100
    max_pages: int = 200  # 0 switches OCR off
    threads: int = 2
    engine: str = "auto"  # "auto", "tesseract" or "rapidocr": see ocr.engine_for
    languages: str = "eng+chi_sim+jpn+kor"  # Tesseract's, "+"-joined (ocr.DEFAULT_LANGUAGES)


@dataclass(frozen=True)
class Page:
    number: int  # 1-based page / slide / chapter number
    start: int  # str index into Extracted.text
    end: int  # exclusive; text[start:end] is that page's text


@dataclass(frozen=True)
class Extracted:
    text: str
    kind: str  # "pdf", "docx", "pptx", "epub", "html", "txt", "md"
    pages: tuple[Page, ...]  # empty for formats without pages (docx, html, txt, md)
    title: str | None
    warnings: tuple[str, ...]
    ocr_pages: tuple[OcrPage, ...] = field(default=())  # pages read by OCR, with their boxes
    headings: tuple[Heading, ...] = field(default=())  # in text order (see sections.py)


# ---------------------------------------------------------------- cleaning

# C0/C1 controls go, except tab and newline; other line and page breaks become newlines.
_CHAR_MAP: dict[int, str | None] = {c: None for c in [*range(0x20), *range(0x7F, 0xA0)]}
_CHAR_MAP.update({0x09: "\t", 0x0A: "\n", 0xA0: " ", 0xFEFF: None, 0xFFFE: None, 0xFFFF: None})
_CHAR_MAP.update(dict.fromkeys([0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029], "\n"))
_SURROGATES = re.compile("[\ud800-\udfff]")
_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n{3,}")


def _scrub(text: str) -> str:
    """Line endings and invisible control characters; safe to run before parsing markup."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_CHAR_MAP)
    return _SURROGATES.sub("\ufffd", text)


def clean_text(text: str) -> str:
    """The canonical form of one page (or of a whole document without pages)."""
    text = _scrub(text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    text = _TRAILING_SPACE.sub("", text)
    return _BLANK_LINES.sub("\n\n", text).strip()


def _join_pages(texts: list[str]) -> tuple[str, tuple[Page, ...]]:
    pages, pos = [], 0
    for number, text in enumerate(texts, 1):
        if number > 1:
            pos += len(PAGE_SEPARATOR)
        pages.append(Page(number, pos, pos + len(text)))
        pos += len(text)
    return PAGE_SEPARATOR.join(texts), tuple(pages)


_JUNK_TITLE = re.compile(
    r"(untitled.*|document\s*\d*|title|slide\s*\d+|(powerpoint\s+)?presentation\s*\d*"
    r"|microsoft\s+\w+\s+-.*|\S+\.(pdf|docx?|pptx?|xlsx?|rtf|odt|txt|tex|dvi|e?ps|indd|qxd"
    r"|html?|jpe?g|png|gif|tiff?)\b.*|\W*)",
    re.IGNORECASE,
)


def _good_title(raw: str | None) -> str | None:
    title = " ".join(clean_text(raw or "").split())
    if not title or len(title) > 300 or _JUNK_TITLE.fullmatch(title):
        return None
    return title


# ---------------------------------------------------------------- decoding and sniffing

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_WESTERN_DEFAULT = "cp1252"  # what browsers use for latin-1/ascii labels and undeclared bytes
_DECLARED_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)|<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""",
    re.IGNORECASE,
)
_HTML_MARKER = re.compile(r"<(html|head|body)[\s>]")
_NOT_TEXT = re.compile(r"[\x00-\x08\x0e-\x1f\ufffd]")


@dataclass(frozen=True)
class _Decoded:
    text: str
    warnings: tuple[str, ...]


def _display_name(filename: str) -> str:
    return re.split(r"[\\/]", filename)[-1] or "The file"


def _extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _declared_charset(data: bytes) -> str | None:
    match = _DECLARED_CHARSET.search(data[:4096])
    if not match:
        return None
    try:
        codec = codecs.lookup((match.group(1) or match.group(2)).decode("ascii")).name
    except LookupError:
        return None
    if codec in ("iso8859-1", "ascii"):
        return _WESTERN_DEFAULT
    # utf-8 is tried first anyway; a utf-16 label in an ASCII-readable header is a lie.
    return None if codec.startswith(("utf-8", "utf-16", "utf-32")) else codec


def _guess_encoding(data: bytes) -> str:
    results = list(charset_normalizer.from_bytes(data))
    if not results:
        return _WESTERN_DEFAULT
    # Ties are common among Latin code pages; windows-1252 is the likeliest of them.
    best = min(results, key=lambda r: (r.chaos, r.encoding != _WESTERN_DEFAULT))
    return _WESTERN_DEFAULT if best.encoding in ("latin_1", "iso8859_1", "ascii") else best.encoding


def _decode(data: bytes, name: str, declared: str | None = None) -> _Decoded:
    encoding, guessed = declared, False
    for bom, bom_encoding in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], bom_encoding
            break
    if encoding is None:
        try:
            return _Decoded(data.decode("utf-8"), ())
        except UnicodeDecodeError:
            encoding, guessed = _guess_encoding(data), True
    text = data.decode(encoding, errors="replace")
    warnings = []
    if guessed:
        warnings.append(
            f"{name} does not say which text encoding it uses, so it was read as {encoding}. "
            "If some characters look wrong, save it as UTF-8 and import it again."
        )
    if bad := text.count("\ufffd"):
        warnings.append(f"{bad} characters in {name} could not be decoded and show as �.")
    return _Decoded(text, tuple(warnings))


def _text_head(data: bytes) -> str:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) : 4096].decode(encoding, errors="ignore")
    return data[:4096].decode("latin-1")


def _looks_like_html(data: bytes) -> bool:
    head = _text_head(data).lstrip().lower()
    if head.startswith(("<!doctype html", "<html")):
        return True
    return head.startswith("<") and _HTML_MARKER.search(head) is not None


def _looks_like_text(text: str) -> bool:
    return len(_NOT_TEXT.findall(text)) <= 0.05 * len(text)


def _zip_kind(zf: zipfile.ZipFile, name: str) -> str:
    names = set(zf.namelist())
    if "word/document.xml" in names:
        return "docx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    mimetype = b""
    if "mimetype" in names and zf.getinfo("mimetype").file_size < 200:
        with zf.open("mimetype") as member:  # a bounded read: sizes are not checked yet
            mimetype = member.read(200).strip()
    if mimetype == b"application/epub+zip" or "META-INF/container.xml" in names:
        return "epub"
    if "xl/workbook.xml" in names:
        raise UnsupportedFile(
            f"{name} is a spreadsheet, which KnowNote cannot import. "
            "Save it as PDF or CSV and import that instead."
        )
    if mimetype.startswith(b"application/vnd.oasis.opendocument"):
        raise UnsupportedFile(
            f"{name} is an OpenDocument file. Save it as .docx, .pptx or PDF "
            "and import that instead."
        )
    raise UnsupportedFile(
        f"{name} is a ZIP archive. Unpack it and import the documents inside ({SUPPORTED})."
    )


_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,  # unknown compression method
    ValueError,  # damaged headers: negative seek offsets, member names that are not UTF-8
)
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _sniff(data: bytes, name: str) -> tuple[str, zipfile.ZipFile | _Decoded | None]:
    ext = _extension(name)
    if not data:
        raise UnreadableFile(f"{name} is empty (0 bytes): nothing to import.")
    if b"%PDF-" in data[:1024]:
        return "pdf", None
    if data.startswith(_OLE2):
        if ext in ("docx", "pptx", "xlsx"):
            raise UnsupportedFile(
                f"{name} is password-protected, which KnowNote can only open for "
                "PDFs. Remove the password in Office and import it again."
            )
        raise UnsupportedFile(
            f"{name} is an old Microsoft Office file (.doc, .xls or .ppt). "
            "Save it as .docx, .pptx or PDF and import that instead."
        )
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
            return _zip_kind(zf, name), zf
        except _ZIP_ERRORS:
            raise UnreadableFile(
                f"{name} is damaged: its ZIP container cannot be read. Download or export it again."
            ) from None
    if data.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"II*\x00", b"MM\x00*")) or (
        data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    ):
        return "image", None
    if data.startswith(b"{\\rtf"):
        raise UnsupportedFile(f"{name} is an RTF file. Save it as .docx or PDF and import that.")
    if _looks_like_html(data):
        return "html", _decode(data, name, _declared_charset(data))
    decoded = _decode(data, name)
    if not _looks_like_text(decoded.text):
        if ext in ("pdf", "docx", "pptx", "epub"):
            raise UnreadableFile(
                f"{name} is damaged or not really a .{ext} file: its content is "
                "not in that format. Download or export it again."
            )
        raise UnsupportedFile(
            f"{name} is not a format KnowNote can import. Supported formats: {SUPPORTED}."
        )
    if ext in ("md", "markdown"):
        return "md", decoded
    return ("html" if ext in ("html", "htm", "xhtml") else "txt"), decoded


def detect_kind(data: bytes, filename: str) -> str:
    """The document kind, decided by content first and by the file extension as a hint."""
    return _sniff(data, _display_name(filename))[0]


# ---------------------------------------------------------------- PDF


def pdf_page_text(page: pymupdf.Page) -> str:
    """Exactly the text one PDF page contributes to the canonical text."""
    return clean_text(page.get_text("text", flags=PDF_TEXT_FLAGS))


def _open_pdf(data: bytes, name: str, password: str | None) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.FileDataError:
        raise UnreadableFile(
            f"{name} is damaged: it cannot be opened as a PDF. Download or export it again."
        ) from None
    if doc.needs_pass:
        if not password:
            raise PasswordRequired(
                f"{name} is password-protected: enter its password to import it."
            )
        if not doc.authenticate(password):
            raise PasswordRequired(f"The password for {name} is wrong: check it and try again.")
    if doc.page_count == 0:
        raise UnreadableFile(
            f"{name} is damaged: no pages can be read from it. Download or export it again."
        )
    return doc


def _pdf_warnings(name: str, count: int, ocr_read: int, unreadable: list[int]) -> list[str]:
    warnings = []
    if ocr_read:
        warnings.append(ocr_warning(ocr_read))
    if unreadable:
        listed = ", ".join(map(str, unreadable[:10])) + (" …" if len(unreadable) > 10 else "")
        warnings.append(f"Some pages of {name} are damaged and could not be read: {listed}.")
    return warnings


@dataclass(frozen=True)
class _Layers:
    texts: list[str]  # per page, its text layer's canonical text ("" when unreadable)
    to_read: list[int]  # 0-based indices of the pages to read by OCR
    unreadable: list[int]  # 1-based numbers of damaged pages


def _read_layers(doc: pymupdf.Document) -> _Layers:
    """Every page's text layer, and which pages need OCR instead (see `knownote.scans`)."""
    from knownote import scans  # here: scans imports the OCR engine, which imports this module

    texts, blank, layered, unreadable = [], [], [], []
    for index in range(doc.page_count):
        try:
            page = doc.load_page(index)
            text = pdf_page_text(page)
            if scans.has_no_text_layer(page, text):
                blank.append(index)
            elif _text_chars(text) and scans.has_invisible_layer_over_image(page):
                layered.append(index)
        except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError):
            text = ""
            unreadable.append(index + 1)
        texts.append(text)
    if layered and scans.noisy_layer([texts[i] for i in layered]):
        blank = sorted(blank + layered)
    return _Layers(texts, blank, unreadable)


def pdf_pages_to_ocr(doc: pymupdf.Document) -> list[int]:
    """The 1-based numbers of the pages of an open PDF that an import reads by OCR."""
    return [index + 1 for index in _read_layers(doc).to_read]


def ocr_warning(pages: int) -> str:
    """What a source says about its pages read by OCR."""
    what = "1 page" if pages == 1 else f"{pages:,} pages"
    return f"{what} read by OCR; check quotes against the page image."


def _extract_pdf(
    data: bytes,
    name: str,
    password: str | None,
    max_chars: int,
    max_pages: int,
    ocr: OcrLimits,
    progress: OcrProgress | None,
) -> Extracted:
    from knownote import scans  # here: scans imports the OCR engine, which imports this module

    with _open_pdf(data, name, password) as doc:
        count = doc.page_count
        if count > max_pages:
            raise FileTooLarge(
                f"{name} has {count} pages, more than the limit of {max_pages}. "
                "Split it into smaller files."
            )
        layers = _read_layers(doc)
        texts, unreadable = layers.texts, layers.unreadable
        to_read, skipped = layers.to_read, 0
        if ocr.max_pages == 0:  # OCR is switched off: those pages keep what text they have
            skipped, to_read = len(to_read), []
        if len(to_read) > ocr.max_pages:
            raise FileTooLarge(
                f"{name} has {len(to_read):,} pages to read by OCR, more than the limit of "
                f"{ocr.max_pages} (setting max_ocr_pages). Split it into smaller files."
            )
        ocr_pages, refused = [], []
        if progress and to_read:
            progress(0, len(to_read))
        pages = (doc.load_page(index) for index in to_read)
        read_all = scans.ocr_pdf_pages(pages, ocr, name)
        for n, (index, read) in enumerate(zip(to_read, read_all, strict=True), 1):
            if isinstance(read, FileTooLarge):
                texts[index], refused = "", [*refused, str(read)]
            else:
                texts[index] = read[0]
                ocr_pages.append(read[1])
            if progress and n < len(to_read):
                progress(n, len(to_read))
        if progress and to_read:
            progress(len(to_read), len(to_read))
        total = sum(len(t) + len(PAGE_SEPARATOR) for t in texts)
        if total > max_chars + len(PAGE_SEPARATOR):
            raise _too_many_chars(name, max_chars)
        if not any(texts):
            if refused:
                raise FileTooLarge(refused[0])
            raise NoTextLayer(
                f"{name} has no text: its pages hold neither a text layer nor anything OCR "
                "could read."
            )
        warnings = _pdf_warnings(name, count, len(ocr_pages), unreadable)
        if skipped:
            warnings.append(
                f"{skipped} of {count} pages have no usable text layer (only images, or a noisy "
                "OCR layer) and OCR is off (setting max_ocr_pages), so they are not searchable."
            )
        warnings.extend(refused[:3])
        if doc.is_repaired:
            warnings.append(f"{name} was damaged and has been repaired; some text may be missing.")
        text, pages = _join_pages(texts)
        title = _good_title((doc.metadata or {}).get("title"))
    return Extracted(text, "pdf", pages, title, tuple(warnings), tuple(ocr_pages))


def _text_chars(text: str) -> int:
    return len("".join(text.split()))


def _extract_image(
    data: bytes, name: str, max_chars: int, ocr: OcrLimits, progress: OcrProgress | None
) -> Extracted:
    from knownote import scans  # here: scans imports the OCR engine, which imports this module

    texts, ocr_pages = scans.read_image(data, name, ocr, progress)
    if not any(texts):
        raise NoTextLayer(f"{name} is an image in which OCR found no text.")
    text, pages = _join_pages(texts)
    if len(text) > max_chars:
        raise _too_many_chars(name, max_chars)
    warnings = (ocr_warning(len(ocr_pages)),)
    return Extracted(text, "image", pages, None, warnings, tuple(ocr_pages))


def _too_many_chars(name: str, max_chars: int) -> FileTooLarge:
    return FileTooLarge(
        f"{name} has more than {max_chars:,} characters of text, over the limit "
        "(setting max_text_chars). Split it into smaller files."
    )


# ---------------------------------------------------------------- ZIP-based formats


def _check_zip(zf: zipfile.ZipFile, data: bytes, name: str, max_chars: int) -> None:
    # Markup is several bytes per character of text, so allow ten.
    limit = 10 * max_chars
    infos = zf.infolist()
    if any(info.flag_bits & 0x1 for info in infos):
        raise UnsupportedFile(f"{name} is encrypted. Remove the password and import it again.")
    if sum(info.file_size for info in infos) > limit:
        raise FileTooLarge(
            f"{name} unpacks to more than {limit // 1_000_000} MB, over the limit "
            "(ten times the setting max_text_chars). Split it into smaller files."
        )
    # zipfile stops at the declared size, but zf.read() (python-docx and python-pptx call it)
    # inflates a whole member in one call first: a member that lies about its size would fill
    # memory. So each member is inflated here once, in small steps, and must keep its word.
    for info in infos:
        if problem := _member_problem(data, info):
            raise UnreadableFile(
                f"{name} is damaged: its part {info.filename} {problem}. "
                "Download or export it again."
            )


_LOCAL_HEADER = 30  # bytes before a member's name in its local header
_INFLATE_STEP = 1 << 16


def _member_problem(data: bytes, info: zipfile.ZipInfo) -> str | None:
    """Why a member cannot be read safely, or None. Stored members are fine: zipfile reads them
    no further than their compressed size. Deflated ones must inflate to at most their size."""
    if info.compress_type == zipfile.ZIP_STORED:
        return None
    if info.compress_type != zipfile.ZIP_DEFLATED:  # Office files and EPUBs never use others
        return f"uses a compression method ({info.compress_type}) these files never use"
    header = data[info.header_offset : info.header_offset + _LOCAL_HEADER]
    if len(header) < _LOCAL_HEADER or not header.startswith(b"PK\x03\x04"):
        return "cannot be found where the archive says it is"
    name_length = int.from_bytes(header[26:28], "little")
    extra_length = int.from_bytes(header[28:30], "little")
    start = info.header_offset + _LOCAL_HEADER + name_length + extra_length
    stream = memoryview(data)[start : start + info.compress_size]
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    total = 0
    try:
        for at in range(0, len(stream), _INFLATE_STEP):
            pending = bytes(stream[at : at + _INFLATE_STEP])
            while pending and not inflater.eof:
                total += len(inflater.decompress(pending, _INFLATE_STEP))
                if total > info.file_size:
                    return f"unpacks to more than the {info.file_size:,} bytes it declares"
                pending = inflater.unconsumed_tail
            if inflater.eof:
                break
    except zlib.error:
        return None  # damaged, not too big: the reader reports it in its own words
    return None


_OFFICE_ERRORS = (
    *_ZIP_ERRORS,
    KeyError,
    etree.XMLSyntaxError,
    docx.opc.exceptions.PackageNotFoundError,
    pptx.exc.PythonPptxError,
)


def _office_error(name: str, ext: str, error: Exception) -> UnsupportedFile | UnreadableFile:
    # python-docx and python-pptx raise ValueError("... content type is ...") for the
    # macro-enabled, template and show variants of their formats.
    if isinstance(error, ValueError) and "content type" in str(error):
        return UnsupportedFile(
            f"{name} is a macro-enabled, template or show variant of .{ext}, which KnowNote "
            f"cannot open. Save it as a regular .{ext} file and import that."
        )
    return _damaged(name, "Word document" if ext == "docx" else "presentation")


def _damaged(name: str, what: str) -> UnreadableFile:
    return UnreadableFile(
        f"{name} is damaged: its {what} cannot be read. "
        "Open it in its application, save a new copy and import that."
    )


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_NS = {
    "w": _W[1:-1],
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
}
# Runs in reading order; skip the fallback copy of alternate content, text boxes and text that
# tracked changes moved away (it is repeated where it moved to).
_DOCX_RUN_ITEMS = etree.XPath(
    ".//w:r[not(ancestor::mc:Fallback or ancestor::w:txbxContent or ancestor::w:moveFrom)]"
    "/*[self::w:t or self::w:tab or self::w:br or self::w:cr or self::w:noBreakHyphen]",
    namespaces=_NS,
)
_DOCX_RUN_TEXT = {f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n", f"{_W}noBreakHyphen": "-"}


def _docx_paragraph(p: etree._Element) -> str:
    return "".join(
        el.text or "" if el.tag == f"{_W}t" else _DOCX_RUN_TEXT[el.tag] for el in _DOCX_RUN_ITEMS(p)
    )


def _docx_table(tbl: etree._Element) -> str:
    rows = []
    for tr in tbl.iterchildren(f"{_W}tr"):
        cells = []
        for tc in tr.iterchildren(f"{_W}tc"):
            merge = tc.find("w:tcPr/w:vMerge", _NS)
            if merge is None:
                merge = tc.find("w:tcPr/w:hMerge", _NS)
            if merge is not None and merge.get(f"{_W}val") != "restart":
                continue  # continuation of a merged cell: its text is in the first cell
            if text := "\n".join(_docx_blocks(tc)):
                cells.append(text)
        if cells:
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _docx_blocks(parent: etree._Element) -> Iterator[str]:
    """Non-empty paragraphs and tables under a body or cell, in reading order."""
    for child in parent:
        if child.tag == f"{_W}p":
            text = _docx_paragraph(child)
        elif child.tag == f"{_W}tbl":
            text = _docx_table(child)
        elif child.tag in (f"{_W}sdt", f"{_W}customXml"):
            content = child.find("w:sdtContent", _NS) if child.tag == f"{_W}sdt" else child
            text = "\n\n".join(_docx_blocks(content)) if content is not None else ""
        else:
            continue
        if text.strip():
            yield text


def _extract_docx(data: bytes, name: str) -> Extracted:
    try:
        document = docx.Document(io.BytesIO(data))
        body = document.element.body
        title = _good_title(document.core_properties.title)
    except _OFFICE_ERRORS as error:
        raise _office_error(name, "docx", error) from None
    text = clean_text("\n\n".join(_docx_blocks(body)))
    return Extracted(text, "docx", (), title, ())


def _pptx_shape_texts(shapes: Iterable[BaseShape]) -> Iterator[str]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _pptx_shape_texts(shape.shapes)
        elif shape.has_text_frame:
            yield shape.text_frame.text
        elif shape.has_table:
            rows = []
            for row in shape.table.rows:
                cells = [c.text.strip() for c in row.cells if not c.is_spanned and c.text.strip()]
                rows.append(" | ".join(cells))
            yield "\n".join(rows)


def _extract_pptx(data: bytes, name: str, max_pages: int) -> Extracted:
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
        title = _good_title(presentation.core_properties.title)
    except _OFFICE_ERRORS as error:
        raise _office_error(name, "pptx", error) from None
    if len(slides) > max_pages:
        raise FileTooLarge(
            f"{name} has {len(slides)} slides, more than the limit of {max_pages}. "
            "Split it into smaller files."
        )
    texts = []
    for slide in slides:
        parts = [t for t in _pptx_shape_texts(slide.shapes) if t.strip()]
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            parts.append("Notes:\n" + notes.text)
        texts.append(clean_text("\n\n".join(parts)))
    text, pages = _join_pages(texts)
    return Extracted(text, "pptx", pages, title, ())


_XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True, remove_pis=True
)


def _epub_opf_path(zf: zipfile.ZipFile) -> str | None:
    if "META-INF/container.xml" not in zf.namelist():
        return next((n for n in zf.namelist() if n.endswith(".opf")), None)
    container = etree.fromstring(zf.read("META-INF/container.xml"), _XML_PARSER)
    rootfile = container.find(".//{*}rootfile")
    return rootfile.get("full-path") if rootfile is not None else None


def _extract_epub(zf: zipfile.ZipFile, name: str, max_pages: int) -> Extracted:
    try:
        opf_path = _epub_opf_path(zf)
        opf = etree.fromstring(zf.read(opf_path), _XML_PARSER) if opf_path else None
    except (*_ZIP_ERRORS, KeyError, etree.XMLSyntaxError):
        opf = None
    if opf is None:
        raise _damaged(name, "table of contents (OPF)")
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in opf.iter("{*}item")}
    spine = [
        manifest[ref.get("idref")] for ref in opf.iter("{*}itemref") if ref.get("idref") in manifest
    ]
    if len(spine) > max_pages:
        raise FileTooLarge(
            f"{name} has {len(spine)} chapters, more than the limit of "
            f"{max_pages}. Split it into smaller files."
        )
    texts, missing = [], 0
    for item in spine:
        href = unquote((item.get("href") or "").split("#")[0])
        if "html" not in (item.get("media-type") or "") and not href.endswith(("htm", "html")):
            continue
        try:
            raw = zf.read(posixpath.normpath(posixpath.join(base, href)))
        except (*_ZIP_ERRORS, KeyError):
            missing += 1
            continue
        markup = _decode(raw, name, _declared_charset(raw)).text
        if text := clean_text(_html_to_text(markup, xml_first=True)[0]):
            texts.append(text)
    warnings = (f"{missing} chapters are missing from {name} and were skipped.",) if missing else ()
    title_el = opf.find(".//{*}metadata/{*}title")
    title = _good_title("".join(title_el.itertext()) if title_el is not None else None)
    text, pages = _join_pages(texts)
    return Extracted(text, "epub", pages, title, warnings)


# ---------------------------------------------------------------- HTML


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HTML_PARSER = etree.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
_SKIP = _words("head script style noscript template svg iframe object embed canvas nav ix:header")
_PARAGRAPH = _words(
    "p h1 h2 h3 h4 h5 h6 table ul ol dl blockquote pre section article header footer aside main "
    "figure hr address form fieldset details"
)
_LINE = _words("div li tr br dt dd caption figcaption summary legend option center body")
_SEPARATOR_RANK = {"": 0, " | ": 1, "\n": 2, "\n\n": 3}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_HTML_SPACE = re.compile(r"[ \t\n\f]+")
_XML_PROLOG = re.compile(r"^\s*<\?xml[^>]*\?>")
_XHTML = "{http://www.w3.org/1999/xhtml}"


def _tag(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""  # entity reference
    if tag.startswith("{"):
        local = tag.rsplit("}", 1)[1]
        tag = local if tag.startswith(_XHTML) or not el.prefix else f"{el.prefix}:{local}"
    return tag.lower()


def _parse_html(markup: str, xml_first: bool) -> etree._Element | None:
    markup = _XML_PROLOG.sub("", _scrub(markup), count=1)
    if xml_first:  # XHTML is XML; the HTML parser would misread things like <title/>
        try:
            return etree.fromstring(markup, _XML_PARSER)
        except etree.XMLSyntaxError:
            pass
    try:
        return etree.fromstring(markup, _HTML_PARSER)
    except etree.ParserError:
        return None


def _html_to_text(markup: str, xml_first: bool = False) -> tuple[str, str | None]:
    """Visible text of an HTML/XHTML document (blocks become line breaks) and its title."""
    root = _parse_html(markup, xml_first)
    if root is None:
        return "", None
    out: list[str] = []
    pending, row_start, in_pre = "", 0, 0

    def request(separator: str) -> None:
        nonlocal pending
        if _SEPARATOR_RANK[separator] > _SEPARATOR_RANK[pending]:
            pending = separator

    def emit(text: str | None) -> None:
        nonlocal pending
        if not text:
            return
        if not in_pre:
            text = _HTML_SPACE.sub(" ", text)
            if pending or not out or out[-1].endswith((" ", "\n")):
                text = text.lstrip(" ")
        if not text:
            return
        if pending and out:
            out[-1] = out[-1].rstrip(" ")
            out.append(pending)
        pending = ""
        out.append(text)

    walker = etree.iterwalk(root, events=("start", "end"))
    skipped = False
    for event, el in walker:
        tag = _tag(el)
        if event == "start":
            if (
                tag in _SKIP
                or el.get("hidden") is not None
                or (_HIDDEN_STYLE.search(el.get("style") or ""))
            ):
                walker.skip_subtree()
                skipped = True  # the next event is this element's "end"
                continue
            if tag in ("td", "th"):
                if len(out) > row_start:
                    request(" | ")
            elif tag in _PARAGRAPH or tag in _LINE:
                request("\n\n" if tag in _PARAGRAPH else "\n")
                row_start = len(out) if tag == "tr" else row_start
            in_pre += tag in ("pre", "textarea")
            emit(el.text)
            continue
        if not skipped:
            if tag in _PARAGRAPH or tag in _LINE:
                request("\n\n" if tag in _PARAGRAPH else "\n")
            in_pre -= tag in ("pre", "textarea")
        skipped = False
        if el is not root:
            emit(el.tail)
    title_el = next(root.iter("{*}title"), None)
    if title_el is None:
        title_el = next(root.iter("{*}h1"), None)
    title = "".join(title_el.itertext()) if title_el is not None else None
    return "".join(out), title


# ---------------------------------------------------------------- text formats and entry point

_MD_TITLE = re.compile(r"#\s+(.+?)(\s+#+)?\s*")
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def _markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX headings ("## Training") outside code fences, as ranges of their words."""
    headings, fenced, pos = [], False, 0
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _MD_HEADING.match(line)):
            headings.append(Heading(pos + match.start(2), pos + match.end(2), len(match.group(1))))
        pos += len(line) + 1
    return tuple(headings)


def _markdown_title(text: str) -> str | None:
    """The first level-1 ATX heading near the top, outside code fences."""
    fenced = False
    for line in text.split("\n", 50)[:50]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _MD_TITLE.fullmatch(line)):
            return _good_title(match.group(1))
    return None


def extract(
    data: bytes,
    filename: str,
    password: str | None = None,
    *,
    max_chars: int = 20_000_000,
    max_pages: int = 5000,
    ocr: OcrLimits | None = None,
    progress: OcrProgress | None = None,
) -> Extracted:
    """Canonical text, page ranges, title and warnings of one file; KnowNoteError if it can't.

    Pages without a text layer (or with a noisy OCR layer) and image files are read by OCR
    within the `ocr` limits; `progress(done, total)` is called per page read so.
    """
    name = _display_name(filename)
    kind, payload = _sniff(data, name)
    ocr = ocr or OcrLimits()
    if kind == "pdf":
        result = _extract_pdf(data, name, password, max_chars, max_pages, ocr, progress)
    elif kind == "image":
        result = _extract_image(data, name, max_chars, ocr, progress)
    elif isinstance(payload, zipfile.ZipFile):
        _check_zip(payload, data, name, max_chars)
        if kind == "docx":
            result = _extract_docx(data, name)
        elif kind == "pptx":
            result = _extract_pptx(data, name, max_pages)
        else:
            result = _extract_epub(payload, name, max_pages)
    else:
        assert isinstance(payload, _Decoded)
        if len(payload.text) > 4 * max_chars:  # markup or not, this cannot end up under the limit
            raise _too_many_chars(name, max_chars)
        if kind == "html":
            body, raw_title = _html_to_text(
                payload.text, xml_first=payload.text.lstrip().startswith("<?xml")
            )
            text, title = clean_text(body), _good_title(raw_title)
        else:
            text = clean_text(payload.text)
            title = _markdown_title(text) if kind == "md" else None
        headings = _markdown_headings(text) if kind == "md" else ()
        result = Extracted(text, kind, (), title, payload.warnings, headings=headings)
    if len(result.text) > max_chars:
        raise _too_many_chars(name, max_chars)
    if not result.text.strip():
        raise NoTextLayer(f"{name} contains no text to import.")
    return result
