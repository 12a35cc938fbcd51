"""What each part of a document is: roles as ranges of its canonical text.

A role labels a range, like a heading or a passage does: `text[start:end]` is the part, and the
text and every other offset stay exactly as they are. Text no range labels is body text. Readers
give the roles their format knows (a PDF's layout, HTML's elements, DOCX styles); the rules here
add what any format shows in its text (a reference section after its heading).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from knownote.read.sections import Heading, heading_text

# The version of the rules that read a document's roles, kept with it: sources read by older
# rules are read again in the background (knownote.pipeline.roles). 2: "Further reading" and
# "External links" sections are reference entries, "See also" sections and hatnotes navigation.
# 3: a reference section ends before a line that opens an appendix.
ROLES_VERSION = 3
# `roles_read` of a PDF whose roles are its rules' alone until the layout model reads its pages
# after the import (`Settings.read_layouts_later`): below every version, so it is read again.
LAYOUT_LATER = 0
BODY = "body"
# In the order a range of one overrides a range of another where they overlap (later wins):
# a page footer inside a reference section is a page footer, a heading inside it a heading.
ROLES = (
    BODY,
    "reference",  # an entry of a reference list or bibliography
    "front_matter",  # authors, affiliations, e-mail addresses, a paper's first-page notes
    "navigation",  # a web page's menus, breadcrumbs, "jump to", edit links
    "list",
    "figure",  # text inside a picture or chart
    "table",
    "caption",
    "footnote",
    "formula",
    "code",
    "heading",
    "page_header",  # running titles, "Preprint. Under review."
    "page_footer",  # page numbers, copyright lines
)
RANK = {role: rank for rank, role in enumerate(ROLES)}
# Read as sentences by quotes, central sentences, cards and spoken lines.
PROSE = frozenset({BODY, "list"})
# Printed on every page or around the content rather than said by it.
FURNITURE = frozenset({"page_header", "page_footer", "navigation"})
# Weighed down by retrieval: a question that is not about them should not find them first.
MINOR = FURNITURE | {"reference", "front_matter"}


@dataclass(frozen=True)
class RoleRange:
    start: int
    end: int  # exclusive; text[start:end] is the part
    role: str


def normalise(ranges: Iterable[RoleRange], length: int) -> tuple[RoleRange, ...]:
    """Ranges clipped to the text, overlaps settled by `ROLES`' order, neighbours of one role
    joined and body left out: each character has at most one role, in text order."""
    labels = np.zeros(length, dtype=np.int8)
    for r in sorted(ranges, key=lambda r: RANK[r.role]):
        start, end = max(r.start, 0), min(r.end, length)
        if start < end:
            labels[start:end] = np.maximum(labels[start:end], RANK[r.role])
    if not length:
        return ()
    edges = np.flatnonzero(np.diff(labels)) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [length]))
    return tuple(
        RoleRange(int(a), int(b), ROLES[labels[a]])
        for a, b in zip(starts, ends, strict=True)
        if labels[a]
    )


class Roles:
    """A document's roles (normalised), for lookups by offset."""

    def __init__(self, ranges: Sequence[RoleRange]) -> None:
        self.ranges = tuple(sorted(ranges, key=lambda r: r.start))
        self._starts = [r.start for r in self.ranges]

    def at(self, offset: int) -> str:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0 and offset < self.ranges[i].end:
            return self.ranges[i].role
        return BODY

    def pieces(self, start: int, end: int) -> list[RoleRange]:
        """`[start, end)` cut where its role changes, body included, in text order."""
        out: list[RoleRange] = []
        at = start
        i = max(bisect.bisect_right(self._starts, start) - 1, 0)
        for r in self.ranges[i:]:
            if r.start >= end:
                break
            if r.end <= at:
                continue
            if r.start > at:
                out.append(RoleRange(at, r.start, BODY))
            out.append(RoleRange(max(r.start, at), min(r.end, end), r.role))
            at = min(r.end, end)
        if at < end:
            out.append(RoleRange(at, end, BODY))
        return out

    def share(self, start: int, end: int, roles: frozenset[str]) -> float:
        """The part of `[start, end)`'s characters whose role is one of `roles`."""
        if end <= start:
            return 0.0
        held = sum(p.end - p.start for p in self.pieces(start, end) if p.role in roles)
        return held / (end - start)


REFERENCE_TITLES = re.compile(
    r"(?:[\dIVX]+\.?\s*)?(?:references?|bibliography|works\s+cited|literature\s+cited|"
    r"cited\s+literature|references\s+and\s+notes|notes\s+and\s+references|citations|"
    r"literatur(?:verzeichnis)?|quellen(?:verzeichnis)?|références|bibliographie|"
    r"referencias|bibliografía|bibliografia|riferimenti|список\s+литературы|литература|"
    r"参考文献|参考资料|参考文獻|引用文献|참고\s*문헌)\s*[:：]?",
    re.IGNORECASE,
)
# Lists of further sources that follow the references, as on Wikipedia's pages.
FURTHER_TITLES = re.compile(
    r"(?:further\s+reading|external\s+links|weiterführende\s+literatur|weblinks|"
    r"延伸阅读|扩展阅读|外部链接|外部連結|外部リンク|関連文献)\s*[:：]?",
    re.IGNORECASE,
)


# A short line of its own, such as a section's title where no heading was found.
_TITLE_LINE = re.compile(r"^[^\S\n]*(\S[^\n]{0,40})$", re.MULTILINE)
# A line that opens an appendix ("Appendix A: Antecedents of …", "Appendices", "附录"): papers
# put them after their references, and a reference section found by its title line alone would
# otherwise run over them. "Appendix B of Smith (2001)" inside an entry is no such line.
_APPENDIX_LINE = re.compile(
    r"^[^\S\n]*(?:(?:appendix|annex|anhang|annexe)(?:[^\S\n]+[A-Z\d]{1,2}(?:\.\d+)*)?"
    r"(?:[^\S\n]*[:.：—–-][^\S\n]*[^\n]{0,100})?|appendices|supplementary[^\S\n]+"
    r"(?:materials?|information)|(?:附录|附錄|付録)[^\n]{0,40})[^\S\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


def _before_appendix(text: str, found: RoleRange) -> RoleRange:
    """`found` up to the first line inside it that opens an appendix."""
    m = _APPENDIX_LINE.search(text, found.start, found.end)
    return found if m is None else RoleRange(found.start, m.start(), found.role)


def reference_sections(text: str, headings: Sequence[Heading]) -> list[RoleRange]:
    """Reference sections: from the end of a heading named "References", "参考文献", "Further
    reading", … to the next heading of the same or a higher level (or the end of the text).

    Without such a heading, the last line that reads only "References" (a paper whose headings
    were not found), else the last that reads "Further reading" or the like, opens one that runs
    to the next heading after it, or to the end; without that, the last run of entries numbered
    "[1]", "[2]", … in order is one. Each ends before a line that opens an appendix.
    """
    return [_before_appendix(text, r) for r in _reference_sections(text, headings)]


def _reference_sections(text: str, headings: Sequence[Heading]) -> list[RoleRange]:
    ordered = sorted(headings, key=lambda h: h.start)
    found = []
    for i, h in enumerate(ordered):
        title = heading_text(text, h)
        if REFERENCE_TITLES.fullmatch(title) or FURTHER_TITLES.fullmatch(title):
            end = next((g.start for g in ordered[i + 1 :] if g.level <= h.level), len(text))
            found.append(RoleRange(h.end, end, "reference"))
    if found:
        return found
    lines = list(_TITLE_LINE.finditer(text))
    # the last: a book's table of contents names its references long before they start; and
    # "References" before "Further reading", as its section runs over what follows it
    last = [m for m in lines if REFERENCE_TITLES.fullmatch(m.group(1).strip())] or [
        m for m in lines if FURTHER_TITLES.fullmatch(m.group(1).strip())
    ]
    for line in last[-1:]:
        after = [g.start for g in ordered if g.start > line.end()]
        found.append(RoleRange(line.end(), after[0] if after else len(text), "reference"))
    return found or _numbered_entries(text, ordered)


NUMBERED_ENTRY = re.compile(r"^\[(\d{1,3})\][^\S\n]", re.MULTILINE)
MIN_ENTRIES = 5


def _numbered_entries(text: str, ordered: Sequence[Heading]) -> list[RoleRange]:
    """Without a "References" line (one a PDF's table reader took into a row): the last run of
    lines opened by "[1] ", "[2] ", … in order, to the next heading after it or the end."""
    runs: list[tuple[int, int, int]] = []  # (start, last entry's start, entries)
    for m in NUMBERED_ENTRY.finditer(text):
        number = int(m.group(1))
        if number == 1:
            runs.append((m.start(), m.start(), 1))
        elif runs and number == runs[-1][2] + 1:
            runs[-1] = (runs[-1][0], m.start(), number)
    runs = [run for run in runs if run[2] >= MIN_ENTRIES]
    if not runs:
        return []
    start, last, _ = runs[-1]
    after = [g.start for g in ordered if g.start > last]
    return [RoleRange(start, after[0] if after else len(text), "reference")]


# A note that sends the reader elsewhere, as encyclopedias open an article or a section with.
_HATNOTE = re.compile(
    r"(?:>\s*)?(?:for\s+(?:other|the)\s+uses?\b|this\s+article\s+is\s+about\b|"
    r"not\s+to\s+be\s+confused\s+with\b|main\s+articles?\s*:|further\s+information\s*:|"
    r"see\s+also\s*:|(?:[\"“][^\"”\n]{1,60}[\"”](?:,?\s+(?:and\s+)?)?)+\s*redirects?\s+here\b|"
    r"主条目[:：]|主條目[:：]|参见[:：]|"
    r"「[^」\n]{1,40}」はこの項目へ転送されています)"
    r"|[^\n]*(?:\(disambiguation\)|消歧义|消歧義|曖昧さ回避)",
    re.IGNORECASE,
)
HATNOTE_CHARS = 300
_PARAGRAPH = re.compile(r"[^\n](?:[^\n]|\n(?![^\S\n]*\n))*")


def hatnotes(text: str) -> list[RoleRange]:
    """Notes that send the reader elsewhere ("For other uses, see X (disambiguation).", "Main
    article: X", "「X」はこの項目へ転送されています"): navigation, a paragraph each."""
    return [
        RoleRange(m.start(), m.end(), "navigation")
        for m in _PARAGRAPH.finditer(text)
        if len(m.group()) <= HATNOTE_CHARS and _HATNOTE.match(m.group().lstrip())
    ]


def document_roles(
    text: str, headings: Sequence[Heading], found: Iterable[RoleRange]
) -> tuple[RoleRange, ...]:
    """A document's roles: what its reader `found`, the reference sections its headings open,
    and its hatnotes, normalised."""
    return normalise([*found, *reference_sections(text, headings), *hatnotes(text)], len(text))


# Readers of structured formats (HTML, DOCX, PPTX, EPUB) know each element's range in their text
# before it is cleaned (canonical.clean_text); these helpers carry such ranges over to the text.
_SAME = {"\r": "\n", "\x0b": "\n", "\x0c": "\n", "\x85": "\n", "\u2028": "\n", "\u2029": "\n"}
_SAME.update({"\x1c": "\n", "\x1d": "\n", "\x1e": "\n", "\xa0": " "})

_WORD = re.compile(r"\w")
_INVISIBLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff]+")


def _droppable(char: str) -> bool:
    """Cleaning drops it: white space (trailing or surplus), a control character or a BOM."""
    return bool(_INVISIBLE.fullmatch(char))


def _run(raw: str, i: int, text: str, j: int) -> int:
    """How many characters from raw[i] and text[j] on are equal (doubling, then halving)."""
    size = 1
    while raw[i : i + 2 * size] == text[j : j + 2 * size] and i + 2 * size <= len(raw):
        size *= 2
    low, high = size, min(2 * size, len(raw) - i, len(text) - j)
    while low < high:
        mid = (low + high + 1) // 2
        if raw[i : i + mid] == text[j : j + mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _align(raw: str, text: str) -> tuple[list[int], list[int], list[int], int]:
    """Where the characters of `raw` went in `text` (`raw` cleaned: characters dropped, a few
    replaced, NFC composed), as runs: raw starts, text starts, lengths; and how far in `raw` the
    alignment holds (cleaning does nothing else, so it stops only on text that is not `raw`'s)."""
    runs: list[tuple[int, int, int]] = []
    i = j = 0
    while i < len(raw) and j < len(text):
        if raw[i] == text[j]:
            size = _run(raw, i, text, j)
            runs.append((i, j, size))
            i, j = i + size, j + size
        elif _SAME.get(raw[i]) == text[j] or (
            "\ud800" <= raw[i] <= "\udfff" and text[j] == "\ufffd"
        ):
            runs.append((i, j, 1))
            i, j = i + 1, j + 1
        elif _droppable(raw[i]):
            i += 1
        else:
            for k in range(2, 5):  # a letter and its combining marks, composed into one
                composed = unicodedata.normalize("NFC", raw[i : i + k])
                if text.startswith(composed, j) and len(composed) < k:
                    runs.append((i, j, len(composed)))
                    i, j = i + k, j + len(composed)
                    break
            else:
                break
    starts, targets, lengths = ([run[n] for run in runs] for n in range(3))
    return starts, targets, lengths, i if j < len(text) else len(raw)


def _visible(text: str) -> str:
    return _INVISIBLE.sub("", unicodedata.normalize("NFC", text))


def carry_over(
    raw: str, text: str, ranges: Iterable[RoleRange], offset: int = 0
) -> list[RoleRange]:
    """Ranges of a reader's `raw` text as ranges of `text`, the same text cleaned, which starts at
    `offset` of the document's text; white space at their edges left out. A range whose words
    cannot be matched exactly in `text` is left out, never guessed."""
    starts, targets, lengths, held = _align(raw, text)
    out = []
    for r in ranges:
        if r.end > held or r.start >= r.end:
            continue
        # the first run that ends after r.start, the last that starts before r.end
        first = bisect.bisect_right(starts, r.start) - 1
        if first < 0 or starts[first] + lengths[first] <= r.start:
            first += 1
        last = bisect.bisect_left(starts, r.end) - 1
        if first >= len(starts) or last < first:
            continue
        start = targets[first] + max(r.start - starts[first], 0)
        end = targets[last] + min(r.end - starts[last], lengths[last])
        part = text[start:end]
        start, end = start + len(part) - len(part.lstrip()), end - (len(part) - len(part.rstrip()))
        if start < end and _visible(text[start:end]) == _visible(raw[r.start : r.end]):
            out.append(RoleRange(start + offset, end + offset, r.role))
    return out


# What a reference list or a table of contents is made of, as its reader sees it.
_ENTRIES = frozenset({"list", "table", "code", "caption", "figure"})


def reader_roles(
    text: str, headings: Sequence[Heading], found: Iterable[RoleRange]
) -> tuple[RoleRange, ...]:
    """`document_roles` for a reader that knows its headings and elements: headings are headings,
    a section under "Contents" is navigation, and the lists, tables, … inside a reference or
    contents section are its entries (a reference list's items are references, not a list)."""
    # a section with no words (a heading right under "References") labels nothing
    sections = [
        s
        for s in [*reference_sections(text, headings), *contents_sections(text, headings)]
        if _WORD.search(text, s.start, s.end)
    ]

    def entry(r: RoleRange) -> bool:
        return r.role in _ENTRIES and any(s.start <= r.start and r.end <= s.end for s in sections)

    kept = [r for r in found if not entry(r)]
    kept += [RoleRange(h.start, h.end, "heading") for h in headings]
    return normalise([*kept, *sections], len(text))


CONTENTS_TITLES = re.compile(
    r"(table\s+of\s+)?contents|inhalt(sverzeichnis)?|table\s+des\s+matières|sommaire|"
    r"índice|indice|содержание|目录|目錄|目次|차례|목차",
    re.IGNORECASE,
)
# A section of links to related articles: navigation under its heading (never a line alone,
# which a sentence may be).
SEE_ALSO_TITLES = re.compile(
    r"see\s+also|siehe\s+auch|voir\s+aussi|véase\s+también|см\.?\s+также|参见|參見|"
    r"相关条目|関連項目",
    re.IGNORECASE,
)


# An entry of a table of contents: its words, then (after dots, spaces or nothing) a page number
# such as "12", "4-18" or "xii".
_CONTENTS_ENTRY = re.compile(r"[^\n]{2,200}?[\s.·…]*(\d+([-–]\d+)?|[ivxlc]{1,7})", re.IGNORECASE)


def contents_sections(text: str, headings: Sequence[Heading]) -> list[RoleRange]:
    """A table of contents (navigation): from the end of a heading named "Contents", "目录", … (or
    "See also", "関連項目", …) to the next heading of the same or a higher level.

    Without such a heading, the first line that reads only "Contents" opens one if at least three
    entries with page numbers follow it: it runs over them, and over up to three short lines
    between two of them (a part's title), to the last.
    """
    ordered = sorted(headings, key=lambda h: h.start)
    found = [
        RoleRange(
            h.end,
            next((g.start for g in ordered[i + 1 :] if g.level <= h.level), len(text)),
            "navigation",
        )
        for i, h in enumerate(ordered)
        if CONTENTS_TITLES.fullmatch(heading_text(text, h))
        or SEE_ALSO_TITLES.fullmatch(heading_text(text, h))
    ]
    if found:
        return found
    title = next(
        (m for m in _TITLE_LINE.finditer(text) if CONTENTS_TITLES.fullmatch(m.group(1).strip())),
        None,
    )
    if title is None:
        return []
    entries, end, at, others = 0, title.end(), title.end(), 0
    for line in text[title.end() :].split("\n"):
        words = line.strip()
        if _CONTENTS_ENTRY.fullmatch(words):
            entries, end, others = entries + 1, at + len(line), 0
        elif words:
            others += 1
            if len(words) > 120 or others > 3:  # a paragraph, or text that is not the contents
                break
        at += len(line) + 1
    return [RoleRange(title.end(), end, "navigation")] if entries >= 3 else []


# Lines a website puts around every page (a saved page keeps them): its menus, its tools and its
# footer, as MediaWiki and common sites word them. A heading that reads the same stays a heading.
SITE_CHROME = re.compile(
    r"jump to (main )?content|skip to (main )?content|main menu|navigation menu|personal tools|"
    r"create account|toggle the table of contents|toggle limited content width|"
    r"view source|view history|edit links|\[\s*edit\s*\]|(top|bottom) of form|\d+ languages|"
    r"from wikipedia, the free encyclopedia|retrieved from \S+|hidden categories:|"
    r"what links here|related changes|special pages|permanent link|page information|"
    r"cite this page|this page was last (edited|modified) on .{0,60}|about wikipedia|"
    r"contact wikipedia|cookie statement",
    re.IGNORECASE,
)
# Words that are a site's menu only on a page that shows the lines above: elsewhere "Statistics"
# on its own line is a title.
SITE_CHROME_WORDS = re.compile(
    r"search|appearance|log ?in|log out|sign in|sign up|(hide|show) (menu|sidebar)|tools|actions|"
    r"article|talk|read|edit|categories:|portals?:|privacy policy|disclaimers|code of conduct|"
    r"developers|statistics|mobile view|terms of use|cookie (settings|preferences)|back to top",
    re.IGNORECASE,
)
