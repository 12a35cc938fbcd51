"""Canonical text -> passages with exact offsets.

A passage is only a pair of integers: ``text[span.start:span.end]`` *is* the passage, so passage
text is never built any other way (see DESIGN.md, "two integers per passage").

How a passage ends. From its start a passage may take at most ``size`` characters. In the second
half of that window it ends at the last boundary of the highest-priority kind present:

1. paragraph break (a blank line, possibly holding spaces),
2. line break,
3. sentence end: ``.`` ``!`` ``?`` ``…`` followed by whitespace, or full-width ``。`` ``！`` ``？``
   ``．`` ``｡`` with or without whitespace after them; closing quotes and brackets right after
   the mark stay with the sentence,
4. clause punctuation: ``,`` ``;`` ``:`` followed by whitespace, or ``，`` ``、`` ``；`` ``：``
   ``﹐`` ``﹑`` ``﹔`` with or without it,
5. whitespace,
6. a hard cut at ``size`` characters (moved back so a combining mark or a zero-width joiner stays
   with the character before it).

A boundary in the first half of the window is not taken: the search falls to the next kind instead,
so passages stay reasonably full.

How the next passage starts. Between ``overlap`` and ``overlap // 2`` characters before the
previous end, at the earliest sentence start (a paragraph start counts as one); else at a line
start; else the earliest clause start; else the earliest word start. Failing those, at the first
word start nearer the end (a smaller overlap), and failing that exactly ``overlap`` characters
before the end (CJK text without punctuation, long tokens). A start always lies after the previous
start and every end after the previous end, so the loop always progresses.

Overlap is skipped, and the next passage starts at the next non-whitespace character, only when
``overlap == 0``, when the previous passage is a single character, or when the previous passage is
followed by a whitespace run so long that no start inside it leaves room for
``max(1, (size - overlap) // 2)`` characters after the run. So two passages that do not overlap
are separated by whitespace only (or by nothing), and every non-whitespace character is in a
passage.

Whitespace is trimmed by moving offsets: spans never start or end on whitespace; the first span
starts at the first non-whitespace character and the last one ends after the last.

The scan is linear. Every search is one C-level ``re`` or ``str`` call bounded by a window, except
one pass over the whole text for paragraph breaks (a literal-prefixed pattern, so it is quick).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

MIN_SIZE = 20

_CLOSERS = "\"'”’»)\\]}」』）》〉】〕"  # may follow a sentence or clause mark
_STOPS = ".!?…"  # end a sentence when whitespace follows
_WIDE_STOPS = "。！？｡．"  # end a sentence on their own
_COMMAS = ",;:"
_WIDE_COMMAS = "，、；：﹐﹑﹔"


def _mark(narrow: str, wide: str, blank_line: bool = False) -> str:
    """A sentence or clause mark and the closers after it; a match ends where a passage may end.

    ``narrow`` marks count only before whitespace, ``wide`` ones anywhere. With ``blank_line``,
    a blank line matches too. Each pattern starts with one character class so ``re`` can skip
    ahead quickly, and no part is retried inside a run, so scans stay linear.
    """
    first, blank = (r"\n", r"(?<=\n)[^\S\n]*+\n|") if blank_line else ("", "")
    return (
        rf"[{first}{narrow}{wide}](?:{blank}(?<=[{narrow}])[{_CLOSERS}]*+(?=\s)"
        rf"|(?<=[{wide}])[{wide}]*+[{_CLOSERS}]*+)"
    )


_paragraph_breaks = re.compile(r"\n[^\S\n]*+\n").finditer

# ``(?s:.*)`` jumps to the end of the window and backtracks, so a match ends at the *last*
# boundary in the window.
_last_sentence_end = re.compile(rf"(?s:.*){_mark(_STOPS, _WIDE_STOPS)}").match
_last_clause_end = re.compile(rf"(?s:.*){_mark(_COMMAS, _WIDE_COMMAS)}").match
_last_word_end = re.compile(r"(?s:.*)\S(?=\s)").match
_last_non_space = re.compile(r"(?s:.*)\S").match

# A match ends where a passage may start. A paragraph start counts as a sentence start.
_sentence_start = re.compile(_mark(_STOPS, _WIDE_STOPS, blank_line=True) + r"\s*+").search
_clause_start = re.compile(_mark(_COMMAS, _WIDE_COMMAS) + r"\s*+").search
_word_start = re.compile(r"\s++").search
_skip_space = re.compile(r"\s*+").match

# How far before a start window a separator leading into it may begin.
_LEAD_IN = 8


@dataclass(frozen=True, slots=True)
class Span:
    start: int  # str index into the text
    end: int  # exclusive


def split(text: str, size: int = 500, overlap: int = 50) -> list[Span]:
    """Split ``text`` into overlapping passages of at most ``size`` characters.

    Raises ValueError when ``size < 20`` or when ``overlap`` is negative or not below ``size``.
    Empty and whitespace-only text gives no passages. See the module docstring for the rules.
    """
    _check_args(size, overlap)
    n = len(text)
    start = _skip_space(text, 0).end()
    if start == n:
        return []
    last = _last_non_space(text, start, n).end()
    paragraphs = [m.start() for m in _paragraph_breaks(text)]
    half = size // 2
    room = max(1, (size - overlap) // 2)
    starts: list[int] = []
    ends: list[int] = []
    uncovered = start  # the first non-whitespace character not yet in a passage
    while last - start > size:
        lo = start + half
        if lo <= uncovered:
            lo = uncovered + 1
        end = _find_end(text, paragraphs, start, lo, start + size)
        starts.append(start)
        ends.append(end)
        uncovered = _skip_space(text, end).end()
        start = _next_start(text, start, end, uncovered, overlap, uncovered + room - size)
    starts.append(start)
    ends.append(last)
    return list(map(Span, starts, ends))


def _check_args(size: int, overlap: int) -> None:
    if size < MIN_SIZE:
        raise ValueError(f"size must be at least {MIN_SIZE} characters, got {size}")
    if overlap < 0:
        raise ValueError(f"overlap must not be negative, got {overlap}")
    if overlap >= size:
        raise ValueError(f"overlap must be smaller than size ({size}), got {overlap}")


def _find_end(text: str, paragraphs: list[int], start: int, lo: int, hi: int) -> int:
    """The best end in ``[lo, hi]`` for a passage at ``start``; only a hard cut that has to be
    trimmed back over whitespace ends before ``lo``.

    ``hi`` lies before the last non-whitespace character and ``paragraphs`` holds the first
    newline of every paragraph break, in order.
    """
    newline = text.rfind("\n", lo, hi + 1)
    if newline >= 0:  # else there is no paragraph or line break to end at
        i = bisect_right(paragraphs, newline) - 1
        if i >= 0 and paragraphs[i] >= lo:
            end = _trim_back(text, start, paragraphs[i])
            if end >= lo:
                return end
        end = _trim_back(text, start, newline)
        if end >= lo:
            return end

    for last_end in (_last_sentence_end, _last_clause_end, _last_word_end):
        m = last_end(text, lo - 1, hi + 1)
        if m is not None and m.end() > hi:  # a full-width mark or its closers reach ``hi``
            m = last_end(text, lo - 1, hi)
        if m is not None:
            return m.end()

    end = hi
    while end > lo and _joined(text, end):
        end -= 1
    return _trim_back(text, start, end)


def _next_start(
    text: str, prev_start: int, prev_end: int, uncovered: int, overlap: int, earliest: int
) -> int:
    """Where the passage after ``[prev_start, prev_end)`` starts.

    ``uncovered`` is the first non-whitespace character at or after ``prev_end``; ``earliest`` is
    the first start that still leaves room for new text after the whitespace before it.
    """
    a = prev_end - overlap
    if a <= prev_start:
        a = prev_start + 1
    if a < earliest:
        a = earliest
    last = prev_end - 1  # not whitespace, so every skip below stops at or before it
    if overlap == 0 or a > last:
        return uncovered
    # ``earliest`` can push ``a`` past the preferred window (a long whitespace run follows the
    # passage); every search below must still start at ``a``, or the passage would not advance.
    b = max(a, prev_end - max(1, overlap // 2))

    found = _first_start(_sentence_start, text, a, b)
    if found >= 0:
        return found
    newline = text.find("\n", a - 1, b)
    if newline >= 0:
        return _skip_space(text, newline).end()
    for search, lo, hi in ((_clause_start, a, b), (_word_start, a, b), (_word_start, b + 1, last)):
        found = _first_start(search, text, lo, hi)
        if found >= 0:
            return found

    start = _skip_space(text, a).end()
    while start < last and _joined(text, start):
        start += 1
    return start


def _first_start(search: Callable[..., re.Match[str] | None], text: str, a: int, b: int) -> int:
    """The first position in ``[a, b]`` where a ``search`` match ends, or -1."""
    m = search(text, a - _LEAD_IN if a > _LEAD_IN else 0, b + 1)
    while m is not None:
        found = m.end()
        if found > b:  # past the window, or cut short by it (then it may end on whitespace)
            return -1
        if found >= a:
            return found
        m = search(text, found, b + 1)
    return -1


def _trim_back(text: str, floor: int, i: int) -> int:
    """The smallest ``j <= i`` with only whitespace in ``text[j:i]``; ``text[floor]`` is not
    whitespace."""
    if not text[i - 1].isspace():
        return i
    return _last_non_space(text, floor, i).end()


def _joined(text: str, i: int) -> bool:
    """Whether a cut before ``text[i]`` would split off a combining mark or a ZWJ sequence."""
    return unicodedata.category(text[i])[0] == "M" or "\u200d" in text[i - 1 : i + 1]
