"""The record of a report: lines of text whose `[n]` marks name exact ranges of the sources.

A report is written from a notebook (or chosen sources) by `knownote.study.reports` and kept by
`knownote.store.reports`; `knownote.show.report_export` writes it as Markdown, Word or PDF. Every
citation is a range of a document's canonical text, so `text[start:end]` is what it quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from knownote.answer.cite import chars_label, page_label, time_label

# Written without an answer model: quotes of the sources, never a paraphrase.
QUOTED_KINDS = ("timeline", "glossary")
# Written by an answer model, each sentence with its marks and support span.
WRITTEN_KINDS = ("briefing", "study-guide", "faq", "custom")
KINDS = QUOTED_KINDS + WRITTEN_KINDS
KIND_NAMES = {
    "timeline": "Timeline",
    "glossary": "Glossary",
    "briefing": "Briefing",
    "study-guide": "Study guide",
    "faq": "FAQ",
    "custom": "Custom report",
}
STYLES = ("heading", "paragraph", "item", "quote")


@dataclass(frozen=True)
class ReportCite:
    """What one `[n]` mark of a report names: a range of a source, quoted."""

    n: int  # the mark's number, 1-based, unique in its report
    document_id: int
    title: str
    start: int  # of the passage (or quoted sentence) in the document's text
    end: int
    quote: str  # the document's text[start:end]
    page: int | None = None  # 1-based page of `start`, for paged sources
    seconds: tuple[float, float] | None = None  # a recording: when the range was said
    span: tuple[int, int] | None = None  # the support span inside [start, end), when checked
    stale: bool = False  # the source changed or was removed since the report was made

    @property
    def where(self) -> str:
        """'Title, p. 4, chars 1,020–1,530' (or the time of a recording)."""
        start, end = self.span or (self.start, self.end)
        parts = [
            self.title,
            page_label(self.page, None),
            time_label(self.seconds),
            chars_label(start, end),
        ]
        return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class ReportLine:
    """One line of a report: a heading, a written sentence or paragraph, a list item, a quote."""

    text: str  # with its marks in the canonical form `[n]`
    style: str = "paragraph"  # one of STYLES
    cites: tuple[int, ...] = ()  # the numbers of the marks in `text`, in order
    label: str | None = None  # a glossary's term; a timeline entry's one-line label
    date: str | None = None  # a timeline entry's date, ISO 8601 ('2021-03-03', '1990/1999')
    unsupported: bool = False  # a written sentence with no close match in what it cites
    continues: bool = False  # it goes on the paragraph or item of the line before it


@dataclass(frozen=True)
class Report:
    kind: str  # one of KINDS
    title: str
    notebook_id: int
    lines: tuple[ReportLine, ...]
    cites: tuple[ReportCite, ...]
    model: str | None = None  # the answer model that wrote it; None for quoted kinds
    instructions: str = ""  # a custom report's instructions, a focus
    written: int = 0  # sentences the model wrote (or entries found, for quoted kinds)
    kept: int = 0
    marked: int = 0  # kept, marked as having no close match
    document_ids: tuple[int, ...] = ()  # the chosen sources; () for the whole notebook
    id: int | None = None
    made_at: datetime | None = None

    def cite(self, n: int) -> ReportCite:
        return next(c for c in self.cites if c.n == n)
