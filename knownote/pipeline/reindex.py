"""Re-index documents imported before titles, sections and stemming: new vectors and terms; and
read the languages of documents imported before they were kept.

A document is redone whole, in one transaction at its end (its passages, offsets and text stay),
so a notebook's search keeps working throughout: each document is searched the way it is indexed
(`documents.embedded_as`, `documents.terms_as`). The app runs this as a background job of the
import queue (`knownote.pipeline.worker`); `knownote reindex` runs it in the foreground.
"""

from __future__ import annotations

from collections.abc import Callable

from knownote.errors import NotFound
from knownote.index.analyze import WORDS, analyzer_for
from knownote.index.context import IN_CONTEXT, embedding_texts, index_passages
from knownote.index.embed import Embedder
from knownote.index.language import document_languages
from knownote.store.db import Document, Store

# progress(document title, passages done, passages in all): raise from it to stop between
# documents (every document finished before stays re-indexed).
Progress = Callable[[str, int, int], None]


def is_stale(document: Document) -> bool:
    """Whether a document's index was made the old way (the passage alone, plain words)."""
    return document.embedded_as != IN_CONTEXT or document.terms_as == WORDS


def stale_documents(store: Store, notebook_id: int) -> list[Document]:
    return [d for d in store.documents(notebook_id) if is_stale(d)]


def notebooks_to_reindex(store: Store) -> list[int]:
    """The notebooks holding at least one document indexed the old way."""
    with store.lock:
        rows = store.db.execute(
            "SELECT DISTINCT notebook_id FROM documents "
            "WHERE embedded_as IS DISTINCT FROM ? OR terms_as = ? ORDER BY notebook_id",
            [IN_CONTEXT, WORDS],
        ).fetchall()
    return [row[0] for row in rows]


def reindex_document(
    store: Store, embedder: Embedder, document_id: int, progress: Callable[[int], None]
) -> int:
    """Redo one document's vectors and terms; returns its passage count.

    Raises NotFound when it is deleted meanwhile (nothing of it is then written).
    """
    if not store.headings(document_id):
        # Imported before headings were recorded: find them first, so that the new vectors
        # and heading terms carry the section paths (None, when the original is not kept).
        from knownote.pipeline.headings import rebuild_headings  # reads PDFs: PyMuPDF

        rebuild_headings(store, document_id)
    document = store.document(document_id)
    text = store.document_text(document_id)
    stored = store.passages(document_id)
    analyzer = analyzer_for(text)
    passages = index_passages(
        text,
        document.title,
        [(p.start, p.end) for p in stored],
        [p.section for p in stored],
        [(p.page_start, p.page_end) for p in stored],
        analyzer,
    )
    vectors = embedder.embed_passages(
        embedding_texts(text, document.title, passages, IN_CONTEXT),
        progress=lambda done, _total: progress(done),
    )
    store.reindex_document(
        document_id, passages, vectors, embedded_as=IN_CONTEXT, terms_as=analyzer
    )
    return len(passages)


def reindex_notebook(
    store: Store, embedder: Embedder, notebook_id: int, progress: Progress | None = None
) -> int:
    """Redo every stale document of a notebook, one at a time; returns how many were redone."""
    documents = stale_documents(store, notebook_id)
    total = sum(d.passages for d in documents)
    done = 0
    redone = 0
    for document in documents:
        if progress:
            progress(document.title, done, total)
        base = done
        try:
            done += reindex_document(
                store,
                embedder,
                document.id,
                lambda n, title=document.title, base=base: (
                    progress and progress(title, base + n, total)
                ),
            )
        except NotFound:  # deleted meanwhile: nothing left to redo
            done = base + document.passages
            continue
        redone += 1
    store.sort_terms_when_due()
    if progress:
        progress("", total, total)
    return redone


def read_missing_languages(store: Store, limit: int = 1_000_000) -> int:
    """Read and keep the languages of up to `limit` documents imported before languages were
    kept; returns how many. Documents deleted meanwhile are passed over."""
    done = 0
    for document_id in store.documents_without_languages(limit):
        try:
            text = store.document_text(document_id)
        except NotFound:
            continue
        store.set_languages(document_id, document_languages(text))
        done += 1
    return done
