"""What a file is, decided by its content first and its extension as a hint; decoding text files."""

from __future__ import annotations

import codecs
import io
import re
import zipfile
import zlib
from dataclasses import dataclass

import charset_normalizer

from knownote.errors import UnreadableFile, UnsupportedFile

SUPPORTED = (
    "PDF, Word (.docx), PowerPoint (.pptx), EPUB, HTML, Markdown, plain text, "
    "scans or photos (PNG, JPEG, TIFF, WebP) read by OCR, and recordings "
    "(MP3, WAV, M4A, OGG/Opus, FLAC, MP4, WebM, MKV) transcribed"
)


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
class Decoded:
    text: str
    warnings: tuple[str, ...]


def display_name(filename: str) -> str:
    return re.split(r"[\\/]", filename)[-1] or "The file"


def _extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def declared_charset(data: bytes) -> str | None:
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


def decode(data: bytes, name: str, declared: str | None = None) -> Decoded:
    encoding, guessed = declared, False
    for bom, bom_encoding in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], bom_encoding
            break
    if encoding is None:
        try:
            return Decoded(data.decode("utf-8"), ())
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
    return Decoded(text, tuple(warnings))


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


ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,  # unknown compression method
    ValueError,  # damaged headers: negative seek offsets, member names that are not UTF-8
)
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def is_recording(data: bytes) -> bool:
    """Whether the bytes are an audio or video container KnowNote transcribes."""
    head = data[:16]
    return (
        head.startswith((b"ID3", b"OggS", b"fLaC", b"\x1a\x45\xdf\xa3"))  # MP3 tag, Ogg, FLAC, EBML
        or (head[:4] == b"RIFF" and head[8:12] == b"WAVE")
        or head[4:8] == b"ftyp"  # MP4, M4A, MOV
        or _mpeg_audio_frame(head)
    )


def recording_mime(data: bytes, video: bool) -> str:
    """The media type a browser plays a recording's bytes as."""
    head = data[:16]
    if head.startswith(b"OggS"):
        return "video/ogg" if video else "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm" if video else "audio/webm"
    if head[:4] == b"RIFF":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        return "video/mp4" if video else "audio/mp4"
    return "audio/mpeg"


def _mpeg_audio_frame(head: bytes) -> bool:
    """An MP3 without an ID3 tag: a frame sync, a known version and layer (not a UTF-16 BOM)."""
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0 or head[:2] == b"\xff\xfe":
        return False
    version, layer, bitrate = (head[1] >> 3) & 3, (head[1] >> 1) & 3, head[2] >> 4
    return version != 1 and layer != 0 and bitrate not in (0, 15)


def is_pdf(data: bytes) -> bool:
    return b"%PDF-" in data[:1024]


def is_image(data: bytes) -> bool:
    return data.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"II*\x00", b"MM\x00*")) or (
        data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    )


def sniff(data: bytes, name: str) -> tuple[str, zipfile.ZipFile | Decoded | None]:
    ext = _extension(name)
    if not data:
        raise UnreadableFile(f"{name} is empty (0 bytes): nothing to import.")
    if is_pdf(data):
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
        except ZIP_ERRORS:
            raise UnreadableFile(
                f"{name} is damaged: its ZIP container cannot be read. Download or export it again."
            ) from None
    if is_image(data):
        return "image", None
    if is_recording(data):
        return "recording", None
    if data.startswith(b"{\\rtf"):
        raise UnsupportedFile(f"{name} is an RTF file. Save it as .docx or PDF and import that.")
    if _looks_like_html(data):
        return "html", decode(data, name, declared_charset(data))
    decoded = decode(data, name)
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
    return sniff(data, display_name(filename))[0]
