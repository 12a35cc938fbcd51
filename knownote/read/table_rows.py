"""Tables read row by row: a page's lines regrouped so the cells of a table row make one line.

A reader gives a page's lines in its own order, which for a table is often column by column
(OCR engines cut a page along the empty stripes between columns; MuPDF writes a grid of short
names one cell per line). Here the lines of a page's text, each with its box, are put in rows
(lines whose vertical extents overlap by half the lower one's height), and a run of rows that
reads as a table replaces those lines, where the first of them was, by one line per row: top
to bottom, cells left to right, joined by CELL_SEPARATOR (by a space where two pieces of one
cell are under a line's height apart, as a two-character Chinese name set to the width of three).

A run of rows is a table when at least three rows (or two, one of them of three cells) have
several cells, at most two single-cell rows apart. A line longer than MAX_CELL_WIDTH line heights
is no cell (the lines of two text columns, which also share baselines, are long), nor is a short
line right under one (a paragraph's last line); a run whose cells are mostly one CJK character
is vertical text (written a character a line), no table. The result says, per character, where
it came from in the page's text (-1 for a separator), so the boxes readers keep per character
follow their characters.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from knownote.read.canonical import clean_text

Box = tuple[float, float, float, float]  # x0, y0, x1, y1

CELL_SEPARATOR = " · "
MAX_CELL_WIDTH = 12.0  # in line heights; a text column's line is 20-30
SAME_CELL_GAP = 0.9  # in line heights: pieces closer than this are one cell, joined by a space
MAX_SINGLE_ROWS = 2  # single-cell rows (a wrapped cell, a caption) a table may hold in a run


@dataclass(frozen=True)
class Reordered:
    """A page's text with its table rows joined; `source[i]` is the index in the original text
    of `text[i]`, or -1 for a character put in (a separator, a newline between rows)."""

    text: str
    source: tuple[int, ...]


@dataclass(frozen=True)
class _Line:
    index: int  # its place among the page's lines
    start: int  # offset of its text in the page's text
    end: int
    box: Box

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


def reorder_rows(text: str, line_boxes: Sequence[Box | None]) -> Reordered | None:
    """The text with each table's rows on lines of their own (see the module's doc); None when
    the page holds no table. `line_boxes` has one box per line of `text` (split at "\\n"), None
    for an empty line or one whose place is unknown."""
    parts = text.split("\n")
    if len(parts) != len(line_boxes):
        return None
    lines, at = [], 0
    for index, (part, box) in enumerate(zip(parts, line_boxes, strict=True)):
        if part.strip() and box is not None and box[3] > box[1] and box[2] > box[0]:
            lines.append(_Line(index, at, at + len(part), box))
        at += len(part) + 1
    cells = _cells(lines)
    tables = _tables(text, _rows(cells))
    if not tables:
        return None
    taken = {line.index for line in cells}
    long = [line for line in lines if line.index not in taken and _long(line)]
    return _rebuild(text, parts, [_widened(table, long) for table in tables])


def _long(line: _Line) -> bool:
    return line.box[2] - line.box[0] > MAX_CELL_WIDTH * line.height


def _widened(table: list[list[_Line]], long: list[_Line]) -> list[list[_Line]]:
    """The table with the long lines that start where cells of two of its rows do, past its
    first column (a cell of running text, "이마트, 이마트 트레이더스, 롯데마트, 홈플러스") and
    within its height, its rows made again."""
    cells = [line for row in table for line in row]
    starts = [line.box[0] for row in table for line in row[1:]]  # not the first: the margin's
    columns = [x for x in set(starts) if sum(abs(x - y) < 1.0 for y in starts) > 1]
    top, bottom = min(c.box[1] for c in cells), max(c.box[3] for c in cells)
    extra = [
        line
        for line in long
        if top <= (line.box[1] + line.box[3]) / 2 <= bottom
        and any(abs(line.box[0] - x) < 0.5 * line.height for x in columns)
    ]
    return _rows(cells + extra) if extra else table


def _cells(lines: list[_Line]) -> list[_Line]:
    """The lines that may be table cells: not a text column's line (longer than MAX_CELL_WIDTH
    line heights), nor the short last line of a paragraph (right under such a line)."""
    long = sorted((ln for ln in lines if _long(ln)), key=lambda ln: ln.box[3])
    bottoms = [ln.box[3] for ln in long]
    cells = []
    for line in lines:
        if _long(line):
            continue
        top = line.box[1]
        lo = bisect.bisect_left(bottoms, top - 0.6 * line.height)  # a leading, not a gap
        hi = bisect.bisect_right(bottoms, top + 0.5 * line.height)
        if not any(min(ln.box[2], line.box[2]) > max(ln.box[0], line.box[0]) for ln in long[lo:hi]):
            cells.append(line)
    return cells


def _rows(lines: list[_Line]) -> list[list[_Line]]:
    """The lines in rows, top to bottom; each row's cells left to right."""
    rows: list[list[_Line]] = []
    spans: list[tuple[float, float]] = []
    for line in sorted(lines, key=lambda ln: ((ln.box[1] + ln.box[3]) / 2, ln.box[0])):
        if rows:
            top, bottom = spans[-1]
            lower = min(line.height, bottom - top)
            if min(bottom, line.box[3]) - max(top, line.box[1]) >= 0.5 * lower:
                rows[-1].append(line)
                spans[-1] = (min(top, line.box[1]), max(bottom, line.box[3]))
                continue
        rows.append([line])
        spans.append((line.box[1], line.box[3]))
    return [sorted(row, key=lambda ln: ln.box[0]) for row in rows]


def _is_multi(row: list[_Line]) -> bool:
    """Several cells side by side, none overlapping the next."""
    return len(row) > 1 and all(a.box[2] <= b.box[0] + 0.1 * a.height for a, b in pairwise(row))


def _tables(text: str, rows: list[list[_Line]]) -> list[list[list[_Line]]]:
    """Runs of rows that read as tables (see the module's doc)."""
    tables: list[list[list[_Line]]] = []
    run: list[list[_Line]] = []
    singles = 0
    for row in [*rows, None]:
        if row is not None and _is_multi(row):
            run.append(row)
            singles = 0
            continue
        if row is not None and run and singles < MAX_SINGLE_ROWS:
            run.append(row)
            singles += 1
            continue
        while run and not _is_multi(run[-1]):  # a run ends with a row of cells
            run.pop()
        if _is_table(text, run):
            tables.append(run)
        run, singles = [], 0
    return tables


def _is_table(text: str, run: list[list[_Line]]) -> bool:
    multi = [row for row in run if _is_multi(row)]
    if len(multi) < 2 or (len(multi) == 2 and max(map(len, multi)) < 3):
        return False
    # a page of vertical text comes one character a line: those are no cells
    cells = [line for row in multi for line in row]
    lone = sum(
        line.end - line.start == 1 and unicodedata.east_asian_width(text[line.start]) in "WF"
        for line in cells
    )
    return lone < 0.5 * len(cells)


def _row_text(text: str, row: list[_Line]) -> tuple[list[str], list[int]]:
    height = median(line.height for line in row)
    chars: list[str] = []
    source: list[int] = []
    for i, line in enumerate(row):
        if i:
            gap = line.box[0] - row[i - 1].box[2]
            sep = " " if gap < SAME_CELL_GAP * height else CELL_SEPARATOR
            chars.extend(sep)
            source.extend([-1] * len(sep))
        chars.extend(text[line.start : line.end])
        source.extend(range(line.start, line.end))
    return chars, source


def _rebuild(text: str, parts: list[str], tables: list[list[list[_Line]]]) -> Reordered:
    """The page's lines in their order, each table's lines replaced by its rows where the
    first of them was; blank lines left doubled by the lines taken out are dropped."""
    first: dict[int, list[list[_Line]]] = {}
    taken: set[int] = set()
    for table in tables:
        indices = [line.index for row in table for line in row]
        first[min(indices)] = table
        taken.update(indices)
    units: list[tuple[list[str], list[int]]] = []  # one per output line
    at = 0
    for index, part in enumerate(parts):
        if index in first:
            units.extend(_row_text(text, row) for row in first[index])
        elif index not in taken:
            units.append((list(part), list(range(at, at + len(part)))))
        at += len(part) + 1
    chars: list[str] = []
    source: list[int] = []
    blank = True  # no blank line at the start, nor two in a row
    for line_chars, line_source in units:
        if not line_chars and blank:
            continue
        if chars:
            chars.append("\n")
            source.append(-1)
        chars.extend(line_chars)
        source.extend(line_source)
        blank = not line_chars
    while chars and chars[-1] == "\n":  # nor at the end
        chars.pop()
        source.pop()
    return Reordered("".join(chars), tuple(source))


def follow(
    source: Sequence[int], boxes: Sequence[Box | None], lines: Sequence[int]
) -> tuple[tuple[Box | None, ...], tuple[int, ...]]:
    """Per character of a reordered text, the box and line of the character it came from; a
    character put in has no box and the line of the character before it."""
    out_boxes: list[Box | None] = []
    out_lines: list[int] = []
    for i in source:
        out_boxes.append(None if i < 0 else boxes[i])
        out_lines.append(lines[i] if i >= 0 else (out_lines[-1] if out_lines else 0))
    return tuple(out_boxes), tuple(out_lines)


def layer_rows(blocks: Sequence[dict], text: str) -> Reordered | None:
    """The page's cleaned text with its tables' rows joined (None: no table on the page, or its
    lines could not be matched one for one to the text's lines); `blocks`: its text page's
    (`TextPage.extractDICT()["blocks"]`)."""
    boxes = _layer_line_boxes(blocks, text)
    return None if boxes is None else reorder_rows(text, boxes)


def _layer_line_boxes(blocks: Sequence[dict], text: str) -> list[Box | None] | None:
    """The box of each line of `text` (split at "\n"), the page's cleaned plain text, from the
    text layer's lines in the order MuPDF writes them; None when they do not match one for one.
    Lines not written left to right get no box (vertical text is no table row)."""
    parts = text.split("\n")
    boxes: list[Box | None] = [None] * len(parts)
    k = 0
    for block in blocks:
        for line in block.get("lines", ()):
            wanted = clean_text("".join(span["text"] for span in line["spans"]))
            if not wanted:
                continue
            while k < len(parts) and not parts[k]:
                k += 1
            if k >= len(parts) or parts[k] != wanted:
                return None
            if line["dir"][0] > 0.99:
                boxes[k] = tuple(line["bbox"])
            k += 1
    return boxes if not any(parts[k:]) else None
