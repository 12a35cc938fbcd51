"""Markdown: the title and the headings (the text itself is stored as written)."""

from __future__ import annotations

import re

from knownote.read.canonical import good_title
from knownote.read.sections import Heading

_MD_TITLE = re.compile(r"#\s+(.+?)(\s+#+)?\s*")
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(?:(=+)|(-+))[ \t]*$")
# lines that are not paragraph text: list items, quotes, tables, indented code, thematic breaks
_NOT_SETEXT = re.compile(r" {0,3}([-*+>|]|\d+[.)]\s| {4}|\t|(\*\s*){3,}$|(_\s*){3,}$)")


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX ("## Training") and setext (a line underlined with === or ---) headings outside code
    fences, as ranges of their words. A setext heading is one line after a blank line (or the
    start): "---" under a longer paragraph or a list item is left alone."""
    headings, fenced, pos = [], False, 0
    before: tuple[int, str] | None = None  # the previous line, if it could be a setext title
    previous_blank = True
    for line in text.split("\n"):
        title, before = before, None
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _MD_HEADING.match(line)):
            headings.append(Heading(pos + match.start(2), pos + match.end(2), len(match.group(1))))
        elif not fenced and title and (underline := _SETEXT.match(line)):
            start = title[0] + len(title[1]) - len(title[1].lstrip())
            headings.append(Heading(start, title[0] + len(title[1].rstrip()), underline.lastindex))
        elif not fenced and previous_blank and line.strip() and not _NOT_SETEXT.match(line):
            before = (pos, line)
        previous_blank = not line.strip()
        pos += len(line) + 1
    return tuple(headings)


def markdown_title(text: str) -> str | None:
    """The first level-1 ATX heading near the top, outside code fences."""
    fenced = False
    for line in text.split("\n", 50)[:50]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _MD_TITLE.fullmatch(line)):
            return good_title(match.group(1))
    return None
