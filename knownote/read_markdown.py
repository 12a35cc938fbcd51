"""Markdown: the title and the headings (the text itself is stored as written)."""

from __future__ import annotations

import re

from knownote.canonical import good_title
from knownote.sections import Heading

_MD_TITLE = re.compile(r"#\s+(.+?)(\s+#+)?\s*")
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX headings ("## Training") outside code fences, as ranges of their words."""
    headings, fenced, pos = [], False, 0
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _MD_HEADING.match(line)):
            headings.append(Heading(pos + match.start(2), pos + match.end(2), len(match.group(1))))
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
