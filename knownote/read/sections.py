"""Where a passage sits: a document's headings and the section path at an offset.

A heading is a range of the extracted text, like everything else we keep: `text[start:end]` is
the heading as it reads in the document. Headings never change the text or the passages' offsets.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

SEPARATOR = " › "
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Heading:
    start: int
    end: int  # exclusive; text[start:end] is the heading
    level: int  # 1 is the top level (a chapter, an h1, a "#"); deeper levels count up


def heading_text(text: str, heading: Heading) -> str:
    """The heading on one line, its white space collapsed."""
    return _SPACE.sub(" ", text[heading.start : heading.end]).strip()


def section_paths(text: str, headings: Sequence[Heading], offsets: Sequence[int]) -> list[str]:
    """For each offset, the path of the headings in force there ("3 Method › 3.2 Training").

    A heading is in force from its start until the next heading of the same or a higher level,
    and on the whole line where it starts (a passage that begins with "# Title" is in "Title");
    an offset before the first heading has the empty path.
    """
    ordered = sorted(headings, key=lambda h: (h.start, h.level))
    starts = [h.start for h in ordered]
    # paths[i]: the path once heading i is in force
    paths: list[str] = []
    stack: list[tuple[int, str]] = []
    for heading in ordered:
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading_text(text, heading)))
        paths.append(SEPARATOR.join(title for _, title in stack if title))
    result = []
    for offset in offsets:
        line_end = text.find("\n", offset)
        i = bisect.bisect_right(starts, line_end if line_end >= 0 else len(text)) - 1
        result.append(paths[i] if i >= 0 else "")
    return result


def section_label(section: str) -> str:
    """'§3.2 Training' for the path '3 Method › 3.2 Training' (its innermost heading); ''."""
    last = section.split(SEPARATOR)[-1].strip()
    return f"§{last}" if last else ""
