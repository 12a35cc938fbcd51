"""Making a notebook's cards for the sources that have none yet, source by source.

Cloze cards (no model) are made for every source in use that has none; with a model, that
model's question-and-answer cards too. Each source's cards commit on their own, so a stop keeps
what was made and the next run goes on with the sources left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from knownote.answer.prompts import Chat
from knownote.errors import NotFound
from knownote.index.embed import Embedder
from knownote.store.db import Store
from knownote.study.cards import SENTENCES, keep_cards, sources_with_cards
from knownote.study.cloze import CARDS_PER_SOURCE, cloze_cards
from knownote.study.written import PASSAGES_PER_SOURCE, written_cards

# progress(source title, sources done, sources to do); it may raise to stop between sources.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Made:
    """What one run made: sources done, cards written (by a model, before the support check)
    and cards kept to be shown, per maker."""

    made_by: str
    sources: int
    written: int
    kept: int


def sources_to_do(store: Store, notebook_id: int, made_by: str) -> list[int]:
    """The notebook's sources in use that `made_by` has made no cards for, oldest first."""
    done = sources_with_cards(store, notebook_id, made_by)
    return [
        d.id for d in store.documents(notebook_id) if d.enabled and d.passages and d.id not in done
    ]


def make_cards(
    store: Store,
    embedder: Embedder,
    notebook_id: int,
    *,
    llm: Chat | None = None,
    model: str | None = None,
    progress: Progress | None = None,
    per_source: int = CARDS_PER_SOURCE,
    passages: int = PASSAGES_PER_SOURCE,
) -> list[Made]:
    """Make the cards the notebook's sources lack: cloze cards, and `model`'s when given.
    Raises ModelError or LLMUnavailable when the model cannot be used (what was made is kept)."""
    makers = [SENTENCES] + ([model] if llm is not None and model else [])
    work = [(m, d) for m in makers for d in sources_to_do(store, notebook_id, m)]
    counts = {m: [0, 0, 0] for m in makers}
    for done, (made_by, document_id) in enumerate(work):
        try:
            title = store.document(document_id).title
            if progress is not None:
                progress(title, done, len(work))
            if made_by == SENTENCES:
                cards = cloze_cards(store, embedder, document_id, per_source)
                written = 0
            else:
                result = written_cards(store, llm, made_by, document_id, passages)
                cards, written = list(result.cards), len(result.cards)
            keep_cards(store, document_id, made_by, cards, written)
        except NotFound:  # the source was deleted meanwhile
            continue
        counts[made_by][0] += 1
        counts[made_by][1] += written
        counts[made_by][2] += sum(c.supported for c in cards)
    if progress is not None and work:
        progress("", len(work), len(work))
    return [Made(m, *counts[m]) for m in makers]
