"""The canonical-text rules: how raw text is cleaned before it is stored, and pages joined.

Every offset in the system indexes text produced by these rules; `pdfpage.py` replays them
character by character to map page characters to offsets, so it imports them from here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from knownote.read.extracted import Page
from knownote.read.sections import Heading

PAGE_SEPARATOR = "\n\n"


# C0/C1 controls go, except tab and newline; other line and page breaks become newlines.
CHAR_MAP: dict[int, str | None] = {c: None for c in [*range(0x20), *range(0x7F, 0xA0)]}
CHAR_MAP.update({0x09: "\t", 0x0A: "\n", 0xA0: " ", 0xFEFF: None, 0xFFFE: None, 0xFFFF: None})
CHAR_MAP.update(dict.fromkeys([0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029], "\n"))
SURROGATES = re.compile("[\ud800-\udfff]")
TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
BLANK_LINES = re.compile(r"\n{3,}")


def scrub(text: str) -> str:
    """Line endings and invisible control characters; safe to run before parsing markup."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(CHAR_MAP)
    return SURROGATES.sub("\ufffd", text)


def clean_text(text: str) -> str:
    """The canonical form of one page (or of a whole document without pages)."""
    text = scrub(text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    text = TRAILING_SPACE.sub("", text)
    return BLANK_LINES.sub("\n\n", text).strip()


def join_pages(texts: list[str]) -> tuple[str, tuple[Page, ...]]:
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


def good_title(raw: str | None) -> str | None:
    title = " ".join(clean_text(raw or "").split())
    if not title or len(title) > 300 or _JUNK_TITLE.fullmatch(title):
        return None
    return title


def locate_headings(
    text: str, found: Iterable[tuple[str, int]], start: int = 0, end: int | None = None
) -> list[Heading]:
    """Headings given by their words and level, found in that order in `text[start:end]`.

    A reader knows which of its blocks are headings before the text is cleaned; cleaning moves
    offsets, so each heading's words are cleaned the same way and searched for after the previous
    one, at the start of a line if it is there. Words that cannot be found (cleaning joined them
    with their neighbours) are left out.
    """
    headings, cursor = [], start
    for words, level in found:
        wanted = clean_text(words)
        if not wanted:
            continue
        # A heading begins a line: the same words inside a paragraph before it are not it.
        at = text.find(wanted, cursor, end) if cursor == 0 else -1
        if at != 0:
            at = text.find("\n" + wanted, max(cursor - 1, 0), end)
            at = at + 1 if at >= 0 else text.find(wanted, cursor, end)
        if at >= 0:
            headings.append(Heading(at, at + len(wanted), level))
            cursor = at + len(wanted)
    return headings
