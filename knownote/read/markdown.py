"""Markdown: the title, the headings and the roles (the text itself is stored as written)."""

from __future__ import annotations

import re
from itertools import accumulate

from markdown_it import MarkdownIt

from knownote.read.canonical import good_title
from knownote.read.roles import RoleRange
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


# CommonMark with GFM tables; raw HTML off, so an HTML block is read as the text it shows.
_PARSER = MarkdownIt("commonmark", {"html": False}).enable("table")
_BLOCK_ROLES = {
    "table_open": "table",
    "fence": "code",
    "code_block": "code",
    "list_item_open": "list",
}
_FOOTNOTE = re.compile(r" {0,3}\[\^[^\]\n]+\]:")  # "[^1]: ..." (CommonMark reads a paragraph)


def markdown_roles(text: str) -> list[RoleRange]:
    """Tables, code blocks, list items, paragraphs of pictures only (figure), and link reference
    and footnote definitions (footnote), as ranges of whole lines of `text` (the Markdown source),
    from markdown-it's parse; block quotes are body text."""
    lines = text.split("\n")
    starts = [0, *accumulate(len(line) + 1 for line in lines)]

    def span(first: int, last: int, role: str) -> RoleRange:  # lines [first, last)
        return RoleRange(starts[first], starts[last] - 1, role)

    found: list[RoleRange] = []
    covered = [False] * len(lines)
    tokens = _PARSER.parse(text)
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        first, last = token.map
        if token.level == 0:
            covered[first:last] = [True] * (last - first)
        if role := _BLOCK_ROLES.get(token.type):
            found.append(span(first, last, role))
        elif token.type == "paragraph_open" and i + 1 < len(tokens):
            words = tokens[i + 1]
            children = [c for c in words.children or () if c.type not in ("softbreak", "hardbreak")]
            if children and all(
                c.type == "image" or (c.type == "text" and not c.content.strip()) for c in children
            ):
                found.append(span(first, last, "figure"))
            elif _FOOTNOTE.match(lines[first]):
                found.append(span(first, last, "footnote"))
    # lines no block holds that are not blank: the parser took them as link reference definitions
    for n, line in enumerate(lines):
        if not covered[n] and line.strip():
            found.append(span(n, n + 1, "footnote"))
    return [_trimmed(text, r) for r in found if text[r.start : r.end].strip()]


def _trimmed(text: str, r: RoleRange) -> RoleRange:
    part = text[r.start : r.end]
    return RoleRange(
        r.start + len(part) - len(part.lstrip()), r.end - len(part) + len(part.rstrip()), r.role
    )
