"""What each part of a PDF is (roles.py): rules over its text layer, and PyMuPDF's layout model.

Roles are ranges of the canonical text (`pdf_page_text` per page, joined as the pages): every
region found on a page is mapped to the text-layer lines `pdf_headings.page_lines` located in the
page's text, so the text and every offset stay as they are.

Two sources, measured against each other by benchmarks/roles.py:
- rules, on every page: running heads and feet (the same words at the top or bottom edge of
  several pages, digits aside), page numbers, a browser's address and time stamp, sideways
  margin notes ("arXiv:2004.04906v3"); tables from `table_rows` (the rows it joined); tables of
  contents (navigation); "Table 3:", "Figure 2.", "图 1" captions; footnotes (small type at the
  foot of a column, opened by a mark); a paper's front matter (its first page between the title
  and the abstract or first heading, and the lines there with e-mail addresses, "Preprint. Under
  review.", "Demo: https://…").
- PyMuPDF Layout (`page.get_layout()`; AGPL-3.0, as PyMuPDF is), on the pages where the rules
  are least sure: every page of a document of a few pages, else its first pages and a few of
  those with tables, two columns or pictures. It costs 0.2 s a page idle, 1-4 s on a loaded machine.

Chosen: the rules' roles, and the model's tables, captions, footnotes, formulas, lists, text in
pictures, and heads and feet at a page's edge; on a page the model read, a table of the rules'
stays only where the model sees one too. Headings are `pdf_headings`' (the model's titles and
section headers are only measured), reference entries `roles.reference_sections`'. Pages read by
OCR have no text layer to map: they get the rules that read text alone (their first and last
lines when repeated or a page number or stamp, tables of contents, captions), and the model's
roles from their page image with their OCR lines written in as an invisible layer
(knownote.read.scan_roles), within the same budget of pages. On 15 pages of the corpus's
born-digital PDFs read by OCR, the lines given the born-digital page's role: 0.916 by the rules
alone, 0.969 with the model (captions 21 of 21, footnotes 15 of 16, formulas 4 of 4; the model
took a fifth of the OCR's time or less; benchmarks/scan_roles.py).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise

import pymupdf

from knownote.read.canonical import clean_text
from knownote.read.extracted import OcrPage, Page
from knownote.read.pdf_headings import Line, PageLayer, page_layer
from knownote.read.roles import RoleRange, normalise, reference_sections
from knownote.read.scan_roles import layered_page, ocr_lines
from knownote.read.sections import Heading
from knownote.read.table_rows import Reordered

# "0": no layout model (rules alone); "all": the model on every page (for measuring)
MODEL_SWITCH = "KNOWNOTE_PDF_LAYOUT"
# A document this short has the model on every page of text. At most FIRST_PAGES + UNSURE_PAGES
# pages of any PDF are read by the model, so that it costs an import about a second and a half
# on an idle machine (benchmarks/roles.py --speed), whatever its length.
ALL_PAGES = 4
FIRST_PAGES = 2  # of a longer one, and at most UNSURE_PAGES of those the rules are least sure of
UNSURE_PAGES = 6
MODEL_PAGES = FIRST_PAGES + UNSURE_PAGES
MAX_MODEL_LINES = 1000  # a page of more lines (a big table of figures) is the rules' alone
EDGE = 0.18  # of the page's height: where running heads and feet are (its first or last two rows)
REPEATED = 3  # a line at the edge of this many pages is a running head or foot

MODEL_ROLES = {
    "title": "heading",
    "section-header": "heading",
    "list-item": "list",
    "table": "table",
    "caption": "caption",
    "footnote": "footnote",
    "formula": "formula",
    "picture": "figure",
    "page-header": "page_header",
    "page-footer": "page_footer",
}
# the model's roles kept: headings are pdf_headings' own
FROM_MODEL = frozenset(MODEL_ROLES.values()) - {"heading"}

_PAGE_NUMBER = re.compile(
    r"(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:/|of)\s*\d{1,4})?|[-–—]\s*\d{1,4}\s*[-–—]|"
    r"第\s*\d{1,4}\s*页|\d{1,4}\s*페이지",
    re.IGNORECASE,
)
# what a browser prints at a page's edge: the address, the date and time
_PRINT_STAMP = re.compile(
    r"(?:https?://|www\.)\S+|\d{1,2}/\d{1,2}/\d{2,4},?\s+\d{1,2}:\d{2}(?:\s*[AP]M)?", re.IGNORECASE
)
_CAPTION = re.compile(
    r"(?:(?:table|tab\.|figure|fig\.|algorithm|listing|chart|exhibit|plate)\s*"
    r"(?:\d+|[IVX]+)(?:\.\d+)?[a-z]?\s*[:.：|]|(?:图|表|圖|図|그림|표)\s*\d+(?:[.-]\d+)?)",
    re.IGNORECASE,
)
_ABSTRACT = re.compile(r"(?:abstract|summary|摘\s*要|要\s*旨|초\s*록)\b", re.IGNORECASE)
_FRONT_LINE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\}@|preprint|under review|^\s*(?:demo|code|project page|"
    r"homepage|website)\s*:|equal contribution|correspond(?:ing|ence)|work done|"
    r"^\s*(?:keywords|key words|index terms)\b",
    re.IGNORECASE,
)
_NOTE_MARK = re.compile(r"[\d*†‡§¶⁰¹²³⁴⁵⁶⁷⁸⁹∗]")
_CONTENTS_LINE = re.compile(r"\D(?:\s*(?:\.\s?){2,}|\s·|\s)\s*(\d{1,4})$")
MIN_CONTENTS = 5  # entries
MAX_FRONT_CHARS = 1500  # a paper's author block is shorter; past it the page is no paper's


@dataclass(frozen=True)
class Found:
    """A PDF's roles by source (unsettled ranges of the canonical text) and the pages the layout
    model read (0-based)."""

    rules: tuple[RoleRange, ...]
    model: tuple[RoleRange, ...]
    chosen: tuple[RoleRange, ...]
    model_pages: tuple[int, ...]


@dataclass(frozen=True)
class LayerRoles:
    """What the rules find in one page's text layer besides its lines: the rows `table_rows`
    joined, and lines set sideways in a margin. Found as the layer is read (`layer_roles`), they
    spare asking MuPDF for the page again (0.2 s of the six corpus papers' 1.2 s of reading)."""

    tables: tuple[RoleRange, ...]
    sideways: tuple[RoleRange, ...]


def layer_roles(
    page: pymupdf.Page, text: str, lines: Sequence[Line], layer: PageLayer | None = None
) -> LayerRoles:
    """The page's `LayerRoles` in `text`, its text layer's text, whose `lines` are located in it;
    `layer`: that text layer, read again when not given and needed."""
    wants_tables = " · " in text  # how the rows were joined
    wants_sideways = _uncovered(text, lines)
    if not (wants_tables or wants_sideways):
        return LayerRoles((), ())
    layer = layer or page_layer(page)
    return LayerRoles(
        tuple(_tables(layer.rows, text)) if wants_tables else (),
        tuple(_sideways(layer.blocks, page.rect.width, text)) if wants_sideways else (),
    )


def pdf_roles(
    doc: pymupdf.Document,
    pages: Sequence[Page],
    texts: Sequence[str],
    lines: Sequence[Sequence[Line]],
    ocr: set[int],
    headings: Sequence[Heading],
    text: str,
    *,
    ocr_pages: Sequence[OcrPage] = (),
    model: str | None = None,
    layers: Sequence[LayerRoles | None] = (),
) -> tuple[RoleRange, ...]:
    """The roles of a PDF, settled (`normalise`): its pages' (`find_roles`), its headings' and
    its reference sections'. `texts` are the pages' texts, joined as `pages` into `text`; `lines`
    their text-layer lines; `ocr` the 0-based pages read by OCR, `ocr_pages` their boxes; `model`
    and `layers` as `find_roles` takes them."""
    found = find_roles(doc, pages, texts, lines, ocr, model, ocr_pages=ocr_pages, layers=layers)
    return settle(found.chosen, headings, text)


def settle(
    chosen: Sequence[RoleRange], headings: Sequence[Heading], text: str
) -> tuple[RoleRange, ...]:
    """The chosen roles with the headings' and the reference sections', settled. A heading in a
    paper's front matter (an author's name in bold) is front matter."""
    front = [r for r in chosen if r.role == "front_matter"]
    heads = [RoleRange(h.start, h.end, "heading") for h in headings]
    ranges = [*chosen, *(h for h in heads if not _inside(h, front))]
    references = reference_sections(text, headings)
    # a reference list's entries are laid out as list items: they stay references
    ranges = [r for r in ranges if r.role != "list" or not _inside(r, references)]
    return normalise([*ranges, *references], len(text))


def find_roles(
    doc: pymupdf.Document,
    pages: Sequence[Page],
    texts: Sequence[str],
    lines: Sequence[Sequence[Line]],
    ocr: set[int],
    model: str | None = None,
    *,
    ocr_pages: Sequence[OcrPage] = (),
    layers: Sequence[LayerRoles | None] = (),
) -> Found:
    """Each source's roles, and the chosen ones (see the module's doc). `model` is "0", "all" or
    None (the pages chosen here); by default the environment's MODEL_SWITCH says. `ocr_pages`:
    the boxes of pages read by OCR, whose lines the model reads from the page image. `layers`:
    each page's `LayerRoles` when its text layer was read (found here when not given)."""
    model = model if model is not None else os.environ.get(MODEL_SWITCH)
    sizes = _body_size(lines)
    edges = _edge_lines(doc, texts, lines, ocr)
    repeated = _repeated(edges)
    rules: list[RoleRange] = []
    tables: set[int] = set()
    for index, (page, text) in enumerate(zip(pages, texts, strict=True)):
        if not text:
            continue
        page_rules = []
        if index in ocr or not lines[index]:
            page_rules += _furniture(edges[index], repeated, [])
            page_rules += _text_captions(text) + _contents(text)
        else:
            pdf_page = doc.load_page(index)
            known = layers[index] if index < len(layers) else None
            if known is None:
                known = layer_roles(pdf_page, text, lines[index])
            found_tables = list(known.tables)
            furniture = _furniture(edges[index], repeated, found_tables)
            page_rules += found_tables + furniture + list(known.sideways)
            contents = _contents(text)
            if contents:  # a table of contents read as a table is navigation
                c = contents[0]
                page_rules = [
                    r
                    for r in page_rules
                    if r.role != "table" or r.end <= c.start or c.end <= r.start
                ]
            if any(r.role == "table" for r in page_rules):
                tables.add(index)
            page_rules += _captions(text, lines[index]) + contents
            held = {f.start for f in furniture}
            rest = [ln for ln in lines[index] if ln.start not in held]
            page_rules += _footnotes(pdf_page, text, rest, sizes)
            if index == _first_page(texts, ocr):
                page_rules += _front_matter(pdf_page, text, lines[index])
        rules += [RoleRange(page.start + r.start, page.start + r.end, r.role) for r in page_rules]
    scanned = _scanned_lines(texts, ocr, ocr_pages)
    chosen_pages = _model_pages(doc, texts, lines, ocr, tables, model, scanned)
    from_model: list[RoleRange] = []
    for index in chosen_pages:
        page = pages[index]
        if index in scanned:
            try:
                with layered_page(doc.load_page(index), texts[index], scanned[index]) as layered:
                    found = _model_roles(layered[0], texts[index], scanned[index])
            except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError):
                found = []  # a damaged page that will not copy: the rules' roles alone
        else:
            found = _model_roles(doc.load_page(index), texts[index], lines[index])
        from_model += [RoleRange(page.start + r.start, page.start + r.end, r.role) for r in found]
    chosen = _choose(rules, from_model, [pages[i] for i in chosen_pages])
    return Found(tuple(rules), tuple(from_model), tuple(chosen), tuple(chosen_pages))


def _choose(
    rules: Sequence[RoleRange], model: Sequence[RoleRange], read: Sequence[Page]
) -> list[RoleRange]:
    """The rules' roles and the model's (but its headings); on a page the model read, a table of
    the rules' is kept only where the model sees a table too (the rules take two columns of
    numbered headings, a formula or a reference list set in short lines for one)."""
    model_tables = [r for r in model if r.role == "table"]
    kept = [
        r
        for r in rules
        if r.role != "table"
        or not any(p.start <= r.start < p.end for p in read)
        or any(t.start < r.end and r.start < t.end for t in model_tables)
    ]
    return kept + [r for r in model if r.role in FROM_MODEL]


def _inside(r: RoleRange, spans: Sequence[RoleRange]) -> bool:
    return any(s.start <= r.start and r.end <= s.end for s in spans)


# --- the layout model ---


def _scanned_lines(
    texts: Sequence[str], ocr: set[int], ocr_pages: Sequence[OcrPage]
) -> dict[int, list[Line]]:
    """The OCR lines of each page read by OCR whose boxes are known, by 0-based page."""
    found = {}
    for read in ocr_pages:
        index = read.number - 1
        if index in ocr and 0 <= index < len(texts):
            found[index] = ocr_lines(texts[index], read)
    return found


def _model_pages(
    doc: pymupdf.Document,
    texts: Sequence[str],
    lines: Sequence[Sequence[Line]],
    ocr: set[int],
    tables: set[int],
    model: str | None,
    scanned: dict[int, list[Line]],
) -> list[int]:
    """The 0-based pages the layout model reads (see the module's doc); a page read by OCR is
    read from its OCR lines (`scanned`)."""
    if model == "0" or not load_layout_model():
        return []
    lines = [scanned.get(i, []) if i in ocr else page for i, page in enumerate(lines)]
    with_text = [i for i, t in enumerate(texts) if _mapped(t, lines[i])]
    if model == "all" or len(texts) <= ALL_PAGES:
        return with_text
    chosen = with_text[:FIRST_PAGES]
    budget = len(chosen) + UNSURE_PAGES
    unsure = chain(
        (i for i in with_text if i in tables),
        (i for i in with_text if _two_columns(doc, lines[i], i)),
        (i for i in with_text if _pictured(doc, i)),
    )
    for index in unsure:
        if len(chosen) >= budget:
            break
        if index not in chosen:
            chosen.append(index)
    return sorted(chosen)


def load_layout_model() -> bool:
    """Load PyMuPDF Layout's model unless it is loaded; whether it is there.

    `import pymupdf` loads it (about a second), unless the process held it back, as the reader
    server does (`timelimit.READERS`) so that a PDF's text need not wait for a model that only
    some imports use."""
    if not callable(getattr(pymupdf, "_get_layout", None)):
        if "pymupdf.layout" in sys.modules and sys.modules["pymupdf.layout"] is None:
            del sys.modules["pymupdf.layout"]  # held back
        with contextlib.suppress(ImportError):  # not installed: the rules alone
            importlib.import_module("pymupdf.layout")
    return callable(getattr(pymupdf, "_get_layout", None))


def _mapped(text: str, lines: Sequence[Line]) -> bool:
    """Most of the page's text is in lines the model's regions can be mapped to, lines of more
    than a character or two and not too many of them: vertical text (written a character a
    line) takes the model 10-20 s a page, for roles that do not hold."""
    if not lines or len(lines) > MAX_MODEL_LINES:
        return False
    sizes = [len("".join(text[ln.start : ln.end].split())) for ln in lines]
    return sorted(sizes)[len(sizes) // 2] > 2 and sum(sizes) >= 0.5 * len("".join(text.split()))


def _two_columns(doc: pymupdf.Document, lines: Sequence[Line], index: int) -> bool:
    width = doc.load_page(index).rect.width
    narrow = [ln for ln in lines if ln.box[2] - ln.box[0] < 0.5 * width and ln.end - ln.start > 30]
    left = sum(ln.box[2] < width / 2 for ln in narrow)
    right = sum(ln.box[0] > width / 2 for ln in narrow)
    return min(left, right) >= 5


def _pictured(doc: pymupdf.Document, index: int) -> bool:
    page = doc.load_page(index)
    area = abs(page.rect)
    shown = sum(abs(pymupdf.Rect(info["bbox"]) & page.rect) for info in page.get_image_info())
    return shown > 0.05 * area


def _model_roles(page: pymupdf.Page, text: str, lines: Sequence[Line]) -> list[RoleRange]:
    """The model's regions on one page, as ranges of the page's text (its lines in each)."""
    page.get_layout()
    regions = [r for r in page.layout_information or () if r[4] in MODEL_ROLES and _placed(page, r)]
    members: dict[int, list[Line]] = defaultdict(list)
    for line in lines:
        x, y = (line.box[0] + line.box[2]) / 2, (line.box[1] + line.box[3]) / 2
        inside = [
            (abs(pymupdf.Rect(r[:4])), i)
            for i, r in enumerate(regions)
            if r[0] - 2 <= x <= r[2] + 2 and r[1] - 2 <= y <= r[3] + 2
        ]
        if inside:
            members[min(inside)[1]].append(line)
    return [
        RoleRange(start, end, MODEL_ROLES[regions[i][4]])
        for i, found in members.items()
        for start, end in _runs(text, found)
    ]


def _placed(page: pymupdf.Page, region: Sequence) -> bool:
    """A head or foot the model found is at the page's edge (it calls a first page's title block
    a page header at times)."""
    if region[4] not in ("page-header", "page-footer"):
        return True
    width, height = page.rect.width, page.rect.height
    x0, y0, x1, y1 = region[:4]
    return y1 <= 0.15 * height or y0 >= 0.85 * height or x1 <= 0.15 * width or x0 >= 0.85 * width


# --- rules ---


def _runs(text: str, lines: Iterable[Line]) -> list[tuple[int, int]]:
    """The lines' ranges, those with only white space between them joined."""
    out: list[tuple[int, int]] = []
    for line in sorted(lines, key=lambda ln: ln.start):
        if out and not text[out[-1][1] : line.start].replace("·", "").strip():
            out[-1] = (out[-1][0], max(out[-1][1], line.end))
        else:
            out.append((line.start, line.end))
    return out


@dataclass(frozen=True)
class _Edge:
    start: int
    end: int
    top: bool
    key: str
    number: bool  # a page number, or a browser's stamp


def _key(words: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", words.lower())).strip()


def _edge_lines(
    doc: pymupdf.Document, texts: Sequence[str], lines: Sequence[Sequence[Line]], ocr: set[int]
) -> list[list[_Edge]]:
    """Per page, its lines near the top or bottom edge: by their boxes on a text layer, the first
    and last two lines of the text on a page read by OCR."""
    out: list[list[_Edge]] = []
    for index, text in enumerate(texts):
        found: list[_Edge] = []
        if text and (index in ocr or not lines[index]):
            spans = [m.span() for m in re.finditer(r"[^\n]*\S[^\n]*", text)]
            for n, (start, end) in enumerate(spans):
                if n < 2 or n >= len(spans) - 2:
                    found.append(_edge(text, start, end, n < 2))
        elif text:
            height = doc.load_page(index).rect.height
            by_y = sorted(lines[index], key=lambda ln: ln.box[1])
            rows = sorted({round(ln.box[1]) for ln in by_y})  # two lines side by side: one row
            top, bottom = rows[:2], rows[-2:]
            for line in by_y:
                if line.box[3] <= EDGE * height and round(line.box[1]) in top:
                    found.append(_edge(text, line.start, line.end, True))
                elif line.box[1] >= (1 - EDGE) * height and round(line.box[1]) in bottom:
                    found.append(_edge(text, line.start, line.end, False))
        out.append(found)
    return out


def _edge(text: str, start: int, end: int, top: bool) -> _Edge:
    words = text[start:end].strip()
    stamp = _PAGE_NUMBER.fullmatch(words) or _PRINT_STAMP.fullmatch(words)
    return _Edge(start, end, top, _key(words), bool(stamp))


def _repeated(edges: Sequence[Sequence[_Edge]]) -> set[str]:
    pages: Counter[str] = Counter()
    for page in edges:
        pages.update({e.key for e in page if any(ch.isalpha() for ch in e.key)})
    needed = REPEATED if len(edges) >= 4 else len(edges) + 1
    return {key for key, n in pages.items() if n >= needed}


def _furniture(
    edges: Sequence[_Edge], repeated: set[str], tables: Sequence[RoleRange]
) -> list[RoleRange]:
    """Edge lines that repeat or number the page; a table's cells at the edge are none."""
    return [
        RoleRange(e.start, e.end, "page_header" if e.top else "page_footer")
        for e in edges
        if (e.number or e.key in repeated) and not any(t.start <= e.start < t.end for t in tables)
    ]


def _tables(rows: Reordered | None, text: str) -> list[RoleRange]:
    """The rows `table_rows` joined on the page (with the single-cell rows between them)."""
    if rows is None or rows.text != text:
        return []
    put_in = {i for i, source in enumerate(rows.source) if source < 0 and text[i] != "\n"}
    found: list[list[int]] = []  # [start, end, single-cell lines since the last row]
    at = 0
    for part in text.split("\n"):
        start, end = at, at + len(part)
        at = end + 1
        is_row = any(i in put_in for i in range(start, end))
        if is_row and found and found[-1][2] <= 2:
            found[-1][1], found[-1][2] = end, 0
        elif is_row:
            found.append([start, end, 0])
        elif found and part.strip():
            found[-1][2] += 1
    return [RoleRange(start, end, "table") for start, end, _ in found]


def _uncovered(text: str, lines: Sequence[Line]) -> bool:
    """Whether some of the text is in none of its lines (page_lines leaves sideways ones out)."""
    covered = sum(len("".join(text[ln.start : ln.end].split())) for ln in lines)
    return covered < len("".join(text.split()))


def _sideways(blocks: Sequence[dict], width: float, text: str) -> list[RoleRange]:
    """Lines set sideways in a margin (an arXiv stamp); `blocks`: the page's text layer's."""
    found = []
    for block in blocks:
        for line in block.get("lines", ()):
            in_margin = line["bbox"][2] < 0.12 * width or line["bbox"][0] > 0.88 * width
            if line["dir"][0] > 0.99 or not in_margin:
                continue
            wanted = clean_text("".join(s["text"] for s in line["spans"]))
            at = text.find(wanted) if wanted else -1
            if at >= 0:
                found.append(RoleRange(at, at + len(wanted), "page_header"))
    return found


def _contents(text: str) -> list[RoleRange]:
    """A table of contents: most of the page's lines end with a page number, mostly rising."""
    lines = list(re.finditer(r"[^\n]*\S[^\n]*", text))
    ends = [m for m in lines if m.group()[-1].isdigit()]
    if len(ends) < MIN_CONTENTS or len(ends) < 0.4 * len(lines):
        return []
    entries = [(m, int(n.group(1))) for m in ends if (n := _CONTENTS_LINE.search(m.group()))]
    if len(entries) < MIN_CONTENTS or len(entries) < 0.4 * len(lines):
        return []
    rising = sum(a[1] <= b[1] for a, b in pairwise(entries))
    if rising < 0.8 * (len(entries) - 1):
        return []
    return [RoleRange(entries[0][0].start(), entries[-1][0].end(), "navigation")]


def _captions(text: str, lines: Sequence[Line]) -> list[RoleRange]:
    """A block opened by "Table 3:", "Figure 2.", "图 1" is a caption."""
    blocks: dict[int, list[Line]] = defaultdict(list)
    for line in lines:
        blocks[line.block].append(line)
    found = []
    for block in blocks.values():
        first = min(block, key=lambda ln: ln.start)
        if _CAPTION.match(text, first.start):
            found += [RoleRange(s, e, "caption") for s, e in _runs(text, block)]
    return found


def _text_captions(text: str) -> list[RoleRange]:
    return [
        RoleRange(m.start(), m.end(), "caption")
        for m in re.finditer(r"^[^\n]+", text, re.MULTILINE)
        if _CAPTION.match(m.group())
    ]


def _body_size(lines: Sequence[Sequence[Line]]) -> float:
    sizes: Counter[float] = Counter()
    for page in lines:
        for line in page:
            sizes[line.size] += line.end - line.start
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _footnotes(
    page: pymupdf.Page, text: str, lines: Sequence[Line], body: float
) -> list[RoleRange]:
    """Blocks in small type at the foot of their column, the first opened by a mark ("1", "∗")."""
    height = page.rect.height
    small = [ln.size <= min(body - 1, 0.9 * body) for ln in lines]
    blocks: dict[int, list[int]] = defaultdict(list)
    for i, line in enumerate(lines):
        blocks[line.block].append(i)
    notes: list[Line] = []
    for members in blocks.values():
        first = lines[members[0]]
        if not all(small[i] for i in members) or first.box[1] < 0.55 * height:
            continue
        if not _NOTE_MARK.match(text, first.start) and not notes:
            continue
        x0, x1 = min(lines[i].box[0] for i in members), max(lines[i].box[2] for i in members)
        below = [
            ln
            for j, ln in enumerate(lines)
            if not small[j]
            and ln.box[1] > first.box[3]
            and min(ln.box[2], x1) > max(ln.box[0], x0)
            and ln.box[1] < (1 - EDGE) * height
        ]
        if not below:
            notes += [lines[i] for i in members]
    return [RoleRange(s, e, "footnote") for s, e in _runs(text, notes)]


def _first_page(texts: Sequence[str], ocr: set[int]) -> int:
    return next((i for i, t in enumerate(texts) if t.strip() and i not in ocr), -1)


def _front_matter(page: pymupdf.Page, text: str, lines: Sequence[Line]) -> list[RoleRange]:
    """A paper's first page: its lines between the title and the abstract (or first heading
    after the title), and its lines of e-mail addresses, notes and links."""
    found = [
        RoleRange(ln.start, ln.end, "front_matter")
        for ln in lines
        if _FRONT_LINE.search(text, ln.start, ln.end)
    ]
    top = [ln for ln in lines if ln.box[1] < 0.4 * page.rect.height]
    if not top:
        return found
    biggest = max(ln.size for ln in top)
    title = [ln for ln in top if ln.size == biggest]
    title_end = max(ln.end for ln in title if ln.start <= min(t.start for t in title) + 300)
    anchor = next(
        (
            ln
            for ln in sorted(lines, key=lambda ln: ln.start)
            if ln.start >= title_end
            and (
                _ABSTRACT.match(text[ln.start : ln.end].strip())
                or (ln.bold and ln.size >= biggest * 0.7 and ln.start > title_end + 40)
            )
        ),
        None,
    )
    if anchor is None or not 0 < anchor.start - title_end <= MAX_FRONT_CHARS:
        return found
    between = text[title_end : anchor.start]
    start = title_end + len(between) - len(between.lstrip())
    end = anchor.start - (len(between) - len(between.rstrip()))
    if start < end:
        found.append(RoleRange(start, end, "front_matter"))
    return found
