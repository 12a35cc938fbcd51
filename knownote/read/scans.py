"""Scans and photos: which PDF pages are read by OCR, image files as sources, and their limits.

A PDF page is read by OCR when it has no text layer (the rule that used to call it "scanned":
images and under 50 characters, or under 200 characters beside an image covering half the page)
or when its layer is a noisy OCR layer: invisible text (render mode 3) over a page-covering image
whose digit-bearing tokens are often OCR confusions ("ZOq5", "20I5"); measured over all such pages
of the document (the corpus's auditor letter: 13 %, every born-digital page of the corpus: no
invisible layer at all). Such a layer that passes that test but whose words the dictionary knows
few of (poor in its letters: "Eeairing", "aieiabership"), or that reads as garbage by its shapes
(symbol soup like "«POAH «3E*»CM", mojibake, words broken apart: `ocr.layer_noise`, which needs
no dictionary), is judged against a fresh OCR reading of its page, and the better reading kept
(`layers_to_judge`, `reads_better`; knownote.read.wordlist).

Boxes of OCR'd characters are stored in page coordinates: PDF points of the unrotated page, and
for an image file, its pixels scaled by IMAGE_SCALE (an image page is drawn as a PDF page of that
size, so the page view treats both alike).
"""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pymupdf
from PIL import Image, ImageOps, UnidentifiedImageError

from knownote.errors import FileTooLarge, UnreadableFile
from knownote.read import wordlist
from knownote.read.extracted import OcrLimits, OcrPage, OcrProgress
from knownote.read.ocr import OcrText, layer_noise, read_page, suspect_token_share

IMAGE_SCALE = 0.5  # page points per image pixel: an image page is shown at 144 dpi at zoom 1
OCR_MAX_SIDE = 4000  # longer images are reduced before OCR (the detector works at 2000 anyway)
NOISY_LAYER_SHARE = 0.05  # share of suspect digit tokens above which an OCR layer is re-read
# An OCR layer whose words the dictionary knows less than this share of is judged against a
# fresh reading (born-digital English pages of the corpus: 0.96-0.99; a layer with its letters
# misread, "Eeairing", "aieiabership": under 0.8; Chinese layers: 0.4-0.7, always judged).
SUSPECT_KNOWN_SHARE = 0.9
BETTER_BY = 0.05  # the fresh reading is kept when its known share is this much higher
# A document's first suspect layers judged; the others only when a fresh reading won on one of
# them (a Chinese scan's good layer scores as low as a poor one: three OCR runs, not hundreds).
JUDGE_FIRST = 3

# ---------------------------------------------------------------- PDF pages


def _text_chars(text: str) -> int:
    return len("".join(text.split()))


def has_no_text_layer(page: pymupdf.Page, text: str) -> bool:
    """A page with images and almost no text, or a half-page image and little text."""
    chars = _text_chars(text)
    if chars >= 200:
        return False
    images = page.get_image_info()
    if not images:
        return False
    if chars < 50:
        return True
    covered = max((pymupdf.Rect(im["bbox"]) & page.rect).get_area() for im in images)
    return covered >= 0.5 * page.rect.get_area()


def has_invisible_layer_over_image(page: pymupdf.Page) -> bool:
    """Most of the page's text is invisible (an OCR layer) and an image covers 90 % of it."""
    images = page.get_image_info()
    if not images:
        return False
    covered = max((pymupdf.Rect(im["bbox"]) & page.rect).get_area() for im in images)
    if covered < 0.9 * page.rect.get_area():
        return False
    spans = page.get_texttrace()
    total = sum(len(s["chars"]) for s in spans)
    invisible = sum(len(s["chars"]) for s in spans if s["type"] == 3)
    return total > 0 and invisible > 0.5 * total


def noisy_layer(texts: list[str]) -> bool:
    """Whether the pooled text of a document's invisible OCR layers reads as noise."""
    return suspect_token_share("\n".join(texts)) >= NOISY_LAYER_SHARE


def layers_to_judge(
    texts: list[str], layered: list[int], limits: OcrLimits, to_read: list[int]
) -> list[int]:
    """The pages (0-based) whose OCR layer reads poorly: garbage by its shapes (symbol soup,
    mojibake, words broken apart: `ocr.layer_noise`), first, then those whose words the
    dictionary knows under SUSPECT_KNOWN_SHARE of. Each is read by OCR too, and the better
    reading kept (`reads_better`). As many as the OCR limit leaves beside the pages read anyway;
    without a dictionary (no Tesseract), the garbage ones alone."""
    room = limits.max_pages - len(to_read)
    if not layered or room <= 0:
        return []
    garbage = [i for i in layered if layer_noise(texts[i]).garbled]
    vocabulary = wordlist.words(limits.languages)
    poor = [
        i
        for i in layered
        if i not in garbage
        and vocabulary
        and wordlist.known_share(texts[i], vocabulary).share < SUSPECT_KNOWN_SHARE
    ]
    return (garbage + poor)[:room]


def reads_better(ocr_text: str, layer: str, limits: OcrLimits) -> bool:
    """Whether a fresh OCR reading of a page beats its OCR layer: the layer is garbage by its
    shapes and the reading is not, or the dictionary knows a share of the reading's words
    BETTER_BY higher (and it read at least half as many words)."""
    if layer_noise(layer).garbled:  # mojibake of Chinese writes three characters for one
        enough = _text_chars(ocr_text) >= 0.25 * _text_chars(layer)
        return enough and not layer_noise(ocr_text).garbled
    vocabulary = wordlist.words(limits.languages)
    fresh, old = wordlist.known_share(ocr_text, vocabulary), wordlist.known_share(layer, vocabulary)
    return fresh.counted >= 0.5 * old.counted and fresh.share >= old.share + BETTER_BY


def _largest_image_mb(page: pymupdf.Page) -> float:
    """The decoded size of the largest image drawn on the page, in MB (as declared)."""
    largest = 0.0
    for item in page.get_images(full=True):
        width, height, bpc, colorspace = item[2], item[3], item[4] or 8, item[5]
        components = {"DeviceCMYK": 4, "DeviceRGB": 3, "ICCBased": 3, "Lab": 3}.get(colorspace, 1)
        largest = max(largest, width * height * components * bpc / 8 / 1e6)
    return largest


@dataclass(frozen=True)
class _Rendered:
    number: int  # 1-based page number
    image: np.ndarray
    dpi: int
    back: pymupdf.Matrix  # image pixels -> unrotated page points


def _render(page: pymupdf.Page, limits: OcrLimits, name: str) -> _Rendered:
    """The page as RGB pixels at the OCR resolution (lower for a poster-sized page)."""
    decoded, allowed = _largest_image_mb(page), 3 * limits.max_megapixels  # as RGB pixels
    if decoded > allowed:
        raise FileTooLarge(
            f"Page {page.number + 1} of {name} holds an image that decodes to {decoded:,.0f} MB, "
            f"over the limit of {allowed} MB for OCR ({limits.max_megapixels} megapixels of RGB; "
            "setting max_image_megapixels)."
        )
    zoom = limits.dpi / 72
    rect = page.rect * page.rotation_matrix
    pixels = abs(rect.width * rect.height) * zoom * zoom / 1e6
    if pixels > limits.max_megapixels:  # a poster-sized page: read it at a lower resolution
        zoom *= (limits.max_megapixels / pixels) ** 0.5
    matrix = page.rotation_matrix * pymupdf.Matrix(zoom, zoom)
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False, colorspace="rgb")
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    return _Rendered(page.number + 1, image, round(72 * zoom), ~matrix)


def _read(rendered: _Rendered, limits: OcrLimits) -> tuple[str, OcrPage]:
    read = read_page(rendered.image, limits.engine, limits.languages, rendered.dpi, limits.threads)
    back = rendered.back
    return read.text, _ocr_page(rendered.number, read, lambda r: pymupdf.Rect(r) * back)


def ocr_pdf_page(page: pymupdf.Page, limits: OcrLimits, name: str) -> tuple[str, OcrPage]:
    """Render one page at the OCR resolution and read it; boxes in unrotated page points."""
    return _read(_render(page, limits, name), limits)


class ReadFirst:
    """The first pages of a PDF that need OCR, read as soon as they are found while the rest of
    its text layer is read (up to `limits.threads` pages, each on a core the text layer's reading
    leaves): a book with a scanned cover or plate no longer reads its text layer and then waits
    for OCR. A context: leaving it stops what has not begun."""

    def __init__(self, limits: OcrLimits, name: str, on: bool = True) -> None:
        self.limits, self.name, self.on = limits, name, on
        self.started: dict[int, Future[tuple[str, OcrPage]] | FileTooLarge] = {}  # 0-based
        self._pool = ThreadPoolExecutor(max(1, limits.threads), thread_name_prefix="ocr-first")

    def start(self, page: pymupdf.Page) -> None:
        """Begin reading this page by OCR, unless enough have begun."""
        if not self.on or len(self.started) >= max(1, self.limits.threads):
            return
        try:
            self.started[page.number] = self._pool.submit(
                _read, _render(page, self.limits, self.name), self.limits
            )
        except FileTooLarge as e:
            self.started[page.number] = e

    def __enter__(self) -> ReadFirst:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def ocr_pdf_pages(
    pages: Iterable[pymupdf.Page],
    limits: OcrLimits,
    name: str,
    started: Mapping[int, Future[tuple[str, OcrPage]] | FileTooLarge] | None = None,
) -> Iterator[tuple[str, OcrPage] | FileTooLarge]:
    """`ocr_pdf_page` of each page, in order, with up to `limits.threads` pages read at once
    (Tesseract runs one process a page on one core; RapidOCR reads one page at a time with
    its own threads). Pages are rendered here, one ahead of the readers, so at most
    threads + 1 page images are held; a page over a limit gives its FileTooLarge instead.
    `started`: pages already being read (`ReadFirst.started`), by 0-based number."""
    workers = max(1, limits.threads)
    started = started or {}
    with ThreadPoolExecutor(workers, thread_name_prefix="ocr") as pool:
        waiting: deque[Future[tuple[str, OcrPage]] | FileTooLarge] = deque()
        for page in pages:
            if page.number in started:
                waiting.append(started[page.number])
                continue
            try:
                waiting.append(pool.submit(_read, _render(page, limits, name), limits))
            except FileTooLarge as e:
                waiting.append(e)
            while len(waiting) > workers or (waiting and isinstance(waiting[0], FileTooLarge)):
                yield _result(waiting.popleft())
        while waiting:
            yield _result(waiting.popleft())


def _result(item: Future[tuple[str, OcrPage]] | FileTooLarge) -> tuple[str, OcrPage] | FileTooLarge:
    return item if isinstance(item, FileTooLarge) else item.result()


def _ocr_page(number: int, read: OcrText, to_page: Callable[[tuple], pymupdf.Rect]) -> OcrPage:
    boxes = np.full((len(read.text), 4), np.nan, dtype=np.float32)
    for i, box in enumerate(read.boxes):
        if box is not None:
            r = to_page(box)
            boxes[i] = (r.x0, r.y0, r.x1, r.y1)
    return OcrPage(number, boxes, np.asarray(read.lines, dtype=np.int32))


# ---------------------------------------------------------------- image files

# Pillow's own bomb check refuses without saying the size; `open_image` checks the declared size
# against the setting before any pixel is decoded, so Pillow's is switched off.
Image.MAX_IMAGE_PIXELS = None

_IMAGE_ERRORS = (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError)


def _damaged_image(name: str) -> UnreadableFile:
    return UnreadableFile(
        f"{name} is a damaged or truncated image: it cannot be decoded. "
        "Export or photograph it again."
    )


def open_image(data: bytes, name: str, limits: OcrLimits) -> Image.Image:
    """The image, checked against the limits before any pixel is decoded."""
    try:
        image = Image.open(io.BytesIO(data))
        frames = getattr(image, "n_frames", 1)
    except Image.DecompressionBombError:
        raise _too_many_pixels(name, None, limits) from None
    except _IMAGE_ERRORS:
        raise _damaged_image(name) from None
    width, height = image.size
    if width * height > limits.max_megapixels * 1e6:
        raise _too_many_pixels(name, (width, height), limits)
    if frames > limits.max_pages:
        raise FileTooLarge(
            f"{name} has {frames:,} frames, more than the limit of {limits.max_pages} pages "
            "read by OCR per file (setting max_ocr_pages). Split it into smaller files."
        )
    return image


def _too_many_pixels(name: str, size: tuple[int, int] | None, limits: OcrLimits) -> FileTooLarge:
    what = f"{size[0]:,} × {size[1]:,} pixels" if size else "more pixels than can be decoded"
    return FileTooLarge(
        f"{name} declares {what}, over the limit of {limits.max_megapixels} megapixels "
        "(setting max_image_megapixels). Reduce the image and import it again."
    )


def _upright_rgb(image: Image.Image) -> Image.Image:
    """The current frame turned as its EXIF says, on white where it is transparent."""
    frame = ImageOps.exif_transpose(image)
    if frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info:
        rgba = frame.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return frame.convert("RGB")


def image_frames(data: bytes, name: str, limits: OcrLimits) -> Iterator[np.ndarray]:
    """Each frame (a TIFF page; one for other formats) as upright RGB pixels, one at a time."""
    image = open_image(data, name, limits)
    frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    for index in range(frames):
        try:
            image.seek(index)
            if image.size[0] * image.size[1] > limits.max_megapixels * 1e6:
                raise _too_many_pixels(name, image.size, limits)
            yield np.asarray(_upright_rgb(image))
        except Image.DecompressionBombError:
            raise _too_many_pixels(name, None, limits) from None
        except _IMAGE_ERRORS:
            raise _damaged_image(name) from None


def read_image(
    data: bytes, name: str, limits: OcrLimits, progress: OcrProgress | None = None
) -> tuple[list[str], list[OcrPage]]:
    """The text of each frame of an image file by OCR, with boxes in image page points."""
    image = open_image(data, name, limits)
    total = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    texts, pages = [], []
    for number, pixels in enumerate(image_frames(data, name, limits), 1):
        if progress:
            progress(number - 1, total)
        height, width = pixels.shape[:2]
        scale = min(1.0, OCR_MAX_SIDE / max(width, height))
        if scale < 1.0:
            small = Image.fromarray(pixels).resize((int(width * scale), int(height * scale)))
            pixels = np.asarray(small)
        read = read_page(pixels, limits.engine, limits.languages, None, limits.threads)
        factor = IMAGE_SCALE / scale
        texts.append(read.text)
        pages.append(
            _ocr_page(
                number,
                read,
                lambda b, f=factor: pymupdf.Rect(b[0] * f, b[1] * f, b[2] * f, b[3] * f),
            )
        )
    if progress:
        progress(total, total)
    return texts, pages


def image_document(data: bytes, name: str, limits: OcrLimits, wanted: set[int]) -> pymupdf.Document:
    """The image file as a PDF with one page per frame, each IMAGE_SCALE points per pixel;
    only the frames in `wanted` (1-based) are drawn, the others are blank pages of their size."""
    image = open_image(data, name, limits)
    frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    doc = pymupdf.open()
    for number in range(1, frames + 1):
        image.seek(number - 1)
        upright = ImageOps.exif_transpose(image) if number in wanted else image
        width, height = upright.size
        page = doc.new_page(width=width * IMAGE_SCALE, height=height * IMAGE_SCALE)
        if number in wanted:
            rgb = np.ascontiguousarray(np.asarray(_upright_rgb(image)))
            pix = pymupdf.Pixmap(pymupdf.csRGB, width, height, rgb.tobytes(), 0)
            page.insert_image(page.rect, pixmap=pix)
    return doc
