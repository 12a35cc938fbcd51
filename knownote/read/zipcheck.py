"""ZIP containers (DOCX, PPTX, EPUB) checked before any reader opens them: no bombs, no lies."""

from __future__ import annotations

import zipfile
import zlib

from knownote.errors import FileTooLarge, UnreadableFile, UnsupportedFile


def check_zip(zf: zipfile.ZipFile, data: bytes, name: str, max_chars: int) -> None:
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
    seen = set()
    for info in infos:
        # Two parts of one name: readers differ in which they take (zipfile the last), so what
        # is imported would depend on the reader, and a part of one kind can stand in another's
        # place (the fuzzer found python-docx failing on one).
        if info.filename in seen:
            raise UnreadableFile(
                f"{name} is damaged: it holds its part {info.filename} twice. "
                "Open it in its application, save a new copy and import that."
            )
        seen.add(info.filename)
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
