"""PDFs (text layers, and pages read by OCR) and image files (read by OCR)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pymupdf

from knownote.errors import FileTooLarge, NoTextLayer, PasswordRequired, UnreadableFile
from knownote.read import pdf_headings, scans
from knownote.read.canonical import PAGE_SEPARATOR, good_title, join_pages
from knownote.read.extracted import (
    Extracted,
    OcrLimits,
    OcrPage,
    OcrProgress,
    Page,
    too_many_chars,
)
from knownote.read.pdf_headings import PDF_TEXT_FLAGS as PDF_TEXT_FLAGS  # re-exported (extract)
from knownote.read.pdf_headings import page_layer
from knownote.read.pdf_roles import MODEL_PAGES, LayerRoles, find_roles, layer_roles, pdf_roles
from knownote.read.roles import RoleRange
from knownote.read.sections import Heading


def pdf_page_text(page: pymupdf.Page) -> str:
    """Exactly the text one PDF page contributes to the canonical text: MuPDF's plain text,
    cleaned, with its tables read row by row (`layer_rows`)."""
    return page_layer(page).text


def pdf_headings_of(
    doc: pymupdf.Document,
    pages: tuple[Page, ...],
    texts: list[str],
    lines: list[list[pdf_headings.Line]],
    *,
    outline: bool = True,
) -> tuple[Heading, ...]:
    """The headings of a PDF as ranges of its canonical text (`texts` per page, joined as `pages`).

    `lines` are the pages' text-layer lines (empty for pages read by OCR): the outline when it is
    usable (and `outline` is on), else the type of those lines.
    """
    per_page = pdf_headings.outline_headings(doc, texts) if outline else None
    if per_page is None:
        per_page = pdf_headings.font_headings(texts, lines)
    return tuple(
        Heading(page.start + h.start, page.start + h.end, h.level)
        for page, found in zip(pages, per_page, strict=True)
        for h in found
    )


def stored_pdf_roles(
    doc: pymupdf.Document,
    pages: tuple[Page, ...],
    texts: list[str],
    ocr: set[int],
    headings: tuple[Heading, ...] | None = None,
    ocr_pages: Sequence[OcrPage] = (),
) -> tuple[RoleRange, ...]:
    """The roles of a stored PDF (its pages, their texts, the 0-based pages read by OCR and
    those pages' stored boxes) for a re-index, as an import finds them; its headings found again
    when not given."""
    lines = pdf_lines(doc, texts, ocr)
    if headings is None:
        headings = pdf_headings_of(doc, pages, texts, lines)
    text, _ = join_pages(texts)
    return pdf_roles(doc, pages, texts, lines, ocr, headings, text, ocr_pages=ocr_pages)


def pdf_lines(
    doc: pymupdf.Document, texts: list[str], skip: set[int]
) -> list[list[pdf_headings.Line]]:
    """Every page's text-layer lines located in its text (none for the 0-based pages in `skip`)."""
    lines = []
    for index, text in enumerate(texts):
        if index in skip or not text:
            lines.append([])
            continue
        try:
            lines.append(page_layer(doc.load_page(index)).lines(text))
        except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError):
            lines.append([])  # a damaged page: its text is stored as it could be read
    return lines


def _open_pdf(data: bytes, name: str, password: str | None) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.FileDataError:
        raise UnreadableFile(
            f"{name} is damaged: it cannot be opened as a PDF. Download or export it again."
        ) from None
    if doc.needs_pass:
        if not password:
            raise PasswordRequired(
                f"{name} is password-protected: enter its password to import it."
            )
        if not doc.authenticate(password):
            raise PasswordRequired(f"The password for {name} is wrong: check it and try again.")
    try:
        count = doc.page_count
    except RuntimeError:  # a page tree damaged beyond counting ("Invalid number of pages")
        count = 0
    if count == 0:
        raise UnreadableFile(
            f"{name} is damaged: no pages can be read from it. Download or export it again."
        )
    return doc


def _pdf_warnings(name: str, count: int, ocr_read: int, unreadable: list[int]) -> list[str]:
    warnings = []
    if ocr_read:
        warnings.append(ocr_warning(ocr_read))
    if unreadable:
        listed = ", ".join(map(str, unreadable[:10])) + (" …" if len(unreadable) > 10 else "")
        warnings.append(f"Some pages of {name} are damaged and could not be read: {listed}.")
    return warnings


@dataclass(frozen=True)
class _Layers:
    texts: list[str]  # per page, its text layer's canonical text ("" when unreadable)
    to_read: list[int]  # 0-based indices of the pages to read by OCR
    unreadable: list[int]  # 1-based numbers of damaged pages
    lines: list[list[pdf_headings.Line]]  # per page, its text layer's lines (for headings)
    layered: list[int]  # 0-based indices of the other pages with an OCR layer over an image
    roles: list[LayerRoles | None]  # per page, what the rules find in its layer besides lines


# ValueError: a damaged page tree counts pages that load_page cannot find
_DAMAGED_PAGE = (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError, ValueError)


def _read_layers(
    doc: pymupdf.Document,
    with_lines: bool = False,
    blank: Callable[[pymupdf.Page], None] | None = None,
) -> _Layers:
    """Every page's text layer, and which pages need OCR instead (see `knownote.read.scans`);
    `blank` is told of each page with no text layer as it is found. Pages whose resources name
    images are read first (a page without a text layer nearly always is one), so a book's scanned
    plate two thirds in is read by OCR beside the rest of its text layer, not after it."""
    count = doc.page_count
    texts: list[str] = [""] * count
    lines: list[list[pdf_headings.Line]] = [[] for _ in range(count)]
    roles: list[LayerRoles | None] = [None] * count
    no_layer, layered, unreadable = [], [], []
    for index in sorted(range(count), key=lambda i: not _lists_images(doc, i)):
        found: list[pdf_headings.Line] = []
        try:
            page = doc.load_page(index)
            layer = page_layer(page)
            text = layer.text
            if with_lines and text:
                found = layer.lines(text)
                roles[index] = layer_roles(page, text, found, layer)
            if scans.has_no_text_layer(page, text):
                no_layer.append(index)
                if blank:
                    blank(page)
            # none of its text hidden, a page has no OCR layer: its images need not be drawn
            elif (
                _text_chars(text)
                and layer.hides_text
                and scans.has_invisible_layer_over_image(page)
            ):
                layered.append(index)
        except _DAMAGED_PAGE:
            text = ""
            unreadable.append(index + 1)
        texts[index], lines[index] = text, found
    no_layer, layered, unreadable = sorted(no_layer), sorted(layered), sorted(unreadable)
    if layered and scans.noisy_layer([texts[i] for i in layered]):
        no_layer, layered = sorted(no_layer + layered), []
    return _Layers(texts, no_layer, unreadable, lines, layered, roles)


def _lists_images(doc: pymupdf.Document, index: int) -> bool:
    """Whether the page's resources name an image (a look at its dictionary, no drawing)."""
    try:
        return bool(doc.get_page_images(index))
    except _DAMAGED_PAGE:
        return False  # a damaged page: read in its turn, where its damage is noted


def pdf_pages_to_ocr(doc: pymupdf.Document) -> list[int]:
    """The 1-based numbers of the pages of an open PDF that an import reads by OCR."""
    return [index + 1 for index in _read_layers(doc).to_read]


def ocr_warning(pages: int) -> str:
    """What a source says about its pages read by OCR."""
    what = "1 page" if pages == 1 else f"{pages:,} pages"
    return f"{what} read by OCR; check quotes against the page image."


def extract_pdf(
    data: bytes,
    name: str,
    password: str | None,
    max_chars: int,
    max_pages: int,
    ocr: OcrLimits,
    progress: OcrProgress | None,
    layout: bool = True,
) -> Extracted:
    """A PDF's text by its text layer, and by OCR where that is missing or noisy. Without
    `layout`, a PDF that opens without a password gets the rules' roles alone (`layout_later`):
    the layout model costs a paper as much as embedding its passages, and
    `knownote.pipeline.roles` reads its pages after the import (given the pages read by OCR
    here, `OcrLimits.before`)."""
    # pages read by OCR while the text layer is read, unless every page is or none
    first = not (ocr.force or ocr.before or ocr.max_pages == 0)
    with _open_pdf(data, name, password) as doc, scans.ReadFirst(ocr, name, first) as ahead:
        count = doc.page_count
        if count > max_pages:
            raise FileTooLarge(
                f"{name} has {count} pages, more than the limit of {max_pages}. "
                "Split it into smaller files."
            )
        layers = _read_layers(doc, with_lines=True, blank=ahead.start)
        texts, unreadable, lines = layers.texts, layers.unreadable, layers.lines
        to_read, skipped = layers.to_read, 0
        before = {page.number - 1: (text, page) for text, page in ocr.before}
        if ocr.force:  # "Read again by OCR": every page that can be read
            to_read = [i for i in range(count) if i + 1 not in unreadable]
        if before:  # the pages its import read by OCR, and only those
            to_read = sorted(before)
        elif ocr.max_pages == 0:  # OCR is switched off: those pages keep what text they have
            skipped, to_read = len(to_read), []
        elif len(to_read) > ocr.max_pages:
            raise FileTooLarge(
                f"{name} has {len(to_read):,} pages to read by OCR, more than the limit of "
                f"{ocr.max_pages} (setting max_ocr_pages). Split it into smaller files."
            )
        judged = (
            []
            if ocr.force or before
            else scans.layers_to_judge(texts, layers.layered, ocr, to_read)
        )
        # the first few suspect layers are judged; the others only when a fresh reading won
        rest, batch = judged[scans.JUDGE_FIRST :], sorted(to_read + judged[: scans.JUDGE_FIRST])
        ocr_pages, refused, won, done, planned = [], [], 0, 0, len(batch)
        if progress and planned:
            progress(0, planned)
        while batch:
            pages = (doc.load_page(index) for index in batch)
            read_all = (
                [before[i] for i in batch]
                if before
                else scans.ocr_pdf_pages(pages, ocr, name, ahead.started)
            )
            for index, read in zip(batch, read_all, strict=True):
                if index in judged and (
                    isinstance(read, FileTooLarge)
                    or not scans.reads_better(read[0], texts[index], ocr)
                ):
                    pass  # the page's own layer reads as well: it stays
                elif isinstance(read, FileTooLarge):
                    texts[index], refused, lines[index] = "", [*refused, str(read)], []
                else:
                    texts[index] = read[0]
                    ocr_pages.append(read[1])
                    lines[index] = []  # the text layer's lines are not in the text OCR read
                    won += index in judged
                done += 1
                if progress and done < planned:
                    progress(done, planned)
            batch, rest = (rest, []) if won else ([], [])
            planned += len(batch)
        if progress and planned:
            progress(planned, planned)
        ocr_pages.sort(key=lambda page: page.number)
        total = sum(len(t) + len(PAGE_SEPARATOR) for t in texts)
        if total > max_chars + len(PAGE_SEPARATOR):
            raise too_many_chars(name, max_chars)
        if not any(texts):
            if refused:
                raise FileTooLarge(refused[0])
            raise NoTextLayer(
                f"{name} has no text: its pages hold neither a text layer nor anything OCR "
                "could read."
            )
        warnings = _pdf_warnings(name, count, len(ocr_pages), unreadable)
        if skipped:
            warnings.append(
                f"{skipped} of {count} pages have no usable text layer (only images, or a noisy "
                "OCR layer) and OCR is off (setting max_ocr_pages), so they are not searchable."
            )
        warnings.extend(refused[:3])
        if doc.is_repaired:
            warnings.append(f"{name} was damaged and has been repaired; some text may be missing.")
        text, pages = join_pages(texts)
        title = good_title((doc.metadata or {}).get("title"))
        headings = pdf_headings_of(doc, pages, texts, lines)
        read_by_ocr = {page.number - 1 for page in ocr_pages}
        # read again later without a password, and with its pages read by OCR as they were
        # read here (`OcrLimits.before`), it gives the same text
        later = not layout and not doc.needs_pass
        roles = pdf_roles(
            doc, pages, texts, lines, read_by_ocr, headings, text,
            ocr_pages=ocr_pages, model="0" if later else None, layers=layers.roles,
        )  # fmt: skip
    return Extracted(
        text, "pdf", pages, title, tuple(warnings), tuple(ocr_pages), headings, roles=roles,
        layout_later=later,
    )  # fmt: skip


def _text_chars(text: str) -> int:
    return len("".join(text.split()))


def extract_image(
    data: bytes, name: str, max_chars: int, ocr: OcrLimits, progress: OcrProgress | None
) -> Extracted:

    texts, ocr_pages = scans.read_image(data, name, ocr, progress)
    if not any(texts):
        raise NoTextLayer(f"{name} is an image in which OCR found no text.")
    text, pages = join_pages(texts)
    if len(text) > max_chars:
        raise too_many_chars(name, max_chars)
    warnings = (ocr_warning(len(ocr_pages)),)
    roles = _image_roles(data, name, ocr, pages, texts, ocr_pages)
    return Extracted(text, "image", pages, None, warnings, tuple(ocr_pages), roles=roles)


def _image_roles(
    data: bytes,
    name: str,
    ocr: OcrLimits,
    pages: tuple[Page, ...],
    texts: list[str],
    ocr_pages: list[OcrPage],
) -> tuple[RoleRange, ...]:
    """An image file's roles, as a scanned PDF's: each frame a page read by OCR (only the frames
    the layout model may read are drawn)."""
    drawn = [p.number for p in ocr_pages if texts[p.number - 1].strip()][:MODEL_PAGES]
    with scans.image_document(data, name, ocr, set(drawn)) as doc:
        found = find_roles(
            doc, pages, texts, [[] for _ in texts], set(range(len(texts))), ocr_pages=ocr_pages
        )
    return found.chosen
