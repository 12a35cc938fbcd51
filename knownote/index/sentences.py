"""Sentences of a text as `[start, end)` ranges: one splitter for quotes, support spans, central
sentences, cards and spoken lines.

A sentence ends at ASCII punctuation before whitespace (not after an abbreviation, an initial, an
enumeration's number or a German ordinal, nor before a lower-case word), at full-width
punctuation (。！？, with the closing quotes and brackets after it, unless a quotative particle
goes on: 「…。」と), at a blank line and before a list item. A single line break is a wrap, unless
`lines` says the text is written line by line (an answer).

Given a document's `Roles`, no sentence runs across a change of role, and each says its role. A
page header or footer between two parts of body text is skipped instead: the sentence runs over
it (its range stays an exact slice of the text) and names it in `skipped`, so a quote shows "…"
there. Measured against pysbd on a hand-made gold set of the corpus's languages
(benchmarks/sentences.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knownote.read.roles import BODY, PROSE, RoleRange, Roles

QUOTE_REACH = 200  # characters a 「 quote 」 is looked for around a full stop
SKIPPED = frozenset({"page_header", "page_footer"})
_CLOSERS = "\"'”’»)\\]}」』）》〉】〕"
_MARKS = r"(?:[^\S\n]*\[[^\]\n]{1,30}\])*"  # citation marks stay with their sentence: "… it. [2]"
_ENDS = re.compile(
    rf"(?P<ascii>[.!?…]+)[{_CLOSERS}]*{_MARKS}(?=\s|$)"
    rf"|(?P<wide>[。！？｡．]+[!?！？]*)[{_CLOSERS}]*{_MARKS}"
    r"|(?P<blank>\n[^\S\n]*\n)"
    r"|(?P<item>\n(?=[^\S\n]*(?:[-*•·▪‣◦–]|\d{1,3}[.)]|\(\w{1,3}\)|#{1,6})[^\S\n]))"
    r"|(?P<line>\n)"
)
# A quotative particle after a closing quote: the sentence goes on (「…した。」と述べた).
_QUOTATIVE = re.compile(r"[」』”](?:と|って|という|との)")
_WORD_BEFORE = re.compile(r"(\w+(?:\.\w+)*)$")


def _words(listed: str) -> frozenset[str]:
    return frozenset(listed.split())


# Never end a sentence (casefolded, without their last full stop).
_ABBREVIATIONS = _words(
    """mr mrs ms dr prof st sr jr vs al cf ca approx e.g i.e u.s u.k ph.d dept corp inc ltd co
    resp viz incl esp jan feb mar apr jun jul aug sep sept oct nov dec
    z.b d.h u.a o.ä bzw vgl ggf evtl inkl sog bspw zzgl hr fr dipl ing
    т.е т.к т.н им см напр ср проф акад доц ул пер пос обл англ нем фр лат греч"""
)
# End no sentence when a number follows: "Fig. 3", "No. 5", "S. 12", "рис. 2".
_BEFORE_NUMBERS = _words(
    """fig figs eq eqs no nos vol vols pp p ch chap sec sect art tab app ref refs ex nr abb kap bd
    s hft tab рис табл стр гл с т ч п"""
)
# A German ordinal ("am 3. Oktober", "im 19. Jahrhundert") follows these words or precedes a month.
_ORDINAL_AFTER = _words(
    "am im vom zum bis ab seit dem den der des die das und oder zwischen vor nach zur beim"
)
_MONTHS = re.compile(
    r"(?:januar|jänner|februar|märz|april|mai|juni|juli|august|september|oktober|november|"
    r"dezember|jahrhundert|jahrtausend|jh)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Sentence:
    """`text[start:end]` is the sentence; `skipped` the page headers and footers inside it."""

    start: int
    end: int
    role: str = BODY
    skipped: tuple[tuple[int, int], ...] = ()


def sentence_spans(
    text: str,
    start: int = 0,
    end: int | None = None,
    *,
    roles: Roles | None = None,
    offset: int = 0,
    lines: bool = False,
) -> list[tuple[int, int]]:
    """`[start, end)` of each sentence of `text[start:end]` (offsets into `text`), whitespace
    trimmed. See `sentences`."""
    return [
        (s.start, s.end)
        for s in sentences(text, start, end, roles=roles, offset=offset, lines=lines)
    ]


def sentences(
    text: str,
    start: int = 0,
    end: int | None = None,
    *,
    roles: Roles | None = None,
    offset: int = 0,
    lines: bool = False,
) -> list[Sentence]:
    """The sentences of `text[start:end]`, in text order, with offsets into `text`.

    Args:
        roles: the document's roles; `offset` is where `text` starts in the document they label
            (a passage's start, or 0 for the document's own text).
        lines: every line break ends a sentence (an answer), not only a blank line or a list item.
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(start, 0)
    if start >= end:
        return []
    if roles is None:
        return [Sentence(a, b) for a, b in _split(text, start, end, lines)]
    runs, view = _runs(text, start, end, roles, offset)
    out = []
    for a, b, role, skipped in runs:
        for x, y in _split(view, a, b, lines):
            inside = tuple((max(s, x), min(t, y)) for s, t in skipped if s < y and x < t)
            out.append(Sentence(x, y, role, inside))
    return out


def shown_parts(text: str, sentence: Sentence) -> list[str]:
    """The parts of a sentence a reader is shown: its text without the page headers and footers
    it runs over (a quote joins them with "…")."""
    parts, at = [], sentence.start
    for a, b in sentence.skipped:
        parts.append(text[at:a])
        at = b
    parts.append(text[at : sentence.end])
    return [p for p in parts if p.strip()]


def _runs(
    text: str, start: int, end: int, roles: Roles, offset: int
) -> tuple[list[tuple[int, int, str, list[tuple[int, int]]]], str]:
    """`[start, end)` cut where its role changes: (start, end, role, page furniture skipped
    inside), and the text with that furniture (and the whitespace around it) blanked."""
    pieces = [
        RoleRange(p.start - offset, p.end - offset, p.role)
        for p in roles.pieces(start + offset, end + offset)
        if p.end > p.start
    ]
    # Pieces that are only whitespace take no side: a footer between "…of the" and "\n\nmodel…".
    solid = [p for p in pieces if text[p.start : p.end].strip()]
    skip = set()
    for i, p in enumerate(solid):
        if p.role not in SKIPPED:
            continue
        before = next((q.role for q in reversed(solid[:i]) if q.role not in SKIPPED), None)
        after = next((q.role for q in solid[i + 1 :] if q.role not in SKIPPED), None)
        if before in PROSE and after in PROSE:
            skip.add(p)
    view = list(text)
    runs: list[tuple[int, int, str, list[tuple[int, int]]]] = []
    for p in pieces:
        role = p.role
        if p in skip:
            a, b = p.start, p.end
            while a > start and text[a - 1].isspace():
                a -= 1
            while b < end and text[b].isspace():
                b += 1
            view[a:b] = " " * (b - a)
            role = runs[-1][2] if runs else BODY
        elif not text[p.start : p.end].strip() and runs:
            role = runs[-1][2]  # whitespace between two roles goes with the first
        if runs and runs[-1][2] == role:
            a0, _, _, skipped = runs[-1]
            runs[-1] = (a0, p.end, role, skipped)
        else:
            runs.append((p.start, p.end, role, []))
        if p in skip:
            runs[-1][3].append((p.start, p.end))
    return runs, "".join(view)


def _split(text: str, start: int, end: int, lines: bool) -> list[tuple[int, int]]:
    cuts = [m.end() for m in _ENDS.finditer(text, start, end) if _ends(text, m, end, lines)]
    out = []
    at = start
    for cut in [*cuts, end]:
        a, b = at, cut
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
        at = cut
    return out


def _ends(text: str, m: re.Match[str], end: int, lines: bool) -> bool:
    if m.group("line") is not None:
        return lines
    if m.group("blank") is not None or m.group("item") is not None:
        return True
    if m.group("wide") is not None:
        dot = m.start("wide")
        if (
            text[dot] == "．"
            and text[dot - 1 : dot].isdigit()
            and text[m.end() : m.end() + 1].isdigit()
        ):
            return False  # ３．５
        return not _QUOTATIVE.match(text, m.end() - 1) and not _inside_quote(text, m)
    after = text[m.end() : end].lstrip()
    first = after[:1]
    if first and (first.islower() or first in ",;:"):
        return False  # "e.g. the", "et al., 2003", "what? he asked"
    if m.group("ascii")[0] != "." or m.group("ascii").startswith(".."):
        return True
    word = _WORD_BEFORE.search(text, max(0, m.start() - 20), m.start())
    if word is None:
        return True
    name = word.group(1).casefold()
    if name == "э" and text[word.start() - 3 : word.start()].casefold() == "н. ":
        return True  # "во 2 веке н. э. Эта": the era's abbreviation ends sentences
    if name in _ABBREVIATIONS or (len(name) == 1 and name.isalpha()):
        return False  # "Dr. Li", "J. Smith", "z.B. Berlin"
    if first.isdigit() or first == "(":
        return name not in _BEFORE_NUMBERS
    if name.isdigit() and len(name) <= 3:
        line_start = text.rfind("\n", 0, word.start()) + 1
        if not text[line_start : word.start()].strip(" \t("):
            return False  # "1. First" at a line's start: an enumeration
        before = _WORD_BEFORE.search(text[max(0, word.start() - 20) : word.start()].rstrip())
        if (before and before.group(1).casefold() in _ORDINAL_AFTER) or _MONTHS.match(after):
            return False  # "am 3. Oktober"
    return True


def _inside_quote(text: str, m: re.Match[str]) -> bool:
    """Whether the full stop is inside 「…」 or 『…』 that closes soon: the quote is one sentence
    (「…やっている。党には…驚いた」としている)."""
    for opening, closing in ("「」", "『』"):
        before = text[max(0, m.start() - QUOTE_REACH) : m.start()]
        if (
            before.rfind(opening) > before.rfind(closing)
            and closing not in text[m.start() : m.end()]
        ) and text.find(closing, m.end(), m.end() + QUOTE_REACH) >= 0:
            return True
    return False
