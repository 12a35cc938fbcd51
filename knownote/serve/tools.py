"""What each MCP tool does, as plain functions over the open store: JSON-ready data out.

They call the same functions as the command line and the app (search, ask, import, notes), and
every range they return comes with the app's link and the `knownote://` URI that open it. A
request a client can get wrong (an unknown notebook or source, a range outside the text, an
empty question) raises a `KnowNoteError` whose message says what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from knownote.answer.ranges import (
    SpanLinks,
    answer_json,
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
    return range_json(read_range(store, document, start, end), links_of(settings, found))


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
