"""A report written out as Markdown, Word or PDF, every `[n]` mark a note that names its range.

Each note gives the source's title, its page or time, the character range (of the support span
when there is one), the text of that range (exactly `text[start:end]` of the source) and, given
`links`, the app's address that opens the range highlighted. A stale citation says so and links
nowhere; a sentence with no close match in what it cites is flagged where it stands.

Word: real footnotes. python-docx has no footnote API, so the footnotes part
(`word/footnotes.xml`, with the separator notes -1 and 0 that Word writes), its relationship,
the `footnotePr` of the settings and the footnote styles are added here; each note's link is a
hyperlink relationship of the footnotes part. PDF: PyMuPDF's Story lays out escaped HTML; marks
link to their endnotes, notes link to the app; CJK text falls back to the CJK font inside
PyMuPDF's wheel (Droid Sans Fallback), the same on every machine; fonts are subset.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from knownote.answer.audio_overview import AudioLine
from knownote.answer.cite import chars_label, page_label, time_label
from knownote.answer.ranges import SpanLinks
from knownote.answer.report import KIND_NAMES, QUOTED_KINDS, Report, ReportCite, ReportLine
from knownote.answer.support import NO_CLOSE_MATCH
from knownote.show.excerpt import escape_markdown

if TYPE_CHECKING:
    from docx.document import Document as WordDocument
    from docx.opc.part import XmlPart

STALE = "stale: the source changed or was removed since this report was made"
OPEN = "open in KnowNote"
NOTES_INTRO = (
    "Each note names the range of its source that a mark points at (character offsets in the "
    "source's extracted text) and quotes it. A mark says what a sentence was written from, "
    "not that the source proves it."
)
_MARK = re.compile(r"\[(\d+)\]")
# Characters XML 1.0 cannot hold (controls, lone surrogates, U+FFFE/FFFF): one U+FFFD each, so a
# quote keeps its length and its offsets.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NSDECLS = f'xmlns:w="{W_NS}" xmlns:r="{R_NS}"'


# ---- what every format says ------------------------------------------------------------------


def shown_range(cite: ReportCite) -> tuple[int, int, str]:
    """(start, end, quote) a note shows: the support span when there is one inside the passage,
    else the whole passage; the quote is always the source's text at that range."""
    if cite.span is not None:
        start, end = cite.span
        if cite.start <= start <= end <= cite.end:
            return start, end, cite.quote[start - cite.start : end - cite.start]
    return cite.start, cite.end, cite.quote


def note_where(cite: ReportCite) -> str:
    """'Title, p. 4, chars 1,020–1,530', and the passage's range when the note shows a span."""
    start, end, _ = shown_range(cite)
    parts = [cite.title, page_label(cite.page, None), time_label(cite.seconds)]
    parts.append(chars_label(start, end))
    where = ", ".join(p for p in parts if p)
    if (start, end) != (cite.start, cite.end):
        where += f" (in the passage at {chars_label(cite.start, cite.end)})"
    return where


def note_link(cite: ReportCite, links: SpanLinks | None) -> str | None:
    """The address that opens the note's range; None without links or for a stale citation."""
    if links is None or cite.stale:
        return None
    start, end, _ = shown_range(cite)
    return links.link(cite.document_id, start, end)


def summary(report: Report) -> str:
    """'Briefing: 12 sentences written, 10 kept, 2 marked …; written by M, 2026-12-06 15:20.'"""
    name = KIND_NAMES.get(report.kind, report.kind)
    if report.kind in QUOTED_KINDS:
        counts = f"{report.kept} entries quoted from the sources"
    else:
        counts = (
            f"{report.written} sentences written, {report.kept} kept, {report.marked} marked as "
            "having no close match in what they cite"
        )
    out = f"{name}: {counts}"
    if report.model:
        out += f"; written by {report.model}"
    if report.made_at is not None:
        out += f"; made {report.made_at:%Y-%m-%d %H:%M}"
    return out + "."


def pieces(line: ReportLine | AudioLine, known: set[int]) -> Iterator[str | int]:
    """The line's text as strings and mark numbers (a `[n]` the line cites and `known` holds);
    any other bracketed number is text, as a quoted source may hold one."""
    at = 0
    for match in _MARK.finditer(line.text):
        n = int(match.group(1))
        if n not in line.cites or n not in known:
            continue
        if match.start() > at:
            yield line.text[at : match.start()]
        yield n
        at = match.end()
    if at < len(line.text):
        yield line.text[at:]


def lead(line: ReportLine) -> str:
    """What stands before a timeline entry or a glossary term: '2021-03-03 — label: ', 'term: '."""
    head = " — ".join(x for x in (line.date, line.label) if x)
    return f"{head}: " if head else ""


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


# ---- Markdown --------------------------------------------------------------------------------


def continued(element: str, body: str) -> str:
    """An HTML element ('<p>…</p>') with `body` added at its end, after a space."""
    at = element.rindex("</")
    return f"{element[:at]} {body}{element[at:]}"


def report_markdown(report: Report, links: SpanLinks | None = None) -> str:
    """The report as Markdown: its lines with `[^n]` footnotes, each footnote with the source's
    title, page or time, character range, the quoted text and (given `links`) the app's link."""
    out = [f"# {escape_markdown(report.title)}", "", f"*{escape_markdown(summary(report))}*"]
    if report.instructions:
        out += ["", f"*Instructions: {escape_markdown(report.instructions)}*"]
    known = {c.n for c in report.cites}
    previous = ""
    for line in report.lines:
        text = _markdown_line(line, known)
        if line.continues and previous:
            out[-1] += f" {text}"
            continue
        block = {"heading": "## ", "item": "- ", "quote": "> "}.get(line.style, "") + text
        if not (line.style == previous == "item"):  # a list's items stand one under the other
            out.append("")
        out.append(block)
        previous = line.style
    if report.cites:
        out += ["", "## Notes", "", escape_markdown(NOTES_INTRO)]
    out += notes_markdown(report.cites, links)
    return "\n".join(out) + "\n"


def notes_markdown(cites: Iterable[ReportCite], links: SpanLinks | None) -> list[str]:
    """The Markdown lines of each citation's footnote: where its range is, the link that opens
    it, and the quoted text."""
    out = []
    for cite in sorted(cites, key=lambda c: c.n):
        _, _, quote = shown_range(cite)
        head = escape_markdown(note_where(cite))
        if cite.stale:
            head += f" ({STALE})"
        link = note_link(cite, links)
        if link:
            head += f" [{OPEN}](<{link}>)"
        out += ["", f"[^{cite.n}]: {head}", ""]
        lines = [x for x in quote.splitlines() if x.strip()] or [""]
        out.append("\n".join(f"    > {escape_markdown(x)}".rstrip() for x in lines))
    return out


def _markdown_line(line: ReportLine, known: set[int]) -> str:
    text = "".join(
        f"[^{p}]" if isinstance(p, int) else markdown_piece(p) for p in pieces(line, known)
    ).strip()
    head = lead(line)
    if head:
        text = f"**{escape_markdown(head.rstrip())}** {text}"
    if line.unsupported:
        text += f" *({NO_CLOSE_MATCH})*"
    return text


def markdown_piece(text: str) -> str:
    """Text between marks, escaped, keeping a space at either end (escape_markdown trims it)."""
    before = " " if text[:1].isspace() else ""
    after = " " if text[-1:].isspace() else ""
    return f"{before}{escape_markdown(text)}{after}"


# ---- Word ------------------------------------------------------------------------------------

_FOOTNOTES = f"""<w:footnotes {_NSDECLS}>
<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240"
 w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0"
 w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>
</w:footnotes>"""

# Word's own definitions of the styles its footnotes and links use (absent from python-docx's
# default template).
_STYLES = {
    "FootnoteText": f"""<w:style {_NSDECLS} w:type="paragraph" w:styleId="FootnoteText">
<w:name w:val="footnote text"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="99"/>
<w:unhideWhenUsed/><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>
<w:rPr><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>""",
    "FootnoteReference": f"""<w:style {_NSDECLS} w:type="character" w:styleId="FootnoteReference">
<w:name w:val="footnote reference"/><w:basedOn w:val="DefaultParagraphFont"/>
<w:uiPriority w:val="99"/><w:unhideWhenUsed/><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>
</w:style>""",
    "Hyperlink": f"""<w:style {_NSDECLS} w:type="character" w:styleId="Hyperlink">
<w:name w:val="Hyperlink"/><w:basedOn w:val="DefaultParagraphFont"/><w:uiPriority w:val="99"/>
<w:unhideWhenUsed/><w:rPr><w:color w:val="0563C1" w:themeColor="hyperlink"/>
<w:u w:val="single"/></w:rPr></w:style>""",
}
# What may follow `w:footnotePr` in `w:settings` (ECMA-376 CT_Settings, in order).
_AFTER_FOOTNOTE_PR = (
    "endnotePr", "compat", "docVars", "rsids", "m:mathPr", "attachedSchema", "themeFontLang",
    "clrSchemeMapping", "doNotIncludeSubdocsInStats", "doNotAutoCompressPictures", "forceUpgrade",
    "captions", "readModeInkLockDown", "smartTagType", "sl:schemaLibrary", "shapeDefaults",
    "doNotEmbedSmartTags", "decimalSymbol", "listSeparator",
)  # fmt: skip
_WORD_STYLES = {"heading": None, "paragraph": None, "item": "List Bullet", "quote": "Quote"}


def report_docx(report: Report, path: str | Path, links: SpanLinks | None = None) -> None:
    """Write the report as a Word file at `path`: headings as heading styles, items as list
    paragraphs, each mark a real footnote with the source's title, page or time, character
    range, the quoted text and (given `links`) a hyperlink that opens the range."""
    from docx import Document
    from docx.shared import Pt

    document = Document()
    document.core_properties.title = xml_text(report.title)
    document.core_properties.subject = KIND_NAMES.get(report.kind, report.kind)
    document.add_heading(xml_text(report.title), 0)
    meta = document.add_paragraph()
    meta.add_run(xml_text(summary(report))).italic = True
    if report.instructions:
        document.add_paragraph().add_run(
            xml_text(f"Instructions: {report.instructions}")
        ).italic = True
    footnotes: XmlPart | None = None  # made at the first mark
    known = {c.n for c in report.cites}
    next_id = 1
    paragraph = None
    for line in report.lines:
        if line.continues and paragraph is not None:
            paragraph.add_run(" ")
        elif line.style == "heading":
            paragraph = document.add_heading("", 1)
        else:
            paragraph = document.add_paragraph(style=_WORD_STYLES.get(line.style))
        head = lead(line)
        if head:
            paragraph.add_run(xml_text(head)).bold = True
        for piece in pieces(line, known):
            if isinstance(piece, str):
                paragraph.add_run(xml_text(piece))
                continue
            if footnotes is None:
                footnotes = _footnotes_part(document)
            _add_footnote(footnotes, next_id, report.cite(piece), links)
            paragraph._p.append(_footnote_reference(next_id))
            next_id += 1
        if line.unsupported:
            paragraph.add_run(f" ({NO_CLOSE_MATCH})").italic = True
    if report.cites:
        intro = document.add_paragraph()
        intro.add_run(NOTES_INTRO).font.size = Pt(9)
    document.save(str(path))


def _footnotes_part(document: WordDocument) -> XmlPart:
    """Add `word/footnotes.xml` with its separators, its relationship, the settings' footnotePr
    and the footnote styles; the part."""
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import XmlPart
    from docx.oxml import parse_xml

    part = XmlPart(
        PackURI("/word/footnotes.xml"),
        CT.WML_FOOTNOTES,
        parse_xml(_FOOTNOTES),
        document.part.package,
    )
    document.part.relate_to(part, RT.FOOTNOTES)

    settings = document.settings.element
    if settings.find(f"{{{W_NS}}}footnotePr") is None:
        separators = '<w:footnote w:id="-1"/><w:footnote w:id="0"/>'
        pr = parse_xml(f"<w:footnotePr {_NSDECLS}>{separators}</w:footnotePr>")
        after = {_clark(name) for name in _AFTER_FOOTNOTE_PR}
        follower = next((child for child in settings if child.tag in after), None)
        if follower is None:
            settings.append(pr)
        else:
            follower.addprevious(pr)

    styles = document.styles.element
    have = {s.get(f"{{{W_NS}}}styleId") for s in styles.iterfind(f"{{{W_NS}}}style")}
    for style_id, xml in _STYLES.items():
        if style_id not in have:
            styles.append(parse_xml(xml))
    return part


def _clark(name: str) -> str:
    prefix, _, local = name.rpartition(":")
    space = {
        "": W_NS,
        "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
        "sl": "http://schemas.openxmlformats.org/schemaLibrary/2006/main",
    }[prefix]
    return f"{{{space}}}{local}"


def _footnote_reference(footnote_id: int):
    from docx.oxml import parse_xml

    return parse_xml(
        f'<w:r {_NSDECLS}><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr>'
        f'<w:footnoteReference w:id="{footnote_id}"/></w:r>'
    )


def _add_footnote(
    part: XmlPart, footnote_id: int, cite: ReportCite, links: SpanLinks | None
) -> None:
    """One footnote: its mark, where the range is (and a link to it), then the quote."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement, parse_xml

    _, _, quote = shown_range(cite)
    note = parse_xml(
        f'<w:footnote {_NSDECLS} w:id="{footnote_id}">'
        '<w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr>'
        '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r></w:p>'
        '<w:p><w:pPr><w:pStyle w:val="FootnoteText"/><w:ind w:left="284"/></w:pPr></w:p>'
        "</w:footnote>"
    )
    where, said = note.findall(f"{{{W_NS}}}p")
    head = f" [{cite.n}] {note_where(cite)}" + (f" ({STALE})" if cite.stale else "")
    where.append(_run(head))
    link = note_link(cite, links)
    if link:
        where.append(_run(" "))
        hyperlink = OxmlElement("w:hyperlink")
        hyperlink.set(f"{{{R_NS}}}id", part.relate_to(link, RT.HYPERLINK, is_external=True))
        hyperlink.set(f"{{{W_NS}}}history", "1")
        hyperlink.append(_run(OPEN, style="Hyperlink"))
        where.append(hyperlink)
    said.append(_run(quote))
    part.element.append(note)


def _run(text: str, style: str | None = None):
    """A `w:r` holding `text`, its tabs and line breaks as Word's own elements."""
    from docx.oxml import OxmlElement

    run = OxmlElement("w:r")
    run.text = xml_text(text)  # python-docx's CT_R: w:t, w:tab and w:br, spaces preserved
    if style:
        run.style = style
    return run


# ---- PDF -------------------------------------------------------------------------------------

_CSS = """
body{font-family:sans-serif;font-size:10.5pt;line-height:1.4;color:#1f2330}
h1{font-size:18pt;margin:0 0 6pt 0}
h2{font-size:13pt;margin:12pt 0 4pt 0}
p{margin:0 0 6pt 0}
ul{margin:0 0 6pt 0}
li{margin:0 0 3pt 0}
blockquote{margin:0 0 6pt 18pt;color:#333;font-style:italic}
a{color:#1d4ed8;text-decoration:none}
.meta{font-size:9pt;color:#555}
.flag{font-style:italic;color:#9a3412}
.stale{color:#9a3412}
.note{font-size:9pt;margin:0 0 2pt 0}
.quote{font-size:9pt;margin:0 0 7pt 14pt;color:#333}
"""
_LIGATURE = re.compile("f(?=[fil])")
_PAGE = (595, 842)  # A4, in points
_MARGIN = 56


def report_html(report: Report, links: SpanLinks | None = None) -> str:
    """The report as the HTML the PDF is laid out from: every piece of text escaped, each mark
    a link to its note (`#note-n`), each note a link to its range in the app."""
    e = _html_text
    out = [f"<h1>{e(report.title)}</h1>", f'<p class="meta">{e(summary(report))}</p>']
    if report.instructions:
        out.append(f'<p class="meta">Instructions: {e(report.instructions)}</p>')
    known = {c.n for c in report.cites}
    items: list[str] = []
    for line in report.lines:
        body = "".join(
            f'<a href="#note-{p}">[{p}]</a>' if isinstance(p, int) else e(p)
            for p in pieces(line, known)
        )
        head = lead(line)
        if head:
            body = f"<b>{e(head)}</b>{body}"
        if line.unsupported:
            body += f' <span class="flag">({e(NO_CLOSE_MATCH)})</span>'
        if line.continues and (items or len(out) > 1):
            if items:
                items[-1] = continued(items[-1], body)
            else:
                out[-1] = continued(out[-1], body)
            continue
        if line.style == "item":
            items.append(f"<li>{body}</li>")
            continue
        if items:
            out.append(f"<ul>{''.join(items)}</ul>")
            items = []
        tag = {"heading": "h2", "quote": "blockquote"}.get(line.style, "p")
        out.append(f"<{tag}>{body}</{tag}>")
    if items:
        out.append(f"<ul>{''.join(items)}</ul>")
    if report.cites:
        out += ["<h2>Notes</h2>", f'<p class="meta">{e(NOTES_INTRO)}</p>']
    for cite in sorted(report.cites, key=lambda c: c.n):
        _, _, quote = shown_range(cite)
        head = f"[{cite.n}] {e(note_where(cite))}"
        if cite.stale:
            head += f' <span class="stale">({e(STALE)})</span>'
        link = note_link(cite, links)
        if link:
            head += f' <a href="{html.escape(link)}">{e(OPEN)}</a>'
        out.append(f'<p class="note" id="note-{cite.n}">{head}</p>')
        out.append(f'<p class="quote">{e(quote)}</p>')
    return "\n".join(out)


def _merge_links(page) -> None:
    """One link annotation per link and line: Story writes one per word (and a zero-width one
    where a link starts a line)."""
    import pymupdf

    groups: dict[tuple[str, float, float], list[dict]] = {}
    for link in page.get_links():
        if link["kind"] == pymupdf.LINK_URI:
            key = (link["uri"], round(link["from"].y0, 1), round(link["from"].y1, 1))
            groups.setdefault(key, []).append(link)
        elif link["from"].is_empty:
            page.delete_link(link)
    for (uri, _, _), parts in groups.items():
        whole = [p["from"] for p in parts if not p["from"].is_empty]
        if len(parts) == 1 and whole:
            continue
        for part in parts:
            page.delete_link(part)
        if whole:
            rect = whole[0]
            for r in whole[1:]:
                rect = rect | r
            page.insert_link({"kind": pymupdf.LINK_URI, "from": rect, "uri": uri})


_CMAP_BLOCK = re.compile(rb"(\d+) (beginbfrange|beginbfchar)\s(.*?)(endbfrange|endbfchar)", re.S)
_HEX = re.compile(rb"<([0-9a-fA-F]*)>")


def _fix_to_unicode(document) -> None:
    """Write each font's characters beyond the BMP as UTF-16 in its ToUnicode map, as the PDF
    standard asks. MuPDF writes them as bare code points (`<1f39c>`), which readers reject
    ('odd-length string'): a fallback font (symbols, math, emoji) brings a map full of them."""
    seen: set[int] = set()
    for page in document:
        for font in page.get_fonts():
            kind, xref = document.xref_get_key(font[0], "ToUnicode")
            if kind != "xref":
                continue
            xref = int(xref.split()[0])
            if xref in seen:
                continue
            seen.add(xref)
            fixed = _utf16_cmap(document.xref_stream(xref))
            if fixed is not None:
                document.update_stream(xref, fixed)


def _utf16_cmap(cmap: bytes) -> bytes | None:
    """The CMap with bare code points as UTF-16BE entries; None when it has none."""
    extra: list[tuple[int, int]] = []

    def block(match: re.Match[bytes]) -> bytes:
        kind, keep = match.group(2), []
        for line in match.group(3).splitlines():
            codes = _HEX.findall(line)
            if kind == b"beginbfrange" and len(codes) == 3 and len(codes[2]) % 4:
                low, high, first = (int(x, 16) for x in codes)
                extra.extend((code, first + code - low) for code in range(low, high + 1))
            elif kind == b"beginbfchar" and len(codes) == 2 and len(codes[1]) % 4:
                extra.append((int(codes[0], 16), int(codes[1], 16)))
            elif line.strip():
                keep.append(line)
        if not keep:
            return b""
        return b"%d %s\n%s\n%s" % (len(keep), kind, b"\n".join(keep), match.group(4))

    body = _CMAP_BLOCK.sub(block, cmap)
    if not extra:
        return None
    chars = [
        b"<%04x> <%s>" % (code, chr(point).encode("utf-16-be").hex().encode())
        for code, point in extra
        if point <= 0x10FFFF
    ]
    blocks = b"".join(
        b"%d beginbfchar\n%s\nendbfchar\n"
        % (len(chars[i : i + 100]), b"\n".join(chars[i : i + 100]))
        for i in range(0, len(chars), 100)
    )
    head, end, tail = body.rpartition(b"endcmap")
    return head + blocks + end + tail


def _html_text(text: str) -> str:
    """Text escaped for HTML, an empty span after each f that a ligature would join to the next
    letter: PyMuPDF shapes fi, fl, ff as one glyph whose text reads back as 'ﬁ', not 'fi'."""
    return _LIGATURE.sub("f<span></span>", html.escape(text))


def report_pdf(report: Report, path: str | Path, links: SpanLinks | None = None) -> None:
    """Write the report as a PDF at `path` (A4): the same notes as endnotes, marks linked to
    them and notes to their ranges (real link annotations), the title in the metadata."""
    import pymupdf

    page = pymupdf.Rect(0, 0, *_PAGE)
    frame = pymupdf.Rect(_MARGIN, _MARGIN, page.width - _MARGIN, page.height - _MARGIN)
    # A control character is no text to show; U+FFFD would be drawn by a fallback font whose
    # glyph reads back as another letter.
    story = pymupdf.Story(_NOT_XML.sub(" ", report_html(report, links)), user_css=_CSS)
    document = story.write_with_links(lambda n, filled: (page, frame, None))
    try:
        for number, sheet in enumerate(document, start=1):
            _merge_links(sheet)
            sheet.insert_text(
                (page.width / 2 - 12, page.height - _MARGIN / 2),
                f"{number} / {document.page_count}",
                fontsize=8,
                color=(0.4, 0.4, 0.4),
            )
        document.set_metadata(
            {
                "title": report.title,
                "subject": KIND_NAMES.get(report.kind, report.kind),
                "creator": "KnowNote",
                "producer": f"PyMuPDF {pymupdf.VersionBind}",
            }
        )
        document.subset_fonts()
        _fix_to_unicode(document)
        document.save(str(path), garbage=3, deflate=True)
    finally:
        document.close()
