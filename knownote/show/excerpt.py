"""A citation as HTML: a header, and the extracted text around the passage with it highlighted.

Pure functions, no Streamlit. Every piece of document text, title and file name goes through
`html.escape` here, so the app may hand these strings to `st.html` as they are. Exactly
`text[start:end]` sits inside the `<mark>`; only the context around it is trimmed.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from knownote.answer.cite import Support, chars_label, page_label, time_label
from knownote.answer.support import NO_CLOSE_MATCH, NO_CLOSE_MATCH_ANY, SUGGESTED
from knownote.read.sections import section_label

CONTEXT = 300  # characters of context shown on each side of a passage
SNAP = 40  # how far the context may shrink to avoid cutting a word in half
ELLIPSIS = "…"
STALE = "stale: the document changed"

# [3], [1, 2], [1,2,5]: numbers in square brackets, as the answer models write them.
_CITATION = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")

OCR_TITLE = "Read by OCR from a page image: check the quote against the page."

STYLE = """<style>
.kn-card{border:1px solid rgba(49,51,63,.14);border-radius:.5rem;padding:.6rem .8rem;
  margin:0 0 .7rem 0;background:rgba(250,250,252,.9);scroll-margin-top:4rem}
.kn-card:target{border-color:#c9a227;box-shadow:0 0 0 2px rgba(201,162,39,.25)}
.kn-head{font-size:.8rem;font-weight:600;color:rgba(49,51,63,.8);margin-bottom:.35rem;
  overflow-wrap:anywhere}
.kn-origin{font-size:.75rem;color:rgba(49,51,63,.6);margin:-.2rem 0 .35rem 0;
  overflow-wrap:anywhere}
.kn-excerpt{font-size:.85rem;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere;
  color:rgba(49,51,63,.75);max-height:16rem;overflow-y:auto}
.kn-excerpt.kn-reflow{white-space:normal}
.kn-excerpt .kn-wrap{display:none}
.kn-excerpt mark{background:#fdeaa7;color:#1f2330;padding:0 .1rem;border-radius:.15rem}
.kn-excerpt mark mark.kn-span{background:#f5b93d;padding:0;font-weight:500;scroll-margin-top:5rem}
.kn-excerpt mark mark.kn-span:target{outline:2px solid #b45309}
.kn-answer .kn-weak{font-size:.8em;color:rgba(49,51,63,.6);font-style:italic;margin-left:.3em}
.kn-answer a.kn-suggest{font-size:.8em;color:#1d4ed8;text-decoration:none;margin-left:.3em}
.kn-stale{font-size:.8rem;color:#9a3412;margin-bottom:.3rem}
.kn-ocr{font-size:.65rem;font-weight:700;letter-spacing:.04em;border:1px solid #9a3412;
  color:#9a3412;border-radius:.25rem;padding:0 .25rem;margin-left:.4rem;vertical-align:1px}
.kn-answer p{margin:0 0 .6rem 0;line-height:1.55}
.kn-quote{margin:.3rem 0 .5rem 0;padding:.2rem .8rem;border-left:3px solid #e3c766;
  font-size:.9rem;line-height:1.5;color:#1f2330}
.kn-quote .kn-where{font-size:.75rem;color:rgba(49,51,63,.7);white-space:nowrap}
.kn-answer a.kn-cite{text-decoration:none;font-weight:600;font-size:.85em;color:#1d4ed8}
.kn-answer a.kn-cite:hover{text-decoration:underline}
[data-testid="stCaptionContainer"]{opacity:1;color:rgba(49,51,63,.75)}
</style>"""


@dataclass(frozen=True)
class Excerpt:
    """The passage `text[start:end]` and the context shown around it."""

    before: str
    passage: str
    after: str
    cut_before: bool
    cut_after: bool


def excerpt(text: str, start: int, end: int, context: int = CONTEXT) -> Excerpt:
    """The passage with up to `context` characters each side, not cutting words where avoidable."""
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"range [{start}, {end}) is outside a text of {len(text)} characters")
    lo = max(0, start - context)
    hi = min(len(text), end + context)
    if lo > 0:
        head = text[lo : min(lo + SNAP, start)]
        space = next((i for i, ch in enumerate(head) if ch.isspace()), None)
        if space is not None:
            lo += space + 1
    if hi < len(text):
        tail = text[max(hi - SNAP, end) : hi]
        space = next((i for i in range(len(tail) - 1, -1, -1) if tail[i].isspace()), None)
        if space is not None:
            hi = max(hi - SNAP, end) + space
    return Excerpt(
        before=text[lo:start].lstrip(),
        passage=text[start:end],
        after=text[end:hi].rstrip(),
        cut_before=lo > 0,
        cut_after=hi < len(text),
    )


def citation_header(
    n: int,
    title: str,
    page_start: int | None,
    page_end: int | None,
    start: int,
    end: int,
    section: str = "",
    seconds: tuple[float, float] | None = None,
) -> str:
    """Plain text such as '[2] paper.pdf · §3.2 Training · p. 14 · chars 8,120–8,247', or for a
    recording '[1] lecture.mp3 · 12:04–12:37 · chars ...' (not escaped); without the number when
    `n` is 0 (a range opened from a link)."""
    parts = [
        f"[{n}] {title}" if n else title,
        section_label(section),
        page_label(page_start, page_end),
        time_label(seconds),
        chars_label(start, end),
    ]
    return " · ".join(part for part in parts if part)


def excerpt_html(
    text: str,
    start: int,
    end: int,
    context: int = CONTEXT,
    spans: Sequence[tuple[int, int, str]] = (),
    reflow: bool = False,
) -> str:
    """The escaped excerpt with exactly `text[start:end]` in a `<mark>`, and each support span
    (start, end, anchor id) inside it in a stronger `<mark class="kn-span">`.

    `reflow` (text of PDF pages, whose every line ends in a newline): lines that were only
    wrapped flow together and a word hyphenated across lines shows whole, while the lines that
    end a paragraph, a heading or a list item still break. Display only: every character stays
    in the page (a wrap's newline is hidden, never removed), so the marks hold exactly the text.
    """
    part = excerpt(text, start, end, context)
    lo, hi = start - len(part.before), end + len(part.after)
    breaks = line_breaks(text, lo, hi) if reflow else None

    def shown(a: int, b: int) -> str:
        return _shown(text, a, b, breaks)

    return (
        f'<div class="kn-excerpt{" kn-reflow" if reflow else ""}" tabindex="0">'
        + (ELLIPSIS if part.cut_before else "")
        + shown(lo, start)
        + "<mark>"
        + _with_spans(start, end, spans, shown)
        + "</mark>"
        + shown(end, hi)
        + (ELLIPSIS if part.cut_after else "")
        + "</div>"
    )


def line_breaks(text: str, lo: int, hi: int) -> frozenset[int]:
    """The offsets of the newlines in `text[lo:hi]` that end a paragraph, a heading or a list
    line, told from the wraps of a full column line by the length of the line they end."""
    first = text.rfind("\n", 0, lo) + 1
    last = text.find("\n", hi)
    lines = text[first : len(text) if last < 0 else last].split("\n")
    lengths = sorted(len(line.strip()) for line in lines if line.strip())
    if not lengths:
        return frozenset()
    full = lengths[len(lengths) * 3 // 4]  # a full line of the column: the upper quartile
    breaks = set()
    at = first
    for line, following in itertools.pairwise(lines):
        at += len(line)
        if len(line.strip()) < 0.7 * full or not following.strip() or not line.strip():
            breaks.add(at)
        at += 1
    return frozenset(breaks)


def _shown(text: str, a: int, b: int, breaks: frozenset[int] | None) -> str:
    if breaks is None:
        return html.escape(text[a:b])
    out = []
    at = a
    for i in (i for i in range(a, b) if text[i] == "\n"):
        out.append(html.escape(text[at:i]))
        if i in breaks:
            out.append("\n<br>")
        elif i > 0 and text[i - 1] == "-":
            out.append('<span class="kn-wrap">\n</span>')
        else:
            out.append("\n")
        at = i + 1
    out.append(html.escape(text[at:b]))
    return "".join(out)


def _with_spans(
    start: int, end: int, spans: Sequence[tuple[int, int, str]], shown: Callable[[int, int], str]
) -> str:
    out = []
    at = start
    for a, b, anchor in sorted(spans):
        if not at <= a < b <= end:  # overlapping or outside the passage: never drawn wrongly
            continue
        out.append(shown(at, a))
        out.append(
            f'<mark class="kn-span" id="{html.escape(anchor)}" data-start="{int(a)}" '
            f'data-end="{int(b)}">{shown(a, b)}</mark>'
        )
        at = b
    out.append(shown(at, end))
    return "".join(out)


def anchor_id(message_id: int, n: int) -> str:
    return f"cite-{int(message_id)}-{int(n)}"


def span_anchors(message_id: int, supports: Iterable[Support]) -> dict[tuple[int, int, int], str]:
    """(n, start, end) of each support span -> the anchor of the span drawn for it in card n.

    Overlapping spans of one card are drawn as one (their union), which all of them link to.
    Weak supports are not drawn: nothing in their passages came close.
    """
    by_card: dict[int, list[tuple[int, int]]] = {}
    for s in supports:
        if not s.stale and not s.weak:
            by_card.setdefault(s.n, []).append((s.start, s.end))
    anchors = {}
    for n, spans in by_card.items():
        for a, b in _merged(spans):
            for x, y in spans:
                if a <= x and y <= b:
                    anchors[(n, x, y)] = f"span-{int(message_id)}-{int(n)}-{a}-{b}"
    return anchors


def card_spans(anchors: dict[tuple[int, int, int], str], n: int) -> list[tuple[int, int, str]]:
    """The (start, end, anchor) to draw strongly in card `n`."""
    drawn = {}
    for (m, _, _), anchor in anchors.items():
        if m == n:
            a, b = (int(x) for x in anchor.rsplit("-", 2)[1:])
            drawn[anchor] = (a, b, anchor)
    return sorted(drawn.values())


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def is_stale(document_text: str | None, start: int, end: int, passage_text: str) -> bool:
    """True when the document is gone or its text at [start, end) is no longer the passage."""
    return document_text is None or document_text[start:end] != passage_text


def card_html(
    *,
    message_id: int,
    n: int,
    title: str,
    document_id: int,
    start: int,
    end: int,
    page_start: int | None,
    page_end: int | None,
    passage_text: str,
    document_text: str | None,
    stale: bool = False,
    context: int = CONTEXT,
    spans: Sequence[tuple[int, int, str]] = (),
    ocr: bool = False,
    reflow: bool = False,
    section: str = "",
    seconds: tuple[float, float] | None = None,
    origin: str = "",
) -> str:
    """One citation card: anchor, header and highlighted excerpt (or a stale notice).

    `document_text` is the document's current extracted text, or None when it was deleted.
    The passage is highlighted only when that text still holds `passage_text` at [start, end).
    `ocr` marks a passage whose text was read by OCR from a page image; `seconds` is when a
    recording's passage was said, `origin` where and when a web page was fetched.
    """
    header = citation_header(n, title, page_start, page_end, start, end, section, seconds)
    stale = stale or document_text is None or is_stale(document_text, start, end, passage_text)
    attrs = (
        f'class="kn-card" id="{anchor_id(message_id, n)}" data-n="{int(n)}" '
        f'data-document="{int(document_id)}" data-start="{int(start)}" data-end="{int(end)}"'
    )
    if stale or document_text is None:
        body = (
            f'<div class="kn-stale">{html.escape(STALE)}</div>'
            f'<div class="kn-excerpt" tabindex="0">{html.escape(passage_text)}</div>'
        )
    else:
        body = excerpt_html(document_text, start, end, context, spans, reflow)
    label = f'<span class="kn-ocr" title="{html.escape(OCR_TITLE)}">OCR</span>' if ocr else ""
    fetched = f'<div class="kn-origin">{html.escape(origin)}</div>' if origin else ""
    return (
        f'<div {attrs}><div class="kn-head">{html.escape(header)}{label}</div>{fetched}{body}</div>'
    )


def answer_html(
    text: str,
    message_id: int | None,
    numbers: Iterable[int] = (),
    supports: Sequence[Support] = (),
) -> str:
    """The answer, escaped, in paragraphs, with each [n] for a known n linked to its card.

    With `supports`, a sentence's mark of the passage it leans on links to the support span
    (its text in the tooltip), a weak sentence gets a quiet "no close match" note, and a
    sentence without marks gets a link to the span suggested for it.
    """
    known = set(numbers)
    anchors = span_anchors(message_id or 0, supports) if message_id is not None else {}

    def linker(support: Support | None) -> Callable[[re.Match[str]], str]:
        def link(match: re.Match[str]) -> str:
            parts = []
            for part in match.group(1).split(","):
                n = int(part)
                if message_id is None or n not in known:
                    parts.append(str(n))
                elif support is not None and n == support.n and not support.weak:
                    anchor = anchors[(n, support.start, support.end)]
                    parts.append(
                        f'<a class="kn-cite" href="#{anchor}" title="{_leans_on(support)}">{n}</a>'
                    )
                else:
                    parts.append(f'<a class="kn-cite" href="#{anchor_id(message_id, n)}">{n}</a>')
            return "[" + ", ".join(parts) + "]"

        return link

    pieces = []
    at = 0
    for s in sorted(supports, key=lambda s: s.sentence_start):
        if s.stale or s.sentence_start < at or not (s.weak or (s.n, s.start, s.end) in anchors):
            continue
        pieces.append(_CITATION.sub(linker(None), html.escape(text[at : s.sentence_start])))
        sentence = text[s.sentence_start : s.sentence_end]
        pieces.append(_CITATION.sub(linker(s), html.escape(sentence)) + _note(s, anchors))
        at = s.sentence_end
    pieces.append(_CITATION.sub(linker(None), html.escape(text[at:])))
    paragraphs = [p for p in re.split(r"\n\s*\n", "".join(pieces).strip()) if p.strip()]
    body = "".join("<p>" + p.strip().replace("\n", "<br>") + "</p>" for p in paragraphs)
    return f'<div class="kn-answer">{body}</div>'


def _leans_on(s: Support) -> str:
    return html.escape(f"Leans on “{s.display}” ({s.chars})", quote=True)


def _note(s: Support, anchors: dict[tuple[int, int, int], str]) -> str:
    """After a sentence: the quiet note for a weak support, or the suggestion for an unmarked
    sentence."""
    if s.weak:
        what = NO_CLOSE_MATCH_ANY if s.suggested else NO_CLOSE_MATCH
        return f' <span class="kn-weak" data-sentence="{int(s.sentence)}">{what}</span>'
    if s.suggested:
        anchor = anchors[(s.n, s.start, s.end)]
        return (
            f' <a class="kn-suggest" href="#{anchor}" title="{_leans_on(s)}">'
            f"{SUGGESTED} [{int(s.n)}]</a>"
        )
    return ""


def escape_markdown(text: str) -> str:
    """Text safe to pass to Streamlit markdown (labels, st.write): specials escaped, one line."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", " ".join(text.split()))


def text_with_page_markers(
    text: str, pages: Sequence[tuple[int, int, int]], whole: bool = True
) -> str:
    """The text with a marker line before each (number, start, end) page range.

    With `whole`, text before the first and after the last page is kept; without, only the
    given pages (and whatever separates them) are shown.
    """
    if not pages:
        return text
    parts = []
    covered = 0 if whole else pages[0][1]
    for number, start, end in pages:
        if start > covered:
            parts.append(text[covered:start])
        parts.append(f"\n── page {number} · {chars_label(start, end)} ──\n")
        parts.append(text[start:end])
        covered = max(covered, end)
    if whole and covered < len(text):
        parts.append(text[covered:])
    return "".join(parts).lstrip("\n")
