"""Retrieval across the library: questions asked of their own notebook, and of every notebook
at once (each searched with its own embedding model, the rankings fused: search.library).

Each part of a question set becomes a notebook of one scratch database, embedded with its own
model; a question counts as found at rank r as in `measure.retrieval`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knownote.errors import KnowNoteError
from knownote.index.embed import Embedder
from knownote.measure.retrieval import (
    CUTOFFS,
    Dataset,
    DatasetError,
    Progress,
    _first_hit,
    _metrics,
    import_text,
    load_squad,
)
from knownote.search.library import FUSIONS, merge
from knownote.search.retrieve import MODES, search
from knownote.store.db import Store


@dataclass(frozen=True)
class Part:
    """One notebook of the library: a question set's contexts, embedded with `embedder`; its
    questions are asked (`asked` False: its contexts only stand beside the others)."""

    name: str
    dataset: Dataset
    embedder: Embedder
    asked: bool = True


@dataclass(frozen=True)
class LibraryReport:
    own: dict[str, float]  # every asked question of its own notebook
    library: dict[str, dict[str, float]]  # ... of all the notebooks, by fusion
    parts: list[dict[str, object]]
    questions: int
    mode: str
    k: int

    def as_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "k": self.k,
            "questions": self.questions,
            "own notebook": self.own,
            "library": self.library,
            "notebooks": self.parts,
        }


def split_articles(path: Path, parts: int, max_questions: int | None = None) -> list[Dataset]:
    """A SQuAD-format set's articles in `parts` consecutive parts (the first holds the extra
    article of an odd count), each read as `load_squad` reads a file (`max_questions` each)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        articles = data["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DatasetError(f"{path} is not a SQuAD-format question set: {e}") from e
    if not 1 <= parts <= len(articles):
        raise KnowNoteError(f"{path} has {len(articles)} articles; it cannot make {parts} parts.")
    size = -(-len(articles) // parts)
    datasets = []
    with tempfile.TemporaryDirectory(prefix="knownote-library-") as folder:
        for i in range(parts):
            part = Path(folder) / f"part{i}.json"
            part.write_text(json.dumps({"data": articles[i * size : (i + 1) * size]}), "utf-8")
            datasets.append(load_squad(part, max_questions))
    return datasets


def evaluate_library(
    parts: Sequence[Part],
    mode: str = "hybrid",
    k: int = 10,
    fusions: Sequence[str] = FUSIONS,
    progress: Progress | None = None,
) -> LibraryReport:
    """Import each part as a notebook of a scratch database, then search every asked question in
    its own notebook and across all of them (fused each way of `fusions`)."""
    if mode not in MODES:
        raise KnowNoteError(f"Unknown search mode “{mode}”; use one of {', '.join(MODES)}.")
    say: Callable[[str], None] = progress or (lambda _: None)
    with tempfile.TemporaryDirectory(prefix="knownote-eval-") as folder:
        store = Store.open(Path(folder) / "library.duckdb")
        try:
            return _evaluate(store, parts, mode, k, fusions, say)
        finally:
            store.close()


def _evaluate(
    store: Store,
    parts: Sequence[Part],
    mode: str,
    k: int,
    fusions: Sequence[str],
    say: Callable[[str], None],
) -> LibraryReport:
    notebooks, documents, described = [], [], []
    for part in parts:
        notebook = store.create_notebook(part.name, part.embedder.name, part.embedder.dim)
        seen: dict[str, int | None] = {}
        ids = []
        for context in part.dataset.contexts:
            if context.text not in seen:
                seen[context.text] = import_text(
                    store, notebook.id, part.embedder, context.title, context.text
                )
            ids.append(seen[context.text])
        say(f"{part.name}: imported {len(part.dataset.contexts)} contexts")
        notebooks.append(notebook)
        documents.append(ids)
        described.append(
            {
                "name": part.name,
                "model": part.embedder.name,
                "documents": len(seen),
                "questions": len(part.dataset.questions) if part.asked else 0,
            }
        )
    spans = {
        p.id: (p.document_id, p.start, p.end)
        for ids in documents
        for d in set(ids)
        if d is not None
        for p in store.passages(d)
    }
    own: list[int | None] = []
    fused: dict[str, list[int | None]] = {f: [] for f in fusions}
    asked = [(i, q) for i, part in enumerate(parts) if part.asked for q in part.dataset.questions]
    for j, (i, q) in enumerate(asked, start=1):
        rankings = [
            search(store, part.embedder, notebook.id, q.text, k=k, mode=mode)
            for part, notebook in zip(parts, notebooks, strict=True)
        ]
        gold = documents[i][q.context]
        own.append(_first_hit(_ranked(rankings[i]), spans, gold, q.start, q.end))
        for fusion in fusions:
            merged = _ranked(merge(rankings, k, fusion))
            fused[fusion].append(_first_hit(merged, spans, gold, q.start, q.end))
        if j % 100 == 0 or j == len(asked):
            say(f"{mode}: {j}/{len(asked)} questions")
    cutoffs = tuple(c for c in CUTOFFS if c <= k) or (k,)
    return LibraryReport(
        own=_metrics(own, cutoffs, k),
        library={f: _metrics(found, cutoffs, k) for f, found in fused.items()},
        parts=described,
        questions=len(asked),
        mode=mode,
        k=k,
    )


def _ranked(hits: Sequence) -> list[tuple[int, float]]:
    return [(h.passage_id, h.score) for h in hits]
