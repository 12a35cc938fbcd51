"""Retrieval evaluation on SQuAD-format question sets: recall@1/5/10 and MRR@10 per mode.

Each context becomes one document of a scratch notebook (split with the real splitter, embedded
with the real model, stored through the store's import path); every question is then searched and
counts as found at rank r when the r-th passage's [start, end) overlaps its first answer's span.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knownote.errors import KnowNoteError
from knownote.index.context import CURRENT, IndexRecipe, embedding_texts, index_passages
from knownote.index.embed import Embedder
from knownote.index.language import document_languages
from knownote.index.split import split
from knownote.read.roles import document_roles
from knownote.search.retrieve import (
    FUSION_DEPTH,
    MODES,
    Scope,
    Tuning,
    fuse,
    hybrid_rankings,
    rank,
)
from knownote.store.db import Store, sha256_hex

CUTOFFS = (1, 5, 10)
# The fields of a Tuning that only the fusion of two rankings uses, at a neutral value.
FUSION_ONLY = {
    "dense_weight": 1.0,
    "dense_weight_cjk": 1.0,
    "dense_floor": 0.0,
    "coverage_power": 0.0,
    "mixed_dense_weight": 1.0,
    "mixed_coverage_power": 0.0,
}
# How far (in characters) a recorded answer offset may be from the answer text's real position.
REANCHOR_WINDOW = 20
# JSQuAD contexts begin with "<title> [SEP] ".
_TITLE_PREFIX = re.compile(r"^([^\n]{1,200}?) \[SEP\] ")

Progress = Callable[[str], None]


class DatasetError(KnowNoteError):
    """The question set file cannot be read as SQuAD-format JSON."""


@dataclass(frozen=True)
class Question:
    text: str
    context: int  # index into Dataset.contexts
    start: int
    end: int
    answers: tuple[str, ...] = ()  # every gold answer text (the first is at [start, end))


@dataclass(frozen=True)
class Context:
    title: str
    text: str


@dataclass(frozen=True)
class Dataset:
    contexts: list[Context]
    questions: list[Question]
    skipped: int = 0


@dataclass(frozen=True)
class Report:
    modes: dict[str, dict[str, float]]
    passages: int
    questions: int
    skipped: int = 0
    k: int = 10
    extra: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "modes": self.modes,
            "passages": self.passages,
            "questions": self.questions,
            "skipped": self.skipped,
            "k": self.k,
        }


def load_squad(
    path: Path, max_questions: int | None = None, *, skip: int = 0, article: bool = False
) -> Dataset:
    """Read a SQuAD-format file: its questions and the contexts they are asked over.

    A context the set asks nothing of (`"qas": []`) is kept whatever else is left out: it is the
    rest of the notebook (the distractors of `qa_mixed/`). A context whose questions were all
    left out (by `max_questions`, `skip`, or as unusable) is dropped.

    A JSQuAD "title [SEP] " prefix becomes a heading line ("title\\n"), so the title stays
    searchable text and answers inside it keep a place; later offsets shift accordingly.
    Questions whose first answer has a negative offset, or whose text cannot be found near the
    recorded offset, are skipped (and counted). `skip` leaves out the first questions kept (a
    held-out part for tuning). With `article`, each article is one long document: its
    paragraphs joined with blank lines, answer offsets shifted, titled with the article's title.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        articles = data["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DatasetError(f"{path} is not a SQuAD-format question set: {e}") from e
    wanted = None if max_questions is None else skip + max_questions
    contexts: list[Context] = []
    questions: list[Question] = []
    skipped = 0
    for entry in articles:
        full = wanted is not None and len(questions) >= wanted
        if full and any(p.get("qas") for p in entry.get("paragraphs", [])):
            continue
        article_title = str(entry.get("title", "")).replace("_", " ").strip()
        parts: list[str] = []
        offset = 0
        kept: list[Question] = []
        for paragraph in entry.get("paragraphs", []):
            asked = bool(paragraph.get("qas"))
            if asked and wanted is not None and len(questions) + len(kept) >= wanted:
                continue
            title, text, shift_from, shift = _clean_context(paragraph["context"], article_title)
            if article and parts:
                offset += 2  # the blank line between paragraphs
            here = []
            for qa in paragraph.get("qas", []):
                if wanted is not None and len(questions) + len(kept) + len(here) >= wanted:
                    break
                answers = qa.get("answers") or []
                if not answers or answers[0].get("answer_start", -1) < 0:
                    skipped += 1
                    continue
                answer = answers[0]["text"]
                start = answers[0]["answer_start"]
                if start >= shift_from:
                    start -= shift
                start = reanchor(text, answer, start)
                if start is None:
                    skipped += 1
                    continue
                golds = tuple(dict.fromkeys(a["text"] for a in answers if a.get("text")))
                at = offset if article else 0
                here.append(
                    Question(
                        qa["question"], len(contexts), at + start, at + start + len(answer), golds
                    )
                )
            if article:
                parts.append(text)
                offset += len(text)
                kept.extend(here)
            elif here or not asked:
                kept.extend(here)
                questions.extend(kept)
                kept = []
                contexts.append(Context(title, text))
        unasked = not any(p.get("qas") for p in entry.get("paragraphs", []))
        if article and parts and (kept or unasked):
            questions.extend(kept)
            contexts.append(Context(article_title or parts[0][:40], "\n\n".join(parts)))
    if skip:
        asked = {q.context for q in questions}
        questions = questions[skip:]
        unasked = set(range(len(contexts))) - asked
        used = sorted({q.context for q in questions} | unasked)
        renumber = {old: new for new, old in enumerate(used)}
        contexts = [contexts[i] for i in used]
        questions = [dataclasses.replace(q, context=renumber[q.context]) for q in questions]
    return Dataset(contexts, questions, skipped)


def _clean_context(context: str, article_title: str) -> tuple[str, str, int, int]:
    """(title, text, offset from which answers shift, shift)."""
    match = _TITLE_PREFIX.match(context)
    if not match:
        return article_title or context[:40], context, len(context) + 1, 0
    title = match.group(1)
    # "title [SEP] rest" -> "title\nrest": offsets after the prefix move left by len(" [SEP]").
    return title, f"{title}\n{context[match.end() :]}", match.end(), match.end() - len(title) - 1


def reanchor(text: str, answer: str, start: int) -> int | None:
    """The start of the exact occurrence of `answer` nearest to `start` (within a window)."""
    if text[start : start + len(answer)] == answer:
        return start
    lo = max(0, start - REANCHOR_WINDOW)
    hi = min(len(text), start + len(answer) + REANCHOR_WINDOW)
    best = None
    i = text.find(answer, lo, hi)
    while i != -1:
        if best is None or abs(i - start) < abs(best - start):
            best = i
        i = text.find(answer, i + 1, hi)
    return best


def import_text(
    store: Store,
    notebook_id: int,
    embedder: Embedder,
    title: str,
    text: str,
    size: int = 500,
    overlap: int = 50,
    recipe: IndexRecipe = CURRENT,
) -> int | None:
    """Store a plain text as a document through the import path (split, terms, vectors)."""
    spans = split(text, size, overlap)
    terms_as = recipe.analyzer(text)
    passages = index_passages(
        text,
        title,
        [(s.start, s.end) for s in spans],
        [""] * len(spans),
        [(None, None)] * len(spans),
        terms_as,
    )
    vectors = embedder.embed_passages(embedding_texts(text, title, passages, recipe.embedded_as))
    return store.add_document(
        notebook_id=notebook_id,
        title=title,
        filename=title,
        kind="text",
        sha256=sha256_hex(text.encode("utf-8")),
        text=text,
        pages=[],
        passages=passages,
        vectors=vectors,
        split=(size, overlap),
        embedded_as=recipe.embedded_as,
        terms_as=terms_as,
        languages=document_languages(text),
        roles=document_roles(text, [], ()),
    )


def evaluate(
    dataset: Dataset,
    embedder: Embedder,
    modes: Sequence[str] = MODES,
    k: int = 10,
    progress: Progress | None = None,
    size: int = 500,
    overlap: int = 50,
    recipe: IndexRecipe = CURRENT,
    tuning: Tuning | None = None,
) -> Report:
    """Import the contexts into a scratch database and score every question in every mode.

    `recipe` says how the passages are indexed and `tuning` how they are searched (None: the
    weights chosen for the embedding model; `context.BEFORE` and `retrieve.BEFORE_TUNING` are the
    ways before titles, sections and stemming).
    """
    for mode in modes:
        if mode not in MODES:
            raise KnowNoteError(f"Unknown search mode “{mode}”; use one of {', '.join(MODES)}.")
    with ScratchIndex(dataset, embedder, progress, size, overlap, recipe) as index:
        results = {mode: index.score(mode, k, tuning) for mode in modes}
        return Report(results, index.passages, len(dataset.questions), dataset.skipped, k)


class ScratchIndex:
    """The contexts of a question set imported into a scratch database, to be searched in any
    mode with any weights (`benchmarks/fusion.py` scores many weights on one index)."""

    def __init__(
        self,
        dataset: Dataset,
        embedder: Embedder,
        progress: Progress | None = None,
        size: int = 500,
        overlap: int = 50,
        recipe: IndexRecipe = CURRENT,
    ) -> None:
        self.dataset, self.embedder = dataset, embedder
        self.say = progress or (lambda _: None)
        self.size, self.overlap, self.recipe = size, overlap, recipe
        self._vectors: list | None = None

    def __enter__(self) -> ScratchIndex:
        self._folder = tempfile.TemporaryDirectory(prefix="knownote-eval-")
        self.store = Store.open(Path(self._folder.name) / "eval.duckdb")
        try:
            self._import()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.store.close()
        self._folder.cleanup()

    def _import(self) -> None:
        notebook = self.store.create_notebook("eval", self.embedder.name, self.embedder.dim)
        self.document_ids: list[int | None] = []
        seen: dict[str, int] = {}
        contexts = self.dataset.contexts
        for i, context in enumerate(contexts):
            if context.text in seen:  # the same context twice is one document
                self.document_ids.append(seen[context.text])
                continue
            document_id = import_text(
                self.store, notebook.id, self.embedder, context.title, context.text,
                self.size, self.overlap, self.recipe,
            )  # fmt: skip
            seen[context.text] = document_id
            self.document_ids.append(document_id)
            if (i + 1) % 25 == 0 or i + 1 == len(contexts):
                self.say(f"imported {i + 1}/{len(contexts)} contexts")
        self.spans = {
            p.id: (p.document_id, p.start, p.end)
            for d in set(self.document_ids)
            for p in self.store.passages(d)
        }
        self.passages = len(self.spans)
        self.scope = Scope(notebook.id)

    def vectors(self) -> list:
        """The questions' vectors, embedded once."""
        if self._vectors is None:
            questions = self.dataset.questions
            self._vectors = []
            for j, q in enumerate(questions):
                self._vectors.append(self.embedder.embed_query(q.text))
                if (j + 1) % 100 == 0 or j + 1 == len(questions):
                    self.say(f"embedded {j + 1}/{len(questions)} questions")
        return self._vectors

    def score(self, mode: str, k: int = 10, tuning: Tuning | None = None) -> dict[str, float]:
        """Recall at each cutoff up to `k` and MRR@k of every question in `mode`."""
        questions = self.dataset.questions
        vectors = self.vectors() if mode != "keyword" else [None] * len(questions)
        found_at: list[int | None] = []
        for j, q in enumerate(questions):
            ranked = rank(
                self.store, self.embedder, self.scope, q.text, k, mode, vectors[j], tuning
            )
            found_at.append(
                _first_hit(ranked, self.spans, self.document_ids[q.context], q.start, q.end)
            )
            if (j + 1) % 100 == 0 or j + 1 == len(questions):
                self.say(f"{mode}: {j + 1}/{len(questions)} questions")
        cutoffs = tuple(c for c in CUTOFFS if c <= k) or (k,)
        return _metrics(found_at, cutoffs, k)

    def score_fusions(self, tunings: Sequence[Tuning], k: int = 10) -> list[dict[str, float]]:
        """`score("hybrid", k, tuning)` of each of `tunings`, which may differ only in how they
        fuse (dense weights and floor, coverage power): each question is searched once."""
        keyword_part = {dataclasses.replace(t, **FUSION_ONLY) for t in tunings}
        if len(keyword_part) != 1:
            raise ValueError("These tunings differ in their keyword weights, not only in fusion.")
        questions, vectors = self.dataset.questions, self.vectors()
        depth = max(k, FUSION_DEPTH)
        found_at: list[list[int | None]] = [[] for _ in tunings]
        for j, q in enumerate(questions):
            dense, sparse = hybrid_rankings(
                self.store, self.scope, q.text, vectors[j], depth, tunings[0]
            )
            for found, tuning in zip(found_at, tunings, strict=True):
                ranked = fuse(dense, sparse, depth, tuning.for_query(q.text))[:k]
                found.append(
                    _first_hit(ranked, self.spans, self.document_ids[q.context], q.start, q.end)
                )
            if (j + 1) % 100 == 0 or j + 1 == len(questions):
                self.say(f"fusions: {j + 1}/{len(questions)} questions")
        cutoffs = tuple(c for c in CUTOFFS if c <= k) or (k,)
        return [_metrics(found, cutoffs, k) for found in found_at]


def _first_hit(
    ranked: list[tuple[int, float]],
    spans: dict[int, tuple[int, int, int]],
    document_id: int | None,
    start: int,
    end: int,
) -> int | None:
    for position, (pid, _) in enumerate(ranked, start=1):
        doc, p_start, p_end = spans[pid]
        if doc == document_id and p_start < end and start < p_end:
            return position
    return None


def _metrics(found_at: list[int | None], cutoffs: Sequence[int], k: int) -> dict[str, float]:
    n = len(found_at) or 1
    out = {f"recall@{c}": sum(1 for r in found_at if r is not None and r <= c) / n for c in cutoffs}
    out[f"mrr@{k}"] = sum(1 / r for r in found_at if r is not None) / n
    return {name: round(value, 4) for name, value in out.items()}


def stderr_progress(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
