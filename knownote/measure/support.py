"""Support-span evaluation on SQuAD-format question sets (`knownote eval-support`).

Each context becomes a document of a scratch notebook (as `knownote eval` does). For each
question the passages are retrieved as the app retrieves them, and an answer sentence is written
as the question followed by its first gold answer; that sentence cites every retrieved passage.
Its support span counts as right when it overlaps an evidence sentence of the question's own
context: the annotated `evidences` where the set has them, else the context sentence that holds
the gold answer. Two flag rates are reported: on these supported sentences, and on the answer
sentence of a question from another article, matched against the same passages.

Where the answer occurs more than once in its context, "the sentence holding it" rests on the
set's `answer_start` alone, and some sets (JSQuAD, CMRC 2018) put that at the first occurrence
whatever sentence the question was written from; and an answer found only in the title that a
set puts before its context ("title [SEP] context") has no evidence sentence at all. accuracy@1
is therefore also reported on the questions whose evidence is unambiguous: annotated, or an
answer that occurs once in the context, after any such title.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knownote.answer.cite import sources_from_hits
from knownote.answer.support import (
    WEAK_SCORE,
    Scorer,
    best_support,
    candidates,
    meaning_scorer,
    sentence_pieces,
)
from knownote.index.embed import Embedder
from knownote.measure.retrieval import DatasetError, Progress, _clean_context, import_text, reanchor
from knownote.search.retrieve import search
from knownote.store.db import Store

_CJK_END = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af？。！]\s*$")


@dataclass(frozen=True)
class SupportQuestion:
    text: str
    answer: str
    context: int
    evidence: tuple[tuple[int, int], ...]  # [start, end) in the context text
    unambiguous: bool = True  # annotated evidence, or an answer occurring once, not in a title
    id: str = ""  # the set's question id (parallel sets share them)


@dataclass(frozen=True)
class SupportSet:
    titles: list[str]  # per context: the article it comes from
    contexts: list[str]
    questions: list[SupportQuestion]
    annotated: bool  # evidence from `evidences`, not from the sentence holding the answer
    skipped: int = 0


@dataclass(frozen=True)
class SupportReport:
    questions: int
    annotated: bool
    accuracy_at_1: float
    flag_rate_supported: float
    flag_rate_unrelated: float | None  # None: every question comes from one article
    weak_score: float
    skipped: int = 0
    unambiguous: int = 0  # questions with annotated evidence or an answer once, not in a title
    accuracy_unambiguous: float | None = None  # accuracy@1 on those
    scores: dict[str, list[float]] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "questions": self.questions,
            "evidence": "annotated" if self.annotated else "sentence holding the answer",
            "accuracy@1": self.accuracy_at_1,
            "questions_unambiguous": self.unambiguous,
            "accuracy@1_unambiguous": self.accuracy_unambiguous,
            "flag_rate_supported": self.flag_rate_supported,
            "flag_rate_unrelated": self.flag_rate_unrelated,
            "weak_score": self.weak_score,
            "skipped": self.skipped,
        }


def _evidence(text: str, start: int, end: int, evidences: Sequence[str]) -> list[tuple[int, int]]:
    found = []
    for sentence in evidences:
        sentence = sentence.strip()
        i = text.find(sentence) if sentence else -1
        if i >= 0:
            found.append((i, i + len(sentence)))
    if found or evidences:
        return found
    return [(a, b) for a, b in sentence_pieces(text) if a < end and start < b]


def load_support_set(path: Path, max_questions: int | None = None, skip: int = 0) -> SupportSet:
    """Read a SQuAD-format set; questions whose answer or evidence cannot be placed are skipped
    (and counted). `skip` leaves out the first questions that can be placed, so that questions
    beyond a held-out first part can be studied; only the contexts of kept questions are kept."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        articles = data["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DatasetError(f"{path} is not a SQuAD-format question set: {e}") from e
    titles: list[str] = []
    contexts: list[str] = []
    questions: list[SupportQuestion] = []
    annotated = False
    skipped = 0
    placed = 0  # placeable questions met so far, including those left out by `skip`
    for number, article in enumerate(articles):
        for paragraph in article.get("paragraphs", []):
            if max_questions is not None and len(questions) >= max_questions:
                break
            title, text, shift_from, shift = _clean_context(
                paragraph["context"], article.get("title", "")
            )
            body = len(title) + 1 if shift else 0  # "title [SEP] context": the title is no evidence
            kept = []
            for qa in paragraph.get("qas", []):
                answers = qa.get("answers") or []
                if not answers or answers[0].get("answer_start", -1) < 0:
                    skipped += 1
                    continue
                answer = answers[0]["text"]
                start = answers[0]["answer_start"]
                start = reanchor(text, answer, start - shift if start >= shift_from else start)
                evidences = qa.get("evidences") or []
                annotated = annotated or bool(evidences)
                spans = _evidence(text, start or 0, (start or 0) + len(answer), evidences)
                if start is None or not spans or not qa["question"].strip():
                    skipped += 1
                    continue
                placed += 1
                if placed <= skip:
                    continue
                once = bool(evidences) or (text.count(answer) == 1 and start >= body)
                kept.append(
                    SupportQuestion(
                        qa["question"].strip(),
                        answer,
                        len(contexts),
                        tuple(spans),
                        once,
                        str(qa.get("id", "")),
                    )
                )
            if kept:
                room = None if max_questions is None else max_questions - len(questions)
                questions.extend(kept[:room])
                contexts.append(text)
                titles.append(f"{number}:{article.get('title', '')}")
    return SupportSet(titles, contexts, questions, annotated, skipped)


def load_answers(path: Path) -> dict[str, tuple[str, str]]:
    """Each question id of a SQuAD-format set: (its question, its first answer), to write the
    answer sentences of a parallel set in this set's language."""
    try:
        articles = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DatasetError(f"{path} is not a SQuAD-format question set: {e}") from e
    return {
        str(qa["id"]): (qa["question"].strip(), qa["answers"][0]["text"])
        for article in articles
        for paragraph in article.get("paragraphs", [])
        for qa in paragraph.get("qas", [])
        if qa.get("answers") and "id" in qa
    }


def answer_sentence(question: str, answer: str) -> str:
    """'Which team won Super Bowl 50? Denver Broncos.' (CJK: '…是谁？村雨城。')."""
    question = question.strip()
    if _CJK_END.search(question):
        return f"{question}{answer.strip()}。"
    return f"{question} {answer.strip()}."


def evaluate_support(
    dataset: SupportSet,
    embedder: Embedder,
    *,
    k: int = 8,
    mode: str = "hybrid",
    size: int = 500,
    overlap: int = 50,
    progress: Progress | None = None,
    answers: dict[str, tuple[str, str]] | None = None,
) -> SupportReport:
    """Import the contexts into a scratch database, then score every question's support span.

    `answers` (from `load_answers`): the answer sentences are written from these, by question id,
    in another language than the contexts; questions without one are left out.
    """
    if answers is not None:
        kept = [q for q in dataset.questions if q.id in answers]
        dataset = SupportSet(
            dataset.titles, dataset.contexts, kept, dataset.annotated,
            dataset.skipped + len(dataset.questions) - len(kept),
        )  # fmt: skip

    def sentence_of(q: SupportQuestion) -> str:
        return (
            answer_sentence(*answers[q.id])
            if answers is not None
            else (answer_sentence(q.text, q.answer))
        )

    say = progress or (lambda _: None)
    n = len(dataset.questions)
    if not n:
        raise DatasetError("The question set holds no question with a placeable answer.")
    with tempfile.TemporaryDirectory(prefix="knownote-eval-support-") as folder:
        store = Store.open(Path(folder) / "eval.duckdb")
        try:
            notebook = store.create_notebook("eval-support", embedder.name, embedder.dim)
            ids: dict[str, int | None] = {}
            for i, text in enumerate(dataset.contexts):
                if text not in ids:
                    ids[text] = import_text(
                        store, notebook.id, embedder, f"context {i}", text, size, overlap
                    )
                if (i + 1) % 50 == 0 or i + 1 == len(dataset.contexts):
                    say(f"imported {i + 1}/{len(dataset.contexts)} contexts")
            supported: list[float] = []
            unrelated: list[float] = []
            weak: dict[str, list[bool]] = {"supported": [], "unrelated": []}
            right = 0
            right_unambiguous = 0
            for j, q in enumerate(dataset.questions):
                hits = search(store, embedder, notebook.id, q.text, k=k, mode=mode)
                spans = candidates(sources_from_hits(hits, cited=True))
                scorer, meaning = Scorer(spans), meaning_scorer(spans, embedder)
                found = best_support(scorer, meaning, sentence_of(q), None)
                supported.append(found[1] if found else 0.0)
                weak["supported"].append(found[2] if found else True)
                if found:
                    span = scorer.spans[found[0]]
                    own = ids[dataset.contexts[q.context]]
                    hit = span.document_id == own and any(
                        a < span.end and span.start < b for a, b in q.evidence
                    )
                    right += hit
                    right_unambiguous += hit and q.unambiguous
                other = _unrelated(dataset, j)
                if other is not None:
                    found = best_support(scorer, meaning, sentence_of(other), None)
                    unrelated.append(found[1] if found else 0.0)
                    weak["unrelated"].append(found[2] if found else True)
                if (j + 1) % 100 == 0 or j + 1 == n:
                    say(f"{j + 1}/{n} questions")
        finally:
            store.close()
    unambiguous = sum(q.unambiguous for q in dataset.questions)
    return SupportReport(
        questions=n,
        annotated=dataset.annotated,
        accuracy_at_1=round(right / n, 4),
        flag_rate_supported=round(_share(weak["supported"]), 4),
        flag_rate_unrelated=round(_share(weak["unrelated"]), 4) if unrelated else None,
        weak_score=WEAK_SCORE,
        skipped=dataset.skipped,
        unambiguous=unambiguous,
        accuracy_unambiguous=round(right_unambiguous / unambiguous, 4) if unambiguous else None,
        scores={"supported": supported, "unrelated": unrelated},
    )


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _unrelated(dataset: SupportSet, j: int) -> SupportQuestion | None:
    """A question half the set away whose context comes from another article."""
    n = len(dataset.questions)
    title = dataset.titles[dataset.questions[j].context]
    for step in range(n // 2, n // 2 + n):
        other = dataset.questions[(j + step) % n]
        if dataset.titles[other.context] != title:
            return other
    return None
