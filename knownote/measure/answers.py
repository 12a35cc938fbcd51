"""Answer evaluation on SQuAD-format question sets: how well a model answers from the passages.

The contexts are imported like `knownote eval` does; every question is asked through the real
answer path (`knownote.answer.ask.ask`, a new chat each) with a model, or with none (`--quoted`, the
quoted-passages answer). Figures, over all questions:

- exact match and token F1 against the best gold answer, SQuAD-style (lower case, punctuation
  and English articles removed); CJK text is compared character by character
- contains: the answer contains a gold answer
- first quote holds the answer: a quoted answer's first sentence (up to its first [n]) contains a
  gold answer; what a reader sees first (quoted answers only)
- citation precision: cited passages that contain a gold answer; citation recall: questions
  whose gold passage (the one holding the first gold answer's span) is among the cited
- answers with no mark, answers with marks out of range, refusals ("the passages do not say"),
  incomplete answers, and answers quoted because the model failed
- time to first token and tokens per second (streamed pieces per second after the first;
  llama.cpp and Ollama send one token a piece), medians
"""

from __future__ import annotations

import re
import statistics
import string
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from knownote.answer.ask import ask
from knownote.answer.cite import MARK, Answer, strip_marks
from knownote.answer.quotes import LANGUAGE_MARK
from knownote.answer.servers import AnswerServers
from knownote.index.embed import Embedder
from knownote.measure.retrieval import Dataset, Question, import_text
from knownote.settings import Settings
from knownote.store.db import Store

Progress = Callable[[str], None]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_]+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation) | set("，。、；：？！「」『』（）《》〈〉【】“”‘’·…—")
# Ways a model says that the passages do not hold the answer.
REFUSAL = re.compile(
    r"(do(es)? not (say|mention|contain|provide|state)|don't|doesn't|cannot|can't|unable to|"
    r"not able to|no information|not (found|mentioned|given|stated|specified)|"
    r"passages? (do|does) not)"
    r"|没有(提到|提及|说明|信息)|未(提及|提到)|无法(回答|确定)|不清楚"
    r"|記載(されて)?(い)?ません|分かりません|わかりません",
    re.IGNORECASE,
)


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", strip_marks(text)).casefold()
    text = "".join(" " if c in _PUNCT else c for c in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    """Words, and CJK characters one by one."""
    return _TOKEN.findall(normalize(text))


def exact_match(answer: str, golds: tuple[str, ...]) -> float:
    said = normalize(answer)
    return float(any(said == normalize(g) for g in golds))


def token_f1(answer: str, golds: tuple[str, ...]) -> float:
    said = tokens(answer)
    best = 0.0
    for gold in golds:
        want = tokens(gold)
        common = sum((Counter(said) & Counter(want)).values())
        if common:
            precision, recall = common / len(said), common / len(want)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains(answer: str, golds: tuple[str, ...]) -> bool:
    said = normalize(answer)
    return any(normalize(g) and normalize(g) in said for g in golds)


def first_quote(text: str) -> str:
    """The first quoted sentence of a quoted answer: its text up to its first [n] mark, without
    the name of its language ("(English) ") before it."""
    mark = MARK.search(text)
    return LANGUAGE_MARK.sub("", text[: mark.start()] if mark else text, count=1)


@dataclass(frozen=True)
class Scored:
    em: float
    f1: float
    contains: bool
    first_quote: bool | None  # None: not a quoted answer
    cited: int
    cited_with_gold: int
    gold_cited: bool
    gold_shown: bool
    no_mark: bool
    out_of_range: bool
    refusal: bool
    incomplete: bool
    model_failed: bool  # a model was asked and the answer is quoted instead (see its notice)
    first_token: float | None
    tokens_per_second: float | None


def score(
    answer: Answer,
    question: Question,
    gold_document: int,
    timing: dict[str, float],
    quoted: bool = False,
) -> Scored:
    golds = question.answers or ()
    cited = answer.citations

    def holds_gold(text: str) -> bool:
        return any(g in text for g in golds)

    def is_gold(p) -> bool:
        return p.document_id == gold_document and p.start < question.end and question.start < p.end

    pieces = timing.get("pieces", 0)
    rate = None
    if pieces > 1 and timing["last"] > timing["first"]:
        rate = (pieces - 1) / (timing["last"] - timing["first"])
    return Scored(
        em=exact_match(answer.text, golds),
        f1=token_f1(answer.text, golds),
        contains=contains(answer.text, golds),
        first_quote=contains(first_quote(answer.text), golds) if answer.extractive else None,
        cited=len(cited),
        cited_with_gold=sum(holds_gold(p.text) for p in cited),
        gold_cited=any(is_gold(p) for p in cited),
        gold_shown=any(is_gold(p) for p in answer.passages),
        no_mark=bool(answer.text) and not cited and not answer.dropped_marks,
        out_of_range=answer.dropped_marks > 0,
        refusal=bool(REFUSAL.search(answer.text)),
        incomplete=answer.incomplete,
        model_failed=answer.extractive and answer.notice is not None and not quoted,
        first_token=timing["first"] - timing["start"] if "first" in timing else None,
        tokens_per_second=rate,
    )


@dataclass(frozen=True)
class AnswerReport:
    model: str  # "quoted" for the no-model path
    questions: int
    figures: dict[str, float | None]
    skipped: int = 0
    k: int = 8
    examples: list[dict[str, object]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "questions": self.questions,
            "skipped": self.skipped,
            "k": self.k,
            "figures": self.figures,
            "examples": self.examples,
        }


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.median(kept), 3) if kept else None


def summarize(scored: list[Scored]) -> dict[str, float | None]:
    n = len(scored) or 1
    cited = sum(s.cited for s in scored)
    quoted = [s.first_quote for s in scored if s.first_quote is not None]
    return {
        "exact_match": round(sum(s.em for s in scored) / n, 4),
        "f1": round(sum(s.f1 for s in scored) / n, 4),
        "contains_gold": _share([s.contains for s in scored]),
        "first_quote_holds": _share(quoted) if quoted else None,
        "citation_precision": round(sum(s.cited_with_gold for s in scored) / cited, 4)
        if cited
        else None,
        "citation_recall": _share([s.gold_cited for s in scored]),
        "gold_passage_shown": _share([s.gold_shown for s in scored]),
        "no_mark": _share([s.no_mark for s in scored]),
        "marks_out_of_range": _share([s.out_of_range for s in scored]),
        "refusals": _share([s.refusal for s in scored]),
        "incomplete": _share([s.incomplete for s in scored]),
        "model_failed": _share([s.model_failed for s in scored]),
        "first_token_s": _median([s.first_token for s in scored]),
        "tokens_per_s": _median([s.tokens_per_second for s in scored]),
    }


def evaluate_answers(
    dataset: Dataset,
    embedder: Embedder,
    settings: Settings,
    *,
    llm: AnswerServers | None,
    model: str | None,
    k: int = 8,
    progress: Progress | None = None,
    examples: int = 3,
) -> AnswerReport:
    """Import the contexts into a scratch database, ask every question, score the answers."""
    say = progress or (lambda _: None)
    with tempfile.TemporaryDirectory(prefix="knownote-eval-answers-") as folder:
        store = Store.open(Path(folder) / "eval.duckdb")
        try:
            notebook = store.create_notebook("eval", embedder.name, embedder.dim)
            document_ids: list[int] = []
            seen: dict[str, int] = {}
            for context in dataset.contexts:
                if context.text not in seen:
                    seen[context.text] = import_text(
                        store, notebook.id, embedder, context.title, context.text,
                        settings.passage_size, settings.passage_overlap,
                    )  # fmt: skip
                document_ids.append(seen[context.text])
            say(f"imported {len(seen)} contexts")
            scored: list[Scored] = []
            shown: list[dict[str, object]] = []
            for j, question in enumerate(dataset.questions):
                timing: dict[str, float] = {"start": time.monotonic(), "pieces": 0}

                def on_token(piece: str, timing: dict[str, float] = timing) -> None:
                    now = time.monotonic()
                    timing.setdefault("first", now)
                    timing["last"] = now
                    timing["pieces"] += 1

                answer = ask(
                    store, embedder, notebook.id, question.text, llm=llm if model else None,
                    model=model, settings=settings, k=k, on_token=on_token,
                )  # fmt: skip
                gold = document_ids[question.context]
                scored.append(score(answer, question, gold, timing, quoted=not model))
                if len(shown) < examples:
                    shown.append(
                        {
                            "question": question.text,
                            "gold": list(question.answers),
                            "answer": answer.text,
                            "notice": answer.notice,
                        }
                    )
                if (j + 1) % 10 == 0 or j + 1 == len(dataset.questions):
                    say(f"answered {j + 1}/{len(dataset.questions)} questions")
            return AnswerReport(
                model or "quoted",
                len(scored),
                summarize(scored),
                dataset.skipped,
                k,
                shown,
            )
        finally:
            store.close()
