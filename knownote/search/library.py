"""Search across notebooks: each notebook with its own embedding model, the rankings fused.

Notebooks may be embedded with different models, whose vectors (and cosines) cannot be compared,
so each is searched as it is on its own (hybrid by default: its own model, keywords, its own
weights), and the rankings are merged by their scores: a hybrid score measures how far a passage
stands out from the rest of its own notebook (z-scores, see `retrieve.fuse`), which reads the same
in any notebook. Reciprocal rank fusion interleaves the notebooks instead, so the best passage of
a notebook that has nothing on the question ranks beside that of the one that has it
(`benchmarks/library.py` measures both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knownote.index.embed import Embedder
from knownote.index.embedders import get_embedder
from knownote.search.followup import RRF_K, search_queries
from knownote.search.retrieve import Hit
from knownote.settings import MULTILINGUAL
from knownote.store.db import Notebook, Store
from knownote.store.library import ALL, LibraryError, choose

__all__ = ["ALL", "LibraryError", "choose", "merge", "reading_model", "search_library"]

FUSIONS = ("score", "rrf")
# How each search mode's rankings are merged (chosen with benchmarks/library.py). A vector score
# is a cosine of the notebook's own model: another model's cosines sit elsewhere (the
# multilingual model's near 0.8, the English one's near 0.3), so vector rankings are fused by
# rank. Their z-scores over their own notebooks were tried too: on xquad.en's halves they lost
# 0.015 of recall@5 (rank: 0.038), but a Chinese question over an English model's notebook
# stands ~3 deviations out by chance, and the Chinese set lost 0.24 (rank: 0.010).
FUSION_OF = {"hybrid": "score", "keyword": "score", "vector": "rrf"}

EmbedderFor = Callable[[str], Embedder]


@dataclass(frozen=True)
class LibraryHits:
    """Hits from several notebooks, best first, and the notebook of each hit's document."""

    hits: list[Hit]
    queries: tuple[str, ...]
    notebook_of: dict[int, Notebook]  # by document id
    note: str | None = None


def reading_model(notebooks: Sequence[Notebook]) -> str:
    """The model that reads an answer's sentences across these notebooks (quotes, support
    spans): the multilingual one when any notebook uses it, since it reads every language and
    across them; else the first notebook's."""
    models = [n.embedding_model for n in notebooks]
    return MULTILINGUAL if MULTILINGUAL in models else models[0]


def search_library(
    store: Store,
    notebooks: Sequence[Notebook],
    queries: Sequence[str],
    *,
    k: int = 8,
    mode: str = "hybrid",
    translations: Sequence[str] = (),
    embedders: EmbedderFor = get_embedder,
    fusion: str | None = None,
) -> LibraryHits:
    """The `k` best passages of several notebooks for the queries (the question first).

    Args:
        store: the open database.
        notebooks: the notebooks to search, each with its own embedding model.
        queries: the question, and a follow-up's rewrite of it when there is one.
        k: how many passages to return.
        mode: "hybrid", "vector" or "keyword", in every notebook.
        translations: the question translated (weighted below the question, as in a notebook).
        embedders: the (cached) embedder of a model name.
        fusion: "score" or "rrf" (None: the one chosen for the mode, FUSION_OF).

    Returns:
        The hits best first, each hit's notebook by its document, and a note when a notebook
        was searched by keywords only (its embedding server is down).
    """
    fusion = fusion or FUSION_OF.get(mode, "score")
    if fusion not in FUSIONS:
        raise LibraryError(f"Unknown fusion “{fusion}”; use one of {', '.join(FUSIONS)}.")
    rankings: list[list[Hit]] = []
    notebook_of: dict[int, Notebook] = {}
    notes: list[str] = []
    searched: tuple[str, ...] = tuple(queries)
    for notebook in notebooks:
        found = search_queries(
            store,
            embedders(notebook.embedding_model),
            notebook.id,
            queries,
            k=k,
            mode=mode,
            document_ids=None,
            translations=translations,
        )
        searched = found.queries
        if found.note:
            notes.append(f"{notebook.name}: {found.note}")
        rankings.append(found.hits)
        notebook_of.update((hit.document_id, notebook) for hit in found.hits)
    merged = merge(rankings, k, fusion)
    return LibraryHits(merged, searched, notebook_of, " ".join(notes) or None)


def merge(rankings: Sequence[Sequence[Hit]], k: int, fusion: str = "score") -> list[Hit]:
    """The top `k` of several notebooks' rankings: by score ("score"), or by reciprocal rank
    ("rrf"); ties go to the earlier notebook."""
    if fusion == "score":
        ranked = [(hit.score, -q, -r, hit) for q, hits in enumerate(rankings) for r, hit in
                  enumerate(hits)]  # fmt: skip
    else:
        ranked = [(1 / (RRF_K + r + 1), -q, -r, hit) for q, hits in enumerate(rankings) for r, hit
                  in enumerate(hits)]  # fmt: skip
    ranked.sort(key=lambda item: item[:3], reverse=True)
    return [item[3] for item in ranked[:k]]
