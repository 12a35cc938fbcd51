"""An audio overview's transcript as Markdown: each line's time, speaker and text with its marks,
then each citation's note (title, page or time, range, quote, the link that opens it).

The notes are the reports' (knownote.show.report_export), so a spoken line's citation reads and
links like a report sentence's. Document text (titles, quotes, lines that quote a source) is
escaped for Markdown.
"""

from __future__ import annotations

from knownote.answer.audio_overview import FORMAT_NAMES, AudioLine, AudioOverview
from knownote.answer.ranges import SpanLinks
from knownote.index.language import language_name
from knownote.show.excerpt import escape_markdown
from knownote.show.report_export import markdown_piece, notes_markdown, pieces

LEANS_ON = (
    "Each mark names the range of a source a line was written from (character offsets in the "
    "source's extracted text), quoted below: what the line leans on, not proof of it."
)
QUOTES = "A read-aloud brief: each line after a source's title is a quote of it, not a summary."


def stamp(seconds: float | None) -> str:
    """'01:23', or '1:02:09' from an hour on; '--:--' for a line not yet spoken."""
    if seconds is None:
        return "--:--"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def speaker_name(line: AudioLine) -> str:
    return f"Host {line.speaker + 1}"


def summary(overview: AudioOverview) -> str:
    """'Deep Dive in English: 12 lines, 2 written lines dropped (…); written by M; 04:10 long'."""
    name = FORMAT_NAMES.get(overview.format, overview.format)
    out = f"{name} in {language_name(overview.language)}: {_count(len(overview.lines), 'line')}"
    if overview.dropped:
        out += (
            f", {_count(overview.dropped, 'written line')} dropped (no passage cited, or no "
            "close match)"
        )
    if overview.model:
        out += f"; written by {overview.model}"
    if overview.seconds:
        out += f"; {stamp(overview.seconds)} long"
    if overview.made_at is not None:
        out += f"; made {overview.made_at:%Y-%m-%d %H:%M}"
    return out + "."


def transcript_markdown(overview: AudioOverview, link: SpanLinks | None = None) -> str:
    """The transcript as Markdown: a heading, what the marks mean, each line as
    '**[01:23] Host 1:** text[^2]', then each citation's footnote (given `link`, with the app's
    address that opens its range)."""
    out = [f"# {escape_markdown(overview.title)}", "", f"*{escape_markdown(summary(overview))}*"]
    if overview.focus:
        out += ["", f"*Focus: {escape_markdown(overview.focus)}*"]
    if overview.format == "read-aloud":
        out += ["", f"*{escape_markdown(QUOTES)}*"]
    if overview.cites:
        out += ["", f"*{escape_markdown(LEANS_ON)}*"]
    known = {c.n for c in overview.cites}
    for line in overview.lines:
        text = "".join(
            f"[^{p}]" if isinstance(p, int) else markdown_piece(p) for p in pieces(line, known)
        ).strip()
        out += ["", f"**\\[{stamp(line.start_s)}\\] {speaker_name(line)}:** {text}"]
    if overview.cites:
        out += ["", "## Citations"]
    out += notes_markdown(overview.cites, link)
    return "\n".join(out) + "\n"
