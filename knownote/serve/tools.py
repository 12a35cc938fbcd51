"""What each MCP tool does, as plain functions over the open store: JSON-ready data out.

They call the same functions as the command line and the app (search, ask, import, notes), and
every range they return comes with the app's link and the `knownote://` URI that open it. A
request a client can get wrong (an unknown notebook or source, a range outside the text, an
empty question) raises a `KnowNoteError` whose message says what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from knownote.answer.audio_overview import AudioOverview
from knownote.answer.ranges import (
    SpanLinks,
    answer_json,
    audio_overview_json,
    hit_json,
    library_links,
    range_json,
    read_range,
)
from knownote.errors import KnowNoteError, ModelNotInstalled
from knownote.index.language import language_name
from knownote.notebooks import find_notebook, find_notebooks, find_source
from knownote.search.library import ALL
from knownote.settings import Settings
from knownote.store.db import Notebook, Store
from knownote.store.library import in_library

MAX_K = 50


def links_of(settings: Settings, notebook: Notebook) -> SpanLinks:
    return SpanLinks(settings.app_url, notebook.id)


def list_notebooks(store: Store) -> dict[str, object]:
    return {
        "notebooks": [
            {
                "id": n.id,
                "name": n.name,
                "sources": n.documents,
                "passages": n.passages,
                "embedding_model": n.embedding_model,
                "in_library": in_library(store, n.id),
            }
            for n in store.notebooks()
        ]
    }


def list_sources(store: Store, notebook: str) -> dict[str, object]:
    found = find_notebook(store, notebook)
    return {
        "notebook": {"id": found.id, "name": found.name},
        "sources": [
            {
                "id": d.id,
                "title": d.title,
                "filename": d.filename,
                "kind": d.kind,
                "pages": d.n_pages,
                "languages": [
                    {"code": code, "name": language_name(code)} for code in d.languages or ()
                ],
                "passages": d.passages,
                "characters": d.n_chars,
                "used_in_answers": d.enabled,
            }
            for d in store.documents(found.id)
        ],
    }


def _across(store: Store, notebook: str, sources: Sequence[int] | None) -> list[Notebook] | None:
    """The notebooks of a question across the library ("all", or names separated by commas);
    None for a question of one notebook."""
    if notebook.strip().lower() != ALL and store.notebook_by_name(notebook) is not None:
        return None
    if notebook.strip().lower() != ALL and "," not in notebook:
        return None
    if sources:
        raise KnowNoteError(
            "sources narrows one notebook's search; leave it out when asking several notebooks."
        )
    return find_notebooks(store, notebook)


def _named(notebook: Notebook) -> dict[str, object]:
    return {"id": notebook.id, "name": notebook.name}


def _checked_k(k: int) -> int:
    if not 1 <= k <= MAX_K:
        raise KnowNoteError(f"k is {k}; ask for between 1 and {MAX_K} passages.")
    return k


def _scope(store: Store, notebook: Notebook, sources: Sequence[int] | None) -> list[int] | None:
    """The sources to search (each checked to be the notebook's); None: all of them."""
    if not sources:
        return None
    return [find_source(store, notebook, document_id).id for document_id in sources]


def search(
    store: Store,
    settings: Settings,
    notebook: str,
    question: str,
    *,
    k: int = 8,
    mode: str = "hybrid",
    sources: Sequence[int] | None = None,
) -> dict[str, object]:
    from knownote.index.embedders import get_embedder
    from knownote.search.followup import search_queries
    from knownote.search.library import search_library

    across = _across(store, notebook, sources)
    if across is not None:
        hits = search_library(store, across, [question], k=_checked_k(k), mode=mode)
        links = library_links(store, settings.app_url, [h.document_id for h in hits.hits])
        return {
            "notebooks": [{"id": n.id, "name": n.name} for n in across],
            "hits": [
                {**hit_json(hit, links), "notebook": _named(hits.notebook_of[hit.document_id])}
                for hit in hits.hits
            ],
            "note": hits.note,
        }
    found = find_notebook(store, notebook)
    searched = search_queries(
        store,
        get_embedder(found.embedding_model),
        found.id,
        [question],
        k=_checked_k(k),
        mode=mode,
        document_ids=_scope(store, found, sources),
    )
    links = links_of(settings, found)
    return {
        "notebook": {"id": found.id, "name": found.name},
        "hits": [hit_json(hit, links) for hit in searched.hits],
        "note": searched.note,
    }


def ask(
    store: Store,
    settings: Settings,
    notebook: str,
    question: str,
    *,
    model: str | None = None,
    quoted: bool = False,
    k: int = 8,
    sources: Sequence[int] | None = None,
    chat: int | None = None,
) -> dict[str, object]:
    from knownote.answer.ask import ask as ask_notebook
    from knownote.answer.ask import ask_library
    from knownote.answer.servers import connect, resolve_model
    from knownote.index.embedders import get_embedder

    if not question.strip():
        raise KnowNoteError("The question is empty: ask something.")
    across = _across(store, notebook, sources)
    found = find_notebook(store, notebook) if across is None else across[0]
    llm, chosen = None, None
    if not quoted:
        llm, models, _ = connect(settings)
        chosen = resolve_model(model, models)
        if model and chosen not in models:
            listed = ", ".join(models) or "none"
            raise ModelNotInstalled(
                f"No answer server lists the model “{model}” (listed: {listed}). Name one of "
                "those, leave the model out for the first one, or ask for a quoted answer."
            )
    if across is not None:
        answer = ask_library(
            store,
            across,
            question,
            llm=llm,
            model=chosen,
            settings=settings,
            k=_checked_k(k),
            chat_id=chat,
            quoted=quoted,
        )
        links = library_links(store, settings.app_url, [p.document_id for p in answer.passages])
        names = {n.id: n.name for n in across}
        record = answer_json(answer, links)
        for key in ("citations", "passages", "supports"):
            for entry in record[key]:
                held = links.notebook_of(entry["document_id"])
                entry["notebook"] = {"id": held, "name": names.get(held)}
        return record
    answer = ask_notebook(
        store,
        get_embedder(found.embedding_model),
        found.id,
        question,
        llm=llm,
        model=chosen,
        settings=settings,
        k=_checked_k(k),
        document_ids=_scope(store, found, sources),
        chat_id=chat,
        quoted=quoted,
    )
    return answer_json(answer, links_of(settings, found))


def read(
    store: Store, settings: Settings, notebook: str, source: int, start: int, end: int
) -> dict[str, object]:
    found = find_notebook(store, notebook)
    document = find_source(store, found, source)
    record = range_json(read_range(store, document, start, end), links_of(settings, found))
    return {**record, "seconds": seconds_of(store, document.id, start, end)}


def seconds_of(store: Store, document_id: int, start: int, end: int) -> list[float] | None:
    """When a recording's range was said, [start, end] in seconds; None for other sources."""
    said = store.time_range(document_id, start, end)
    return None if said is None else [said[0], said[1]]


def add_source(store: Store, settings: Settings, notebook: str, path: str) -> dict[str, object]:
    from knownote.pipeline.ingest import import_file

    found = find_notebook(store, notebook)
    if path.strip().lower().startswith(("http://", "https://")):
        raise KnowNoteError(
            "Adding a web page by its address is not supported yet: save the page as a file "
            "(HTML or PDF) and add that file's path."
        )
    file = Path(path).expanduser()
    if not file.is_absolute():
        raise KnowNoteError(
            f"“{path}” is not a full path; give the file's absolute path on this computer."
        )
    try:
        data = file.read_bytes()
    except OSError as e:
        raise KnowNoteError(f"{file} could not be read: {e.strerror or e}.") from None
    return import_file(store, found, file.name, data, settings=settings).as_dict()


def save_note(store: Store, notebook: str, title: str, body: str) -> dict[str, object]:
    from knownote.answer import notes

    found = find_notebook(store, notebook)
    note_id = notes.write(store, found.id, title, body)
    return {"note_id": note_id, "notebook": {"id": found.id, "name": found.name}}


AUDIO_SUFFIXES = {".ogg": "ogg", ".opus": "ogg", ".mp3": "mp3", ".wav": "wav"}


def audio_format_of(path: Path) -> str:
    """'ogg', 'mp3' or 'wav' by the file's suffix; a KnowNoteError for any other."""
    fmt = AUDIO_SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise KnowNoteError(
            f"“{path.name}” does not end in .ogg, .opus, .mp3 or .wav: name the audio file with "
            "the suffix of the format to write."
        )
    return fmt


def write_audio(ogg: bytes, path: Path) -> None:
    """The kept Ogg/Opus audio written at `path` in the format its suffix names."""
    from knownote.voice.encode import decode, encode

    fmt = audio_format_of(path)
    try:
        path.write_bytes(ogg if fmt == "ogg" else encode(decode(ogg), fmt))
    except OSError as e:
        raise KnowNoteError(f"{path} could not be written: {e.strerror or e}.") from None


def make_overview(
    store: Store,
    settings: Settings,
    notebook: str,
    *,
    format: str | None = None,
    model: str | None = None,
    focus: str = "",
    length: str = "default",
    language: str | None = None,
    sources: Sequence[int] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[AudioOverview, list[str]]:
    """Make and keep an audio overview (knownote.pipeline.audio_overview): (it, what to tell
    of it). A written format (a model named, or `format` brief, deep-dive or debate) uses
    `model`, or the first model the answer servers list; without a model and without a format,
    and when no server answers for a written format, it is the read-aloud brief of quotes, and
    the notes say so."""
    from knownote.answer.audio_overview import FORMAT_NAMES, WRITTEN_FORMATS
    from knownote.pipeline.audio_overview import AudioRequest
    from knownote.pipeline.audio_overview import make_audio_overview as make_and_keep

    found = find_notebook(store, notebook)
    chosen = format or ("deep-dive" if model else "read-aloud")
    notes = []
    if format is None and model is None:
        notes.append(
            f"No model was named, so this is the {FORMAT_NAMES['read-aloud'].lower()}: the "
            "sources' central sentences read as quotes, not a summary. Name a model (and a "
            "format) for a conversation."
        )
    llm = chosen_model = None
    if chosen in WRITTEN_FORMATS:
        from knownote.answer.servers import connect, resolve_model
        from knownote.errors import LLMUnavailable

        llm, models, status = connect(settings)
        chosen_model = resolve_model(model, models)
        if model and (llm is None or chosen_model not in models):
            listed = ", ".join(models) or "none"
            raise LLMUnavailable(
                status or f"No answer server lists the model “{model}” (listed: {listed})."
            )
    request = AudioRequest(
        chosen,
        document_ids=tuple(_scope(store, found, sources) or ()),
        focus=focus,
        length=length,
        language=language,
        llm=llm,
        model=chosen_model,
    )
    overview, _, said = make_and_keep(
        store, found.id, request, progress or (lambda what, done, total: None)
    )
    return overview, notes + said


def make_audio_overview(
    store: Store,
    settings: Settings,
    notebook: str,
    *,
    out: str | None = None,
    format: str | None = None,
    model: str | None = None,
    focus: str = "",
    length: str = "default",
    language: str | None = None,
    sources: Sequence[int] | None = None,
) -> dict[str, object]:
    """An audio overview made and kept, its audio also written at `out` when given: its lines,
    their times and citations (`audio_overview_json`), where the audio is, and the notes."""
    path = None
    if out:
        path = Path(out).expanduser()
        if not path.is_absolute():
            raise KnowNoteError(f"“{out}” is not a full path; give the audio file's absolute path.")
        audio_format_of(path)
    overview, notes = make_overview(
        store, settings, notebook, format=format, model=model, focus=focus, length=length,
        language=language, sources=sources,
    )  # fmt: skip
    if path is not None:
        write_audio(store.read_file(overview.audio_sha256 or ""), path)
    record = audio_overview_json(overview, links_of(settings, store.notebook(overview.notebook_id)))
    return {**record, "audio": str(path) if path else None, "notes": notes}
