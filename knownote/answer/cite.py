"""Citation records and the parser for an answer's [n] marks.

A mark is a bracket pair holding numbers: `[3]`, `[1, 3]`, `[1-3]`, `[2–4]`, full-width `【1】`
and `［1］`. Each number names a passage that was put in front of the model; numbers outside
1..k are dropped and counted. Text such as `[see 2]` is not a mark.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knownote.search.retrieve import Hit

_OPEN = r"\[［【〔"
_CLOSE = r"\]］】〕"
_LIST_SEP = r"[,，、;；]|\band\b|\s(?=\d)"
_RANGE_SEP = r"[-‐‑‒–—―~〜～－]"
_ITEM = rf"\d+(?:\s*(?:{_RANGE_SEP})\s*\d+)?"
_BODY = rf"[{_OPEN}]\s*({_ITEM}(?:\s*(?:{_LIST_SEP})\s*{_ITEM})*)\s*[{_CLOSE}]"
MARK = re.compile(_BODY)
_SPACED_MARK = re.compile(rf"([ \t]*){_BODY}")  # with the space before it, removed along with it
_NUMBER_OR_RANGE = re.compile(rf"(\d+)(?:\s*(?:{_RANGE_SEP})\s*(\d+))?")


def page_label(page_start: int | None, page_end: int | None) -> str:
    """'p. 14', 'pp. 14–15', or '' for formats without pages."""
    if page_start is None:
        return ""
    if page_end is None or page_end == page_start:
        return f"p. {page_start}"
    return f"pp. {page_start}–{page_end}"


def clock(seconds: float) -> str:
    """'12:04', or '1:02:09' from an hour on."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def time_label(seconds: tuple[float, float] | None) -> str:
    """'12:04–12:37' for a passage of a recording, '' for anything else."""
    if seconds is None:
        return ""
    return f"{clock(seconds[0])}–{clock(seconds[1])}"


def chars_label(start: int, end: int) -> str:
    return f"chars {start:,}–{end:,}"


@dataclass(frozen=True)
class SourcePassage:
    """A passage that was put in front of the model, numbered as in the prompt."""

    n: int
    passage_id: int | None
    document_id: int
    title: str
    passage_index: int
    start: int
    end: int
    page_start: int | None
    page_end: int | None
    text: str
    cited: bool
    stale: bool = False
    section: str = ""  # the passage's section path now ('' when none or no longer there)
    seconds: tuple[float, float] | None = None  # a recording: when the passage was said
    origin: str = ""  # a web page: where and when it was fetched

    @property
    def pages(self) -> str:
        """'p. 3', 'pp. 3–4' or '' for formats without pages."""
        return page_label(self.page_start, self.page_end)

    @property
    def chars(self) -> str:
        return chars_label(self.start, self.end)

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def sources_from_hits(hits: Sequence[Hit], *, cited: bool = False) -> list[SourcePassage]:
    """Search hits as the numbered passages put in front of a model ([1] is the first hit)."""
    return [
        SourcePassage(
            n=i,
            passage_id=h.passage_id,
            document_id=h.document_id,
            title=h.title,
            passage_index=h.passage_index,
            start=h.start,
            end=h.end,
            page_start=h.page_start,
            page_end=h.page_end,
            text=h.text,
            cited=cited,
            section=h.section,
        )
        for i, h in enumerate(hits, start=1)
    ]


@dataclass(frozen=True)
class Support:
    """Where one sentence of an answer leans: a span `[start, end)` of the document text inside
    passage `n`, with its score. `suggested`: the sentence had no mark, so the span was looked
    for in every passage; `weak`: no passage came close (a note, not a verdict)."""

    sentence: int  # position among the answer's sentences
    sentence_start: int  # into the answer text
    sentence_end: int
    n: int
    document_id: int
    start: int  # into the document text
    end: int
    text: str
    score: float
    suggested: bool
    weak: bool
    stale: bool = False
    # The span as a reader is shown it, when that differs from its text on one line: a page
    # header or footer inside it shown as "…" (knownote.answer.support.shown_span).
    shown: str = ""

    @property
    def chars(self) -> str:
        return chars_label(self.start, self.end)

    @property
    def display(self) -> str:
        return self.shown or " ".join(self.text.split())

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Answer:
    """An answer with every passage that was in front of the model.

    `text` carries its marks in the canonical form `[n]`, one number per bracket pair.
    `notice` is a line for the user: extractive answers, dropped connections, model errors.
    """

    question: str
    text: str
    model: str | None
    extractive: bool
    incomplete: bool
    passages: tuple[SourcePassage, ...]
    chat_id: int | None = None
    message_id: int | None = None
    dropped_marks: int = 0
    notice: str | None = None
    searched: tuple[str, ...] = ()  # the queries searched: the question, and a rewrite of it
    supports: tuple[Support, ...] = ()

    @property
    def citations(self) -> tuple[SourcePassage, ...]:
        """The passages the answer cites, by number."""
        return tuple(p for p in self.passages if p.cited)

    def as_dict(self) -> dict[str, object]:
        """The answer as JSON-ready data (the `ask --json` output)."""
        citations = []
        for p in self.citations:
            entry = p.as_dict()
            del entry["cited"]
            citations.append(entry)
        return {
            "question": self.question,
            "answer": self.text,
            "model": self.model,
            "extractive": self.extractive,
            "incomplete": self.incomplete,
            "chat_id": self.chat_id,
            "message_id": self.message_id,
            "notice": self.notice,
            "dropped_marks": self.dropped_marks,
            "searched": list(self.searched),
            "citations": citations,
            "passages": [p.as_dict() for p in self.passages],
            "supports": [s.as_dict() for s in self.supports],
        }


def _numbers(mark_body: str, k: int) -> tuple[list[int], int]:
    """The numbers in one mark that lie in 1..k, and how many numbers or ranges fell outside."""
    kept: list[int] = []
    dropped = 0
    for first, last in _NUMBER_OR_RANGE.findall(mark_body):
        a = int(first)
        b = int(last) if last else a
        lo, hi = min(a, b), max(a, b)
        inside = range(max(lo, 1), min(hi, k) + 1)
        kept.extend(inside)
        if lo < 1 or hi > k:
            dropped += 1
    return kept, dropped


def normalize_marks(text: str, k: int) -> tuple[str, list[int], int]:
    """Rewrite every mark as `[n]` per valid number; remove marks with none.

    Returns the rewritten text, the cited numbers in order of first appearance and the number
    of dropped marks (a number or range outside 1..k counts once).
    """
    cited: list[int] = []
    seen: set[int] = set()
    dropped = 0

    def rewrite(match: re.Match[str]) -> str:
        nonlocal dropped
        numbers, outside = _numbers(match.group(2), k)
        dropped += outside
        unique = list(dict.fromkeys(numbers))
        for n in unique:
            if n not in seen:
                seen.add(n)
                cited.append(n)
        if not unique:
            return ""
        return match.group(1) + "".join(f"[{n}]" for n in unique)

    return _SPACED_MARK.sub(rewrite, text), cited, dropped


def parse_citations(text: str, k: int) -> tuple[list[int], int]:
    """Cited numbers (1..k) in order of first appearance, and the count of dropped marks."""
    _, cited, dropped = normalize_marks(text, k)
    return cited, dropped


def strip_marks(text: str) -> str:
    """The text without any citation marks (for earlier turns shown to the model again)."""
    return _SPACED_MARK.sub("", text)
