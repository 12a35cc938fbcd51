"""A PDF's headings, found in its canonical text: from the outline when it has one, else by type.

The canonical text of a page is `pdf_page_text` (canonical.py's rules over MuPDF's plain text);
a heading is a range of that text. Headings are located by searching the page's text, never by
rebuilding it, so the stored text and every offset stay exactly what they were without headings.

Without a usable outline, a line is a heading when its type stands out from the body text (the
size with the most characters): larger, or bold on a line of its own, or numbered ("3.2 Training")
and bold, or alone in its block in a font family the body seldom uses. Lines that read like a
formula, a caption, a line of a table of contents or a running head (the same words in the same
type at the edge of many pages) are not headings. Its level is the depth of its numbering, else
the rank of its size among the headings. benchmarks/headings.py measures this against outlines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pymupdf

from knownote.read.canonical import clean_text
from knownote.read.sections import Heading
from knownote.read.table_rows import Reordered, layer_rows

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_NUMBERED = re.compile(
    r"(?:(?:chapter|section|part|appendix)\s+)?(\d+(?:\s?\.\s?\d+)*)\.?\s+\S", re.I
)
_CAPTION = re.compile(r"(fig(ure)?|table|tab|algorithm|listing|source)\.?\s*\d", re.IGNORECASE)
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
BIGGER = 1.15  # a heading's type is at least this much larger than the body's, or bold
MAX_CHARS = 150  # a longer line is a paragraph, whatever its type
RARE_FAMILY = 0.02  # a font family with less than this share of the characters is not the body's
_FAMILY = re.compile(r"[-,]")
_LEADER = re.compile(r"(\.\s?){4,}|…{2,}")
LINE_SLACK = 40  # characters of the page's text searched past the previous line for the next


@dataclass(frozen=True)
class Line:
    """One line of a page as MuPDF lays it out, with its range in the page's canonical text."""

    start: int
    end: int
    size: float  # the largest size a word of it is set in, to half a point
    bold: bool  # every character that is not white space is bold
    block: int  # the block it belongs to, numbered on its page
    alone: bool  # every line of its block is bold, or it is the only line of its block
    family: str  # the font family most of its characters are set in ("ACaslon")
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # on the page


# Ligatures are expanded ("ﬁ" -> "fi") so words are searchable; everything else is MuPDF's default.
PDF_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
_DRAWN = pymupdf.mupdf.FZ_STEXT_FILLED | pymupdf.mupdf.FZ_STEXT_STROKED


@dataclass(frozen=True)
class PageLayer:
    """One page's text layer, asked of MuPDF once: reading a page asked it for the same plain
    text and lines two or three times."""

    plain: str  # MuPDF's plain text, cleaned
    blocks: list[dict]  # its blocks of lines and spans (`TextPage.extractDICT`)
    rows: Reordered | None  # its tables' rows joined (`layer_rows`)

    @property
    def text(self) -> str:
        """Exactly the text the page contributes to the canonical text."""
        return self.plain if self.rows is None else self.rows.text

    def lines(self, text: str) -> list[Line]:
        """Its lines located in `text` (`page_lines`)."""
        return page_lines(self.blocks, self.plain, self.rows, text)

    @property
    def hides_text(self) -> bool:
        """Whether some of its characters are neither filled nor stroked: drawn invisibly, as an
        OCR layer is (text render mode 3). MuPDF starts a span where that changes."""
        return any(
            not span["char_flags"] & _DRAWN
            for block in self.blocks
            for line in block.get("lines", ())
            for span in line["spans"]
        )


def page_layer(page: pymupdf.Page) -> PageLayer:
    textpage = page.get_textpage(flags=PDF_TEXT_FLAGS)
    plain = clean_text(page.get_text("text", textpage=textpage))
    blocks = textpage.extractDICT()["blocks"]
    return PageLayer(plain, blocks, layer_rows(blocks, plain))


def page_lines(blocks: Sequence[dict], plain: str, rows: Reordered | None, text: str) -> list[Line]:
    """The lines of one page, located in `text`, the page's canonical text (lines not found go).
    `blocks`, `plain` and `rows`: its text layer's (`PageLayer`)."""
    lines, cursor = [], 0
    # A page with a table: its lines are located in MuPDF's order, then moved where its rows put
    # them (each line stays whole in its row).
    moved: list[int] | None = None
    if plain != text and rows is not None and rows.text == text:
        moved = [-1] * len(plain)
        for new, old in enumerate(rows.source):
            if old >= 0:
                moved[old] = new
        text = plain
    for number, block in enumerate(blocks):
        block_lines = block.get("lines", ())
        found = []
        for line in block_lines:
            spans = [s for s in line["spans"] if s["text"]]
            raw = "".join(s["text"] for s in spans)
            wanted = clean_text(raw)
            if not wanted:
                continue
            at = text.find(wanted, cursor, cursor + len(wanted) + LINE_SLACK)
            if at < 0:
                continue
            cursor = at + len(wanted)
            sizes: Counter[float] = Counter()
            families: Counter[str] = Counter()
            bold = True
            for s in spans:
                visible = len(s["text"].strip())
                sizes[round(s["size"] * 2) / 2] += visible
                families[_FAMILY.split(s["font"].split("+")[-1], 1)[0]] += visible
                if visible and not _is_bold(s):
                    bold = False
            # the largest size that sets a word: "CHAPTER ONE: Creators" is a title set in two
            size = max((z for z, n in sizes.items() if n >= 2), default=sizes.most_common(1)[0][0])
            start, end = at, cursor
            if moved is not None:
                start, end = moved[at], moved[cursor - 1] + 1
            if line["dir"][0] > 0.99:  # sideways text is a margin note, never a heading
                family = families.most_common(1)[0][0]
                alone = len(block_lines) == 1
                box = tuple(line["bbox"])
                found.append(Line(start, end, size, bold, number, alone, family, box))
        if len(found) > 1 and all(line.bold for line in found):
            found = [replace(line, alone=True) for line in found]
        lines.extend(found)
    return lines if moved is None else sorted(lines, key=lambda line: line.start)


def font_headings(texts: Sequence[str], lines: Sequence[Sequence[Line]]) -> list[list[Heading]]:
    """Per page, the headings its type shows, as ranges of that page's text."""
    chars: Counter[float] = Counter()
    families: Counter[str] = Counter()
    seen: Counter[tuple] = Counter()  # running heads and feet repeat on many pages, set alike
    for text, page in zip(texts, lines, strict=True):
        for line in page:
            chars[line.size] += line.end - line.start
            families[line.family] += line.end - line.start
        seen.update({_key(text[line.start : line.end], line) for line in page})
    if not chars:
        return [[] for _ in texts]
    body = chars.most_common(1)[0][0]
    total = sum(families.values())
    # a family set in few places, on lines of their own: "Recorded Music" in a book in Caslon
    rare = {f for f, n in families.items() if n < RARE_FAMILY * total}
    found: list[list[tuple[Line, Line, int | None]]] = []
    for text, page in zip(texts, lines, strict=True):
        runs: list[tuple[Line, Line, int | None]] = []
        for index, line in enumerate(page):
            words = text[line.start : line.end]
            edge = index < 2 or index >= len(page) - 2  # where running heads and feet are
            depth = _depth(words)
            bigger = line.size >= body * BIGGER and line.size >= body + 1
            bold_alone = line.bold and line.size >= body and (line.alone or depth is not None)
            other_family = (
                line.alone
                and line.family in rare
                and line.size >= body * 0.9
                and len(words) <= 60
                and words[:1].isupper()
                and not words.endswith(".")
            )
            repeated = edge and len(texts) >= 4 and seen[_key(words, line)] > 2
            stands_out = bigger or bold_alone or other_family
            if not stands_out or repeated or not _looks_like_heading(words):
                continue
            last = runs[-1][1] if runs else None
            if (
                last is not None
                and last.block == line.block
                and (last.size, last.bold) == (line.size, line.bold)
                and text[last.end : line.start].count("\n") <= 1
            ):
                runs[-1] = (runs[-1][0], line, runs[-1][2])  # a heading set on two lines
            else:
                runs.append((line, line, depth))
        found.append(runs)
    ranks = sorted({first.size for page in found for first, _, _ in page}, reverse=True)
    return [
        [
            Heading(first.start, last.end, depth or ranks.index(first.size) + 1)
            for first, last, depth in page
        ]
        for page in found
    ]


def outline_headings(doc: pymupdf.Document, texts: Sequence[str]) -> list[list[Heading]] | None:
    """Per page, the outline's entries found on their pages; None without a usable outline.

    An outline is used when at least half of its entries are found on the page they point to.
    """
    toc = doc.get_toc(simple=True)
    if not toc:
        return None
    pages: list[list[Heading]] = [[] for _ in texts]
    found = 0
    for level, title, page_no in toc:
        if not 1 <= page_no <= len(texts):
            continue
        taken = {h.start for h in pages[page_no - 1]}
        where = _find_title(texts[page_no - 1], title, taken)
        if where is not None:
            pages[page_no - 1].append(Heading(where[0], where[1], max(1, level)))
            found += 1
    if found * 2 < len(toc):
        return None
    return [sorted(page, key=lambda h: h.start) for page in pages]


def _is_bold(span: dict) -> bool:
    return bool(span["flags"] & pymupdf.TEXT_FONT_BOLD) or bool(_BOLD_FONT.search(span["font"]))


def _key(words: str, line: Line) -> tuple[str, float, bool]:
    return re.sub(r"[\d\s]+", " ", words.lower()).strip(), line.size, line.bold


def _depth(words: str) -> int | None:
    match = _NUMBERED.match(words)
    if not match or len(match.group(1).replace(" ", "")) > 12:
        return None
    return match.group(1).replace(" ", "").count(".") + 1


def _looks_like_heading(words: str) -> bool:
    letters = sum(ch.isalpha() for ch in words)
    return (
        letters >= 2
        and letters * 2 >= len("".join(words.split()))  # not a formula
        and not _LEADER.search(words)  # not a line of a table of contents
        and len(words) <= MAX_CHARS
        and not words.rstrip().endswith((",", ";", "-"))
        and not _CAPTION.match(words)
    )


def _find_title(text: str, title: str, taken: set[int]) -> tuple[int, int] | None:
    """Where a title is on its page, ignoring case, white space and quote styles; None if not.

    An occurrence at the start of a line is preferred to one inside a line.
    """
    wanted = "".join(title.translate(_QUOTES).lower().split())
    if not wanted:
        return None
    at = [i for i, ch in enumerate(text) if not ch.isspace()]
    compact = "".join(text[i] for i in at).translate(_QUOTES).lower()
    if len(compact) != len(at):  # a character that lower() widens: keep it simple, give up
        return None
    first = None
    i = compact.find(wanted)
    while i >= 0:
        start, end = at[i], at[i + len(wanted) - 1] + 1
        if start not in taken:
            if start == 0 or text[start - 1] == "\n":
                return start, end
            first = first or (start, end)
        i = compact.find(wanted, i + 1)
    return first
