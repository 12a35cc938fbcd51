"""Import: file bytes -> extracted text -> passages -> vectors -> one transaction in the store."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePath

from knownote.errors import FileTooLarge, KnowNoteError, ModelError, NotFound, PasswordRequired
from knownote.index.context import CURRENT, IndexRecipe, embedding_texts, index_passages
from knownote.index.embed import Embedder
from knownote.index.embed_onnx import OnnxEmbedder
from knownote.index.embedders import get_embedder
from knownote.index.language import document_languages
from knownote.index.split import split
from knownote.read.audio import SpeechOptions
from knownote.read.extracted import Extracted, OcrLimits, OcrProgress, page_of
from knownote.read.fetch import fetch
from knownote.read.roles import document_roles
from knownote.read.sections import section_paths
from knownote.read.sniff import is_recording
from knownote.read.timelimit import extract_with_time_limit
from knownote.settings import Settings
from knownote.store.db import Heading, Notebook, Page, Store, WebOrigin, sha256_hex

# progress(file name, stage, done, total); stages: extract, split, embed, store, and "fetch"
# (a web address, before extract), "ocr" (pages read by OCR) and "transcribe" (minutes of a
# recording), both reported during extract, and "model" (the embedding model's files made on its
# first use on this machine).
Progress = Callable[[str, str, int, int], None]
STAGES = ("extract", "split", "embed", "store")


@dataclass(frozen=True)
class ImportResult:
    file: str
    status: str  # "imported", "duplicate" or "failed"
    document_id: int | None = None
    pages: int = 0
    passages: int = 0
    chars: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None
    needs_password: bool = False
    error_kind: str | None = None  # the error's class name (knownote/errors.py)
    layout_later: bool = False  # a PDF whose page layouts are read after the import

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "status": self.status,
            "document_id": self.document_id,
            "pages": self.pages,
            "passages": self.passages,
            "chars": self.chars,
            "warnings": list(self.warnings),
            "error": self.error,
            "layout_later": self.layout_later,
        }


def clean_filename(name: str) -> str:
    """The user's file name as a label: no folders, no control characters, bounded length."""
    base = PurePath(name.replace("\\", "/")).name
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if base in ("", ".", ".."):
        base = "untitled"
    return base if len(base) <= 200 else base[:150] + "…" + base[-40:]


def ocr_limits(settings: Settings) -> OcrLimits:
    return OcrLimits(
        dpi=settings.ocr_dpi,
        max_megapixels=settings.max_image_megapixels,
        max_pages=settings.max_ocr_pages,
        threads=settings.ocr_threads,
        engine=settings.ocr_engine,
        languages=settings.ocr_languages,
    )


def ocr_progress_text(done: int, total: int) -> str:
    """What the import says while pages are read by OCR."""
    if done >= total:
        return f"Read {total:,} pages by OCR" if total != 1 else "Read 1 page by OCR"
    return f"Reading page {done + 1:,} of {total:,} by OCR"


def address_label(address: str) -> str:
    """A web address as a source's label: printable, without the scheme, bounded length."""
    label = "".join(ch for ch in address.strip() if ch.isprintable())
    label = label.split("://", 1)[-1].rstrip("/") or "untitled"
    return label if len(label) <= 200 else label[:150] + "…" + label[-40:]


def transcribe_progress_text(done: int, total: int) -> str:
    """What the import says while a recording is transcribed."""
    if done >= total:
        return f"Transcribed {total:,} minutes" if total != 1 else "Transcribed 1 minute"
    return f"Transcribing minute {done + 1:,} of {total:,}"


def speech_options(settings: Settings) -> SpeechOptions:
    return SpeechOptions(model=settings.whisper_model, threads=settings.whisper_threads)


def import_address(
    store: Store,
    notebook: Notebook,
    address: str,
    *,
    settings: Settings,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> ImportResult:
    """Fetch a web address and import what it serves (a page, a PDF, ...) as a new source.

    The fetched bytes are kept as the source's file; the same address again is a new version
    beside the old ones (unless nothing changed). Never raises for a problem with the address.
    """
    label = address_label(address)
    if progress:
        progress(label, "fetch", 0, 1)
    try:
        fetched = fetch(
            address,
            allow_local=settings.allow_local_addresses,
            max_bytes=settings.max_file_mb * 1024 * 1024,
            timeout=settings.fetch_timeout,
        )
    except KnowNoteError as e:
        return ImportResult(file=label, status="failed", error=str(e))
    return import_file(
        store,
        notebook,
        label,
        fetched.data,
        settings=settings,
        embedder=embedder,
        progress=progress,
        origin=WebOrigin(fetched.address, fetched.final_address, fetched.fetched_at),
    )


def read_file(
    data: bytes,
    label: str,
    settings: Settings,
    *,
    password: str | None = None,
    progress: OcrProgress | None = None,
    web: bool = False,
    again: bool = False,
) -> Extracted:
    """A file's text as an import reads it: by a reader under the time limit, within the
    settings' limits (`web`: a fetched page, read for its main content; `again`: every page by
    OCR)."""
    return extract_with_time_limit(
        data,
        label,
        password=password,
        max_chars=settings.max_text_chars,
        max_pages=settings.max_pages,
        seconds=settings.max_extract_seconds,
        ocr=replace(ocr_limits(settings), force=again),
        progress=progress,
        main_content=web,
        speech=speech_options(settings),
        layout=not settings.read_layouts_later,
    )


class ReadAhead:
    """The next file's reading, started while the file before it is embedded: the reader is a
    process of its own, so it uses what the model leaves of the cores instead of both waiting on
    each other (on 2 cores it hides about half of a paper's reading). What it reads by OCR or
    transcribes is told to the import that takes it, as it goes on."""

    def __init__(self, data: bytes, filename: str, settings: Settings) -> None:
        self.data = data  # what is read, so that the import stores these very bytes
        self._lock = threading.Lock()
        self._told: OcrProgress | None = None
        self._last: tuple[int, int] | None = None
        self._result: Extracted | Exception | None = None
        self._done = threading.Event()
        label = clean_filename(filename)
        work = threading.Thread(
            target=self._read, args=(data, label, settings), name="read-ahead", daemon=True
        )
        work.start()

    def _read(self, data: bytes, label: str, settings: Settings) -> None:
        try:
            self._result = read_file(data, label, settings, progress=self._progress)
        except Exception as e:  # raised to the import that takes it, in its thread
            self._result = e
        finally:
            self._done.set()

    def _progress(self, done: int, total: int) -> None:
        with self._lock:
            self._last = (done, total)
            told = self._told
        if told:
            told(done, total)

    def result(self, progress: OcrProgress | None = None) -> Extracted:
        """The file's text (raising what its reading raised); `progress` is told how far it
        got and how it goes on."""
        with self._lock:
            self._told, last = progress, self._last
        if progress and last:
            progress(*last)
        self._done.wait()
        if isinstance(self._result, Exception):
            raise self._result
        assert self._result is not None
        return self._result


def load_in_background(embedder: Embedder) -> None:
    """Load a model whose files are made in a thread, so that it is ready when the file is read
    (a cold import's first seconds). One whose files are not made yet is made in the open, where
    the import says so."""
    if isinstance(embedder, OnnxEmbedder) and embedder.prepared() and not embedder.loaded():
        threading.Thread(target=_load_quietly, args=(embedder,), name="load-model").start()


def _load_quietly(embedder: OnnxEmbedder) -> None:
    with contextlib.suppress(ModelError):  # raised again, to the import, where it embeds
        embedder.load()


def get_or_create_notebook(store: Store, name: str, settings: Settings) -> Notebook:
    notebook = store.notebook_by_name(name)
    if notebook is not None:
        return notebook
    embedder = get_embedder(settings.embedding_model)
    return store.create_notebook(name, embedder.name, embedder.dim)


def import_file(
    store: Store,
    notebook: Notebook,
    filename: str,
    data: bytes,
    *,
    settings: Settings,
    embedder: Embedder | None = None,
    password: str | None = None,
    progress: Progress | None = None,
    recipe: IndexRecipe = CURRENT,
    origin: WebOrigin | None = None,
    again: bool = False,
    ahead: ReadAhead | None = None,
) -> ImportResult:
    """Import one file into a notebook. Never raises for a problem with the file itself.

    `recipe` says how vectors and keyword terms are made (the benchmarks compare the old way);
    `origin`: the web address the bytes were fetched from (a page is then read for its main
    content); `again`: a file the notebook holds, read again with every page by OCR
    (`read_again_by_ocr`); `ahead`: this file's reading, started while the file before it was
    embedded (`ReadAhead`).
    """
    label = clean_filename(filename) if origin is None else address_label(filename)

    def report(stage: str, done: int, total: int) -> None:
        if progress:
            progress(label, stage, done, total)

    try:
        if len(data) > settings.max_file_mb * 1024 * 1024:
            raise FileTooLarge(
                f"{label} is {len(data) / 1024 / 1024:.0f} MB; the limit is "
                f"{settings.max_file_mb} MB (setting max_file_mb)."
            )
        digest = sha256_hex(data)
        existing = None if again else store.document_by_hash(notebook.id, digest)
        if existing is not None:
            return _duplicate(label, existing.id, store)
        embedder = embedder or get_embedder(notebook.embedding_model)
        if embedder.name == notebook.embedding_model:
            load_in_background(embedder)  # while the file is read
        report("extract", 0, 1)
        during = "transcribe" if is_recording(data) else "ocr"
        if ahead is None:
            extracted = read_file(
                data,
                label,
                settings,
                password=password,
                progress=lambda done, total: report(during, done, total),
                web=origin is not None,
                again=again,
            )
        else:
            extracted = ahead.result(lambda done, total: report(during, done, total))
        warnings = extracted.warnings
        if again:
            version = len(store.file_versions(notebook.id, digest)) + 1
            warnings = (
                f"Read again by OCR: version {version} of this file, beside the earlier one"
                + ("s." if version > 2 else "."),
                *warnings,
            )
        report("split", 0, 1)
        text = extracted.text
        spans = split(text, settings.passage_size, settings.passage_overlap)
        pages = [Page(p.number, p.start, p.end) for p in extracted.pages]
        starts = [p.start for p in pages]
        sections = section_paths(text, extracted.headings, [s.start for s in spans])
        title = extracted.title or label
        terms_as = recipe.analyzer(text)
        languages = document_languages(text)
        # Not beside the embedding in a thread: that Python work holds the GIL which each of
        # the model's runs needs for a moment, and measured it slowed the import (38.7 s
        # against 30.5 s sequential, benchmarks/import.py's German book, 2 busy cores).
        passages = index_passages(
            text,
            title,
            [(s.start, s.end) for s in spans],
            sections,
            [(page_of(starts, pages, s.start), page_of(starts, pages, s.end - 1)) for s in spans],
            terms_as,
        )
        if embedder.name != notebook.embedding_model:
            raise ModelError(
                f"This notebook uses the embedding model “{notebook.embedding_model}”, "
                f"not “{embedder.name}”."
            )
        if isinstance(embedder, OnnxEmbedder) and not embedder.prepared():
            report("model", 0, 1)  # its files are made on first use: up to a minute
        report("embed", 0, len(passages))
        vectors = embedder.embed_passages(
            embedding_texts(text, title, passages, recipe.embedded_as),
            progress=lambda done, total: report("embed", done, total),
        )
        report("store", 0, 1)
        # Under the lock from saving the file to the commit, so that no other session's delete
        # can discard the kept file in between.
        with store.lock:
            store.save_file(data)
            try:
                document_id = store.add_document(
                    notebook_id=notebook.id,
                    title=title,
                    filename=label,
                    kind=extracted.kind,
                    sha256=digest,
                    text=text,
                    pages=pages,
                    passages=passages,
                    vectors=vectors,
                    warnings=warnings,
                    ocr_pages=extracted.ocr_pages,
                    split=(settings.passage_size, settings.passage_overlap),
                    headings=[Heading(h.start, h.end, h.level) for h in extracted.headings],
                    embedded_as=recipe.embedded_as,
                    terms_as=terms_as,
                    languages=languages,
                    times=extracted.times,
                    origin=origin,
                    again=again,
                    roles=document_roles(text, extracted.headings, extracted.roles),
                    layout_later=extracted.layout_later,
                )
            finally:
                store.discard_file_if_unused(digest)
        if document_id is not None:
            store.sort_terms_when_due()
        report("store", 1, 1)
        if document_id is None:  # imported by someone else while we worked
            existing = store.document_by_hash(notebook.id, digest)
            if existing is None:  # ... and deleted again since
                raise NotFound(f"{label} was imported and deleted in another window meanwhile.")
            return _duplicate(label, existing.id, store)
        return ImportResult(
            file=label,
            status="imported",
            document_id=document_id,
            pages=len(pages),
            passages=len(passages),
            chars=len(text),
            warnings=tuple(warnings),
            layout_later=extracted.layout_later,
        )
    except KnowNoteError as e:
        return ImportResult(
            file=label,
            status="failed",
            error=str(e),
            needs_password=isinstance(e, PasswordRequired),
            error_kind=type(e).__name__,
        )


OCR_KINDS = ("pdf", "image")  # the sources that can be read again by OCR


def read_again_by_ocr(
    store: Store,
    document_id: int,
    *,
    settings: Settings,
    embedder: Embedder | None = None,
    password: str | None = None,
    progress: Progress | None = None,
) -> ImportResult:
    """Read a source's kept file again with every page by OCR, as a new version beside the
    source (a web page's as a new version of its address). Never raises for a problem with
    the file; NotFound when the source is gone."""
    document = store.document(document_id)
    notebook = store.notebook(document.notebook_id)
    name = document.filename
    if document.kind not in OCR_KINDS:
        error = f"{name} is a {document.kind} source: only PDFs and images can be read by OCR."
        return ImportResult(name, "failed", error=error)
    try:
        data = store.read_file(document.sha256)
    except NotFound:
        error = f"The file of {name} is no longer kept: import it again instead."
        return ImportResult(name, "failed", error=error)
    origin = store.web_origin(document_id)
    return import_file(
        store,
        notebook,
        document.filename if origin is None else origin.address,
        data,
        settings=settings,
        embedder=embedder,
        password=password,
        progress=progress,
        origin=origin,
        again=True,
    )


def _duplicate(label: str, document_id: int, store: Store) -> ImportResult:
    document = store.document(document_id)
    origin = store.web_origin(document_id)
    warning = f"Already in this notebook as “{document.title}”."
    if origin is not None:
        warning = (
            f"Unchanged since version {origin.version}, fetched "
            f"{origin.fetched_at:%Y-%m-%d %H:%M} UTC: already in this notebook as "
            f"“{document.title}”."
        )
    return ImportResult(
        file=label,
        status="duplicate",
        document_id=document.id,
        pages=document.n_pages,
        passages=document.passages,
        chars=document.n_chars,
        warnings=(warning,),
    )
