"""Re-embed a notebook with another model (the multilingual one, for a notebook made before it).

Each document's passages are given to the new model as an import gives them (title and section
path, then the passage), staged document by document, and put in place together
(`knownote.store.reembed`): until the end every search uses the notebook's old model and vectors,
never a mix. A stopped re-embed goes on from what it staged; documents imported meanwhile (with
the old model) are re-embedded before the switch. The app runs this as a job of the import queue
(`knownote.pipeline.worker`); `knownote reindex NOTEBOOK --model NAME` runs it in the foreground.
"""

from __future__ import annotations

from collections.abc import Callable

from knownote.errors import NotFound
from knownote.index.context import IN_CONTEXT, embedding_text
from knownote.index.embed import Embedder
from knownote.store.db import Store
from knownote.store.reembed import (
    documents_to_reembed,
    finish_reembed,
    stage_vectors,
    start_reembed,
)

# progress(document title, passages done, passages in all): raise from it to stop between
# documents (what was staged stays staged).
Progress = Callable[[str, int, int], None]


def reembed_notebook(
    store: Store, embedder: Embedder, notebook_id: int, progress: Progress | None = None
) -> int:
    """Give every passage of the notebook a vector of `embedder`'s model, then make it the
    notebook's model; returns how many documents were embedded in this call."""
    report = progress or (lambda title, done, total: None)
    reembed = start_reembed(store, notebook_id, embedder.name, embedder.dim)
    embedded = 0
    while True:
        pending = documents_to_reembed(store, reembed)
        if not pending and finish_reembed(store, reembed, IN_CONTEXT):
            break
        documents = {d.id: d for d in store.documents(notebook_id)}
        total = sum(d.passages for d in documents.values())
        done = total - sum(documents[i].passages for i in pending if i in documents)
        for document_id in pending:
            document = documents.get(document_id)
            if document is None:
                continue  # deleted since the list was made
            report(document.title, done, total)
            try:
                text = store.document_text(document_id)
                passages = store.passages(document_id)
                texts = [
                    embedding_text(document.title, p.section, text[p.start : p.end])
                    for p in passages
                ]
                vectors = embedder.embed_passages(
                    texts,
                    progress=lambda n, _all, t=document.title, base=done, total=total: report(
                        t, base + n, total
                    ),
                )
                stage_vectors(store, reembed, document_id, [p.start for p in passages], vectors)
            except NotFound:  # deleted, or re-split, meanwhile: the next round sees it again
                continue
            done += document.passages
            embedded += 1
    total = sum(d.passages for d in store.documents(notebook_id))
    report("", total, total)
    return embedded
