"""Ranges of a source's text as other programs get them.

A range is two offsets into a document's stored text, like every passage, citation and support
span. Here it gets the app's address that opens it highlighted (`?notebook=…&source=…&start=…
&end=…`), a `knownote://NOTEBOOK/DOCUMENT#START-END` URI, and its text read back within bounds;
search hits and answers become JSON-ready records carrying both addresses.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from knownote.answer.audio_overview import AudioOverview
from knownote.answer.cite import Answer
from knownote.answer.report import ReportCite
from knownote.errors import KnowNoteError, NotFound
from knownote.read.extracted import page_of
from knownote.search.retrieve import Hit
from knownote.store.db import Document, Store

READ_LIMIT = 20_000  # characters one read may return (about 5,000 tokens)
LINK_PARAMS = ("notebook", "source", "start", "end")


class RangeError(KnowNoteError):
    """A range that does not fit its source's text, or is longer than one read may be."""


@dataclass(frozen=True)
class SpanLinks:
    """The addresses of ranges of one notebook's sources; `app_url` is where the app runs.
    Across the library, `notebooks` gives each document's notebook (see `library_links`)."""

    app_url: str
    notebook_id: int | None
    notebooks: Mapping[int, int] = field(default_factory=dict)  # document id -> notebook id

    def notebook_of(self, document_id: int) -> int | None:
        return self.notebooks.get(document_id, self.notebook_id)

    def link(self, document_id: int, start: int, end: int) -> str:
        """The app's address that opens the source at `[start, end)`, highlighted."""
        notebook = self.notebook_of(document_id)
        query = urlencode({"notebook": notebook, "source": document_id, "start": start, "end": end})
        return f"{self.app_url.rstrip('/')}/?{query}"

    def uri(self, document_id: int, start: int, end: int) -> str:
        """The MCP resource that reads the range back."""
        return f"knownote://{self.notebook_of(document_id)}/{document_id}#{start}-{end}"

    def both(self, document_id: int, start: int, end: int) -> dict[str, str]:
        return {
            "link": self.link(document_id, start, end),
            "uri": self.uri(document_id, start, end),
        }


def library_links(store: Store, app_url: str, document_ids: Iterable[int]) -> SpanLinks:
    """Links to ranges of documents of several notebooks, each opening its own notebook (a
    deleted document has none: its ranges are stale, and shown without a link)."""
    notebooks = {}
    for document_id in set(document_ids):
        with contextlib.suppress(NotFound):
            notebooks[document_id] = store.document(document_id).notebook_id
    return SpanLinks(app_url, None, notebooks)


@dataclass(frozen=True)
class LinkedRange:
    """What a link asks the app to open."""

    notebook_id: int
    document_id: int
    start: int
    end: int


def parse_link(params: Mapping[str, str]) -> LinkedRange | None:
    """The range an address's query parameters ask to open; None when they ask for none.
    Raises RangeError, in words, for a link that names part of a range or holds no numbers."""
    given = {name: params.get(name) for name in LINK_PARAMS}
    if not any(given.values()):
        return None
    try:
        numbers = [int(str(given[name])) for name in LINK_PARAMS]
    except ValueError:
        raise RangeError(
            "This link does not name a range: it needs notebook, source, start and end, each a "
            "number. Copy the whole link again."
        ) from None
    return LinkedRange(*numbers)


def check_range(length: int, start: int, end: int, limit: int | None = READ_LIMIT) -> None:
    """Raise RangeError unless `[start, end)` lies inside a text of `length` characters and is
    at most `limit` characters long (None: any length)."""
    if start < 0 or end < start:
        raise RangeError(
            f"The range {start}–{end} is not a range: start at 0 or more, and end at or after "
            "the start."
        )
    if end > length:
        raise RangeError(
            f"The range {start:,}–{end:,} runs past the end of the text, which has {length:,} "
            f"characters. Ask for a range that ends at {length:,} or before."
        )
    if limit is not None and end - start > limit:
        raise RangeError(
            f"The range {start:,}–{end:,} is {end - start:,} characters long; one read returns "
            f"at most {limit:,}. Read {start:,}–{start + limit:,} first, then go on from there."
        )


@dataclass(frozen=True)
class RangeText:
    """A range of a source with its text, exactly `text[start:end]` of the stored text."""

    document_id: int
    title: str
    start: int
    end: int
    text: str
    length: int  # the whole stored text's
    page_start: int | None
    page_end: int | None


def read_range(
    store: Store, document: Document, start: int, end: int, limit: int | None = READ_LIMIT
) -> RangeText:
    """The text of `[start, end)` of a source, with the pages it lies on; RangeError when the
    range does not fit the text or is longer than `limit`."""
    text = store.document_text(document.id)
    check_range(len(text), start, end, limit)
    pages = store.pages(document.id)
    starts = [p.start for p in pages]
    return RangeText(
        document_id=document.id,
        title=document.title,
        start=start,
        end=end,
        text=text[start:end],
        length=len(text),
        page_start=page_of(starts, pages, start),
        page_end=page_of(starts, pages, max(start, end - 1)),
    )


def range_json(found: RangeText, links: SpanLinks) -> dict[str, object]:
    return {
        "document_id": found.document_id,
        "title": found.title,
        "start": found.start,
        "end": found.end,
        "text": found.text,
        "length": found.length,
        "page_start": found.page_start,
        "page_end": found.page_end,
        **links.both(found.document_id, found.start, found.end),
    }


def hit_json(hit: Hit, links: SpanLinks) -> dict[str, object]:
    """A search hit as JSON-ready data, with the app's link and the URI of its range."""
    return {**hit.as_dict(), **links.both(hit.document_id, hit.start, hit.end)}


def answer_json(answer: Answer, links: SpanLinks) -> dict[str, object]:
    """An answer as JSON-ready data (`Answer.as_dict`), each citation, passage and support span
    with the app's link and the URI of its range."""
    record = answer.as_dict()
    for key in ("citations", "passages", "supports"):
        for entry in record[key]:
            entry.update(links.both(entry["document_id"], entry["start"], entry["end"]))
    return record


def cite_json(cite: ReportCite, links: SpanLinks) -> dict[str, object]:
    """A report's or an audio overview's citation: its source, title, page, time, range, quote,
    support span, whether it is stale, and the links that open the range."""
    return {
        "n": cite.n, "document_id": cite.document_id, "title": cite.title, "page": cite.page,
        "seconds": list(cite.seconds) if cite.seconds else None, "start": cite.start,
        "end": cite.end, "quote": cite.quote, "span": list(cite.span) if cite.span else None,
        "stale": cite.stale, **links.both(cite.document_id, cite.start, cite.end),
    }  # fmt: skip


def audio_overview_json(overview: AudioOverview, links: SpanLinks) -> dict[str, object]:
    """An audio overview as JSON-ready data: each line's text, speaker, time range (seconds into
    the audio) and citations with their ranges and links."""
    cites = {c.n: c for c in overview.cites}
    return {
        "id": overview.id,
        "notebook_id": overview.notebook_id,
        "format": overview.format,
        "title": overview.title,
        "language": overview.language,
        "voices": list(overview.voices),
        "model": overview.model,
        "focus": overview.focus,
        "length": overview.length,
        "seconds": overview.seconds,
        "dropped": overview.dropped,
        "document_ids": list(overview.document_ids),
        "lines": [
            {
                "text": line.text,
                "speaker": line.speaker,
                "start_s": line.start_s,
                "end_s": line.end_s,
                "cites": [cite_json(cites[n], links) for n in line.cites if n in cites],
            }
            for line in overview.lines
        ],
    }
