"""Answer a question from a notebook: retrieve, prompt the model or quote the sources, save.

The passages put in front of the model are numbered [1]..[k]; the model marks each sentence with
the numbers it used, and those marks are parsed back into citations (knownote.cite). Without a
model, the answer is built from the passages themselves: their sentences most relevant to the
question, each followed by its [n], and labelled as quotations.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from knownote import chats
from knownote.cite import (
    Answer,
    SourcePassage,
    normalize_marks,
    parse_citations,
    sources_from_hits,
    strip_marks,
)
from knownote.embed import Embedder
from knownote.errors import EmbeddingUnavailable, KnowNoteError, ModelError, StreamInterrupted
from knownote.followup import queries_for, search_queries
from knownote.llm import ANSWER_ROOM, EXAMPLE_MODEL, OllamaChat, estimate_tokens, num_ctx_for
from knownote.repetition import RepetitionCut
from knownote.retrieve import Hit
from knownote.servers import AnswerServers
from knownote.settings import Settings
from knownote.store import Store
from knownote.support import support_spans
from knownote.tokenize import tokenize

__all__ = ["Answer", "SourcePassage", "ask", "extractive_answer", "parse_citations"]

SYSTEM_PROMPT = """\
You answer questions using only the numbered passages from the user's documents that come with \
each question.

Rules:
- Use only what the passages say. Do not add facts from elsewhere.
- After each sentence that uses a passage, put the passage's number in square brackets, like \
[2]. When a sentence draws on several passages, cite every one of them, like [1][3].
- Cite only the numbers of the passages given.
- If the passages do not contain the answer, say so plainly instead of guessing.
- Answer in the language of the question.
- Be concise and direct."""

REWRITE_PROMPT = """\
Rewrite the user's follow-up question as one standalone search query for their documents. Use \
the earlier turns only to make clear what the follow-up refers to (names, pronouns, the \
subject left out). Keep the language of the follow-up. Reply with the query alone: no \
explanation, no quotation marks."""

NOT_CONNECTED = (
    "Not connected to a model (no Ollama server at {host}): these are sentences quoted from "
    "your sources, not a written answer. For written answers start Ollama (`ollama serve`, "
    f"then `ollama pull {EXAMPLE_MODEL}`) and choose a model."
)
NO_MODEL = (
    "No answer model chosen: these are sentences quoted from your sources, not a written "
    f"answer. Install a model (`ollama pull {EXAMPLE_MODEL}`) and choose it for written answers."
)
QUOTED_INSTEAD = "Meanwhile, these are sentences quoted from your sources, not a written answer."
NO_PASSAGES = (
    "Nothing in this notebook matches the question: it has no enabled documents with text in "
    "the chosen scope. Import documents, enable them or widen the scope, then ask again."
)
NO_CITATIONS = "The model cited none of the passages; the passages it was given are listed."
LEFT_OUT = (
    "{dropped} of the {total} passages found were left out to fit the model's context of "
    "{limit:,} tokens."
)
REPEATED = "The model began repeating itself; the answer was cut there."

HISTORY_TURNS = 3  # earlier turns shown to the model
HISTORY_CHARS = 1500  # of each earlier answer
MAX_SENTENCES = 5
MIN_SENTENCES = 3
MAX_QUOTE_CHARS = 1500
MAX_CANDIDATES = 60  # sentences embedded per extractive answer
KEYWORD_WEIGHT = 0.3  # keyword overlap (0..1) added to the cosine similarity
RANK_PENALTY = 0.02  # per place a passage is below the top one

TokenCallback = Callable[[str], None]
Chat = OllamaChat | AnswerServers


# --- prompts --------------------------------------------------------------------------------


def passage_header(n: int, p: SourcePassage) -> str:
    where = f", {p.pages}" if p.pages else ""
    return f"[{n}] {p.title}{where}"


def build_messages(
    question: str, passages: Sequence[SourcePassage], history: Sequence[Answer] = ()
) -> list[dict]:
    """The chat sent to the model: rules, earlier turns without their marks, then the passages
    and the question."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in history:
        if turn.text:
            messages.append({"role": "user", "content": turn.question})
            messages.append({"role": "assistant", "content": _shorten(strip_marks(turn.text))})
    blocks = [f"{passage_header(p.n, p)}\n{p.text.strip()}" for p in passages]
    messages.append(
        {
            "role": "user",
            "content": "Passages:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}",
        }
    )
    return messages


def _shorten(text: str, limit: int = HISTORY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fit(
    llm: Chat,
    model: str,
    question: str,
    passages: list[SourcePassage],
    history: list[Answer],
) -> tuple[list[dict], list[SourcePassage], int]:
    """Messages, the passages kept and num_ctx, so the prompt fits the model's context: earlier
    turns go first, then the lowest-ranked passages. Nothing is cut silently by the server."""
    limit = llm.context_length(model)
    room, estimate = ANSWER_ROOM, estimate_tokens
    if isinstance(llm, AnswerServers):
        room, estimate = llm.room(model), llm.estimator(model)
    while True:
        messages = build_messages(question, passages, history)
        need = num_ctx_for(messages, answer_tokens=room, estimate=estimate)
        if limit is None or need <= limit or (not history and len(passages) <= 1):
            return messages, passages, min(need, limit) if limit else need
        if history:
            history = history[1:]
        else:
            passages = passages[:-1]


def _without_thinking(text: str) -> str:
    text = re.sub(r"<think>.*?</think>\s*", "", text, flags=re.DOTALL)
    return re.sub(r"<think>.*", "", text, flags=re.DOTALL).strip()


def standalone_query(
    question: str, history: Sequence[Answer], llm: Chat | None, model: str | None
) -> str:
    """The search query for a follow-up: rewritten by the model from the earlier turns (the
    question itself when that fails), or, without a model, the previous question and the
    follow-up together."""
    return _rewrite(question, history, llm, model)[0]


def _rewrite(
    question: str, history: Sequence[Answer], llm: Chat | None, model: str | None
) -> tuple[str, ModelError | None]:
    """standalone_query, plus the model's failure when it could not answer."""
    earlier = [turn for turn in history if turn.question][-HISTORY_TURNS:]
    if not earlier:
        return question, None
    if llm is None or not model:
        return f"{earlier[-1].question} {question}", None
    turns = "\n\n".join(
        f"Q: {turn.question}\nA: {_shorten(strip_marks(turn.text), 400)}" for turn in earlier
    )
    messages = [
        {"role": "system", "content": REWRITE_PROMPT},
        {
            "role": "user",
            "content": f"Earlier turns:\n{turns}\n\nFollow-up: {question}\n\nStandalone query:",
        },
    ]
    try:
        reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=256))
    except ModelError as e:
        return question, e
    lines = [line.strip() for line in _without_thinking(reply).splitlines() if line.strip()]
    query = re.sub(r"^(standalone )?query:\s*", "", lines[0], flags=re.I) if lines else ""
    query = query.strip("\"'“”「」 ")
    return (query if 0 < len(query) <= 400 else question), None


# --- the extractive answer ------------------------------------------------------------------

_ENDERS = ".!?…。！？｡．"
_CLOSERS = "\"'”’»)\\]}」』）》〉】〕"
# Where a sentence ends: ASCII punctuation before whitespace that is not followed by a lower-case
# letter ("e.g. the", "et al. (2003)" stay whole), full-width punctuation, a blank line, or a
# line that starts a list item.
_SENTENCE_END = re.compile(
    rf"[.!?…]+[{_CLOSERS}]*(?:\[[^\]\n]{{1,30}}\])*(?=\s++(?![a-z(]))"
    rf"|[。！？｡．]+[{_CLOSERS}]*"
    r"|\n[^\S\n]*\n"
    r"|\n(?=[^\S\n]*(?:[-*•·▪]|\d+[.)])\s)"
)
_CJK_CHAR = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_WHOLLY_QUOTED = re.compile(r"[\"“«「『].*[\"”»」』][.。]?$")
_BULLET = re.compile(r"^(?:[-*•·▪]|\d+[.)])\s+")


@dataclass(frozen=True)
class _Sentence:
    rank: int  # 0-based passage rank
    position: int  # start within the passage text
    text: str  # as shown
    cut_before: bool
    cut_after: bool
    penalty: float  # cut by a passage boundary, a question, a lead-in to a list


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence in `text`, whitespace trimmed."""
    spans = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if b - a - lead - trail > 0:
            out.append((a + lead, b - trail))
    return out


def _display(text: str) -> str:
    """A sentence as quoted: links shown as their text, citation-like marks removed, line
    wraps joined (a hyphen at a wrap before a lower-case letter is dropped)."""
    text = _MD_LINK.sub(r"\1", _MD_IMAGE.sub("", text))
    text = _BULLET.sub("", strip_marks(text).lstrip())
    text = re.sub(r"(?<=[a-z])-\n[^\S\n]*(?=[a-z])", "", text)
    text = re.sub(rf"(?<=[{_CJK_CHAR}])\s*\n\s*(?=[{_CJK_CHAR}])", "", text)
    return " ".join(text.split())


def _starts_sentence(text: str, document: str, offset: int) -> bool:
    """Whether `text`, found at `offset` of the document, begins a sentence: after a blank line,
    after a sentence end, or at a line start with a capital, digit, list mark or CJK character."""
    before = document[:offset].rstrip(" \t")
    if not before or re.search(r"\n[^\S\n]*\n$", before):
        return True
    if before.rstrip("\n").rstrip(_CLOSERS)[-1:] in set(_ENDERS):
        return True
    return before.endswith("\n") and bool(re.match(rf"[-*•·▪#\d\"“'‘(「『A-Z{_CJK_CHAR}]", text))


def _ends_sentence(text: str, document: str, offset: int) -> bool:
    """Whether `text`, ending at `offset` of the document, ends a sentence: with its punctuation,
    at a blank line, before a list item or at the end of the document."""
    if text.rstrip().rstrip(_CLOSERS)[-1:] in set(_ENDERS):
        return True
    after = document[offset:]
    return not after.strip() or bool(re.match(r"[^\S\n]*\n(?:[^\S\n]*\n|\s*[-*•·▪#])", after))


def _sentences(hits: Sequence[Hit], documents: dict[int, str]) -> list[_Sentence]:
    """Candidate sentences of the passages, best-ranked passages first, at most MAX_CANDIDATES."""
    found: list[_Sentence] = []
    for rank, hit in enumerate(hits):
        if len(found) >= MAX_CANDIDATES:
            break
        document = documents.get(hit.document_id, hit.text)
        base = hit.start if documents.get(hit.document_id) is not None else 0
        spans = sentence_spans(hit.text)
        for i, (a, b) in enumerate(spans):
            shown = _display(hit.text[a:b])
            words = tokenize(shown)
            last = shown.rstrip(_CLOSERS)[-1:]
            if len(words) < 4 or (last not in _ENDERS and len(words) < 8):
                continue  # headings, captions, stray numbers
            numeric = "".join("9" if w.isdigit() else "a" for w in words)
            if numeric.count("9") > 0.3 * len(words) or "9999" in numeric:
                continue  # table rows, figure axes
            cut_before = i == 0 and not _starts_sentence(hit.text[a:b], document, base + a)
            cut_after = i == len(spans) - 1 and not _ends_sentence(
                hit.text[a:b], document, base + b
            )
            penalty = (
                0.05 * (cut_before + cut_after)
                + 0.25 * (last in "?？:：")  # a question or a list's lead-in answers nothing
                + 0.15 * bool(_WHOLLY_QUOTED.match(shown))  # a title in a reference list
            )
            found.append(_Sentence(rank, a, shown, cut_before, cut_after, penalty))
    return found


def _overlap_scores(query: str, sentences: Sequence[_Sentence]) -> np.ndarray:
    """Share of the query's keywords in each sentence, each keyword weighted by how rare it is
    among the candidate sentences (so "the" or "的" count for little)."""
    terms = set(tokenize(query))
    if not terms:
        return np.zeros(len(sentences))
    bags = [set(tokenize(s.text)) for s in sentences]
    n = len(bags)
    weight = {t: math.log(1 + n / (1 + sum(t in bag for bag in bags))) for t in terms}
    total = sum(weight.values())
    return np.array([sum(weight[t] for t in terms & bag) / total for bag in bags])


def _near_duplicate(a: str, b: str) -> bool:
    x, y = " ".join(tokenize(a)), " ".join(tokenize(b))
    if x in y or y in x:
        return True
    sa, sb = set(x.split()), set(y.split())
    return len(sa & sb) / max(1, len(sa | sb)) >= 0.6


def _choose(sentences: list[_Sentence], scores: np.ndarray) -> list[_Sentence]:
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].rank))
    chosen: list[int] = []
    best = scores[order[0]]
    size = 0
    for i in order:
        if len(chosen) >= MAX_SENTENCES or (chosen and size > MAX_QUOTE_CHARS):
            break
        if scores[i] < best - (0.35 if len(chosen) < MIN_SENTENCES else 0.15):
            break
        if any(_near_duplicate(sentences[i].text, sentences[j].text) for j in chosen):
            continue
        chosen.append(i)
        size += len(sentences[i].text)
    return [sentences[i] for i in chosen]


def extractive_answer(
    embedder: Embedder, query: str, hits: Sequence[Hit], documents: dict[int, str] | None = None
) -> tuple[str, set[int]]:
    """Quote the sentences of `hits` most relevant to `query`, each followed by its [n].

    Sentences are scored by embedding similarity to the query plus keyword overlap, with a small
    preference for higher-ranked passages; 3 to 5 are kept (no near-duplicates from overlapping
    passages) and shown in passage order, then in reading order. `documents` (id -> text) lets
    the quote mark sentences cut by a passage boundary with "…".

    Returns:
        The text and the set of passage numbers it cites.
    """
    if not hits:
        return "", set()
    candidates = _sentences(hits, documents or {})
    if not candidates:
        first = _display(hits[0].text)
        short = first if len(first) <= 300 else first[:299].rstrip() + "…"
        return f"{short} [1]", {1}
    try:
        vectors = embedder.embed_passages([s.text for s in candidates])
        similarity = vectors @ embedder.embed_query(query)
    except EmbeddingUnavailable:  # the notebook's embedding server is down: keywords alone
        similarity = np.zeros(len(candidates))
    penalty = np.array([RANK_PENALTY * s.rank + s.penalty for s in candidates])
    scores = similarity + KEYWORD_WEIGHT * _overlap_scores(query, candidates) - penalty
    chosen = sorted(_choose(candidates, scores), key=lambda s: (s.rank, s.position))
    paragraphs: list[list[str]] = []
    last_rank = None
    for s in chosen:
        quote = ("…" if s.cut_before else "") + s.text + ("…" if s.cut_after else "")
        if s.rank != last_rank:
            paragraphs.append([])
            last_rank = s.rank
        paragraphs[-1].append(f"{quote} [{s.rank + 1}]")
    text = "\n\n".join(" ".join(p) for p in paragraphs)
    return text, {s.rank + 1 for s in chosen}


# --- asking ---------------------------------------------------------------------------------


def _mark_cited(passages: Sequence[SourcePassage], cited: set[int]) -> tuple[SourcePassage, ...]:
    return tuple(replace(p, cited=p.n in cited) for p in passages)


def _document_texts(store: Store, hits: Sequence[Hit]) -> dict[int, str]:
    texts = {}
    for document_id in {h.document_id for h in hits}:
        with contextlib.suppress(KnowNoteError):
            texts[document_id] = store.document_text(document_id)
    return texts


def ask(
    store: Store,
    embedder: Embedder,
    notebook_id: int,
    question: str,
    *,
    llm: Chat | None,
    model: str | None,
    settings: Settings,
    k: int = 8,
    mode: str = "hybrid",
    document_ids: Sequence[int] | None = None,
    chat_id: int | None = None,
    on_token: TokenCallback | None = None,
) -> Answer:
    """Answer a question from a notebook's passages and save the turn in a chat.

    Args:
        store: the open database.
        embedder: the notebook's embedding model.
        notebook_id: the notebook to answer from.
        question: the user's question.
        llm: the answer servers (or one Ollama client), or None for an extractive answer.
        model: the model to use, `openai:NAME` on the OpenAI-compatible server (None:
            extractive answer).
        settings: the settings (the Ollama address named when no model is connected).
        k: how many passages to retrieve and put in front of the model.
        mode: the search mode ("hybrid", "vector" or "keyword").
        document_ids: limit the search to these documents.
        chat_id: continue this chat (a follow-up); None starts a new chat.
        on_token: called with each piece of the answer as it arrives.

    Returns:
        The Answer with its passages, saved in the chat; `chat_id` and `message_id` are set.
        If the model fails before it says anything, the answer is extractive and `notice` says
        why; if it fails midway, the partial text is kept with `incomplete=True`. A follow-up
        searches the question and the model's rewrite of it; `searched` lists both.
    """
    question = question.strip()
    if not question:
        raise KnowNoteError("Type a question first.")
    store.notebook(notebook_id)
    history: list[Answer] = []
    if chat_id is not None:
        chat = chats.get_chat(store, chat_id)
        if chat.notebook_id != notebook_id:
            raise KnowNoteError(f"Chat {chat_id} belongs to another notebook.")
        history = chats.load_chat(store, chat_id)
    query, failure = _rewrite(question, history, llm if model else None, model)
    if failure is not None:  # the model cannot answer now either: search as without one
        query = standalone_query(question, history, None, None)
    earlier = [t for turn in history[-HISTORY_TURNS:] for t in (turn.question, turn.text)]
    found = search_queries(
        store,
        embedder,
        notebook_id,
        queries_for(question, query, earlier),
        k=k,
        mode=mode,
        document_ids=document_ids,
    )
    hits = found.hits
    # The question is saved before the answer starts, so a crash mid-answer keeps it.
    chat_id, _ = chats.add_question(store, notebook_id, chat_id, question)
    record = Turn(store, chat_id, question, on_token, found.queries, found.note)
    if not hits:
        return record.save(NO_PASSAGES, (), model=None, extractive=False, notice=None)
    passages = sources_from_hits(hits)
    hosts = settings.ollama_host
    if settings.openai_base_url:
        hosts += f", no OpenAI-compatible server at {settings.openai_base_url}"
    notice = NOT_CONNECTED.format(host=hosts) if llm is None else NO_MODEL
    if failure is not None:
        notice = f"{failure} {QUOTED_INSTEAD}"
    elif llm is not None and model:
        try:
            return _written(record, llm, model, question, passages, history[-HISTORY_TURNS:])
        except ModelError as e:  # failed before saying anything: quote the sources instead
            notice = f"{e} {QUOTED_INSTEAD}"
    text, cited = extractive_answer(embedder, found.queries[-1], hits, _document_texts(store, hits))
    answer = record.save(
        text, _mark_cited(passages, cited), model=None, extractive=True, notice=notice
    )
    if on_token:
        on_token(answer.text)
    return answer


def _written(
    record: Turn,
    llm: Chat,
    model: str,
    question: str,
    passages: list[SourcePassage],
    history: list[Answer],
) -> Answer:
    found = len(passages)
    messages, passages, num_ctx = _fit(llm, model, question, passages, history)
    left_out = None
    if len(passages) < found:
        left_out = LEFT_OUT.format(dropped=found - len(passages), total=found, limit=num_ctx)
    received: list[str] = []
    cut = RepetitionCut()
    stream = llm.stream(model, messages, num_ctx)
    try:
        for piece in stream:
            received.append(piece)
            if record.on_token:
                record.on_token(piece)
            if cut.repeated("".join(received)):
                text = cut.text
                return record.save_model_text(text, passages, model, False, REPEATED, left_out)
    except StreamInterrupted as e:
        notice = f"{e} What arrived is kept and marked incomplete."
        return record.save_model_text("".join(received), passages, model, True, notice, left_out)
    except ModelError:
        if received:  # cannot happen by llm's rule; kept so no text is ever lost
            return record.save_model_text("".join(received), passages, model, True, None)
        raise
    except BaseException:
        # Stopped from outside (Ctrl-C, the app's rerun): keep what arrived, then stop.
        if received:
            record.save_model_text("".join(received), passages, model, True, None)
        raise
    finally:
        stream.close()
    return record.save_model_text("".join(received), passages, model, False, None, left_out)


@dataclass(frozen=True)
class Turn:
    """Saves the answer to one question; the question itself is already saved."""

    store: Store
    chat_id: int
    question: str
    on_token: TokenCallback | None
    searched: tuple[str, ...] = ()
    search_note: str | None = None  # the search fell back to keywords

    def save_model_text(
        self,
        raw: str,
        passages: Sequence[SourcePassage],
        model: str,
        incomplete: bool,
        notice: str | None,
        left_out: str | None = None,
    ) -> Answer:
        raw = _without_thinking(raw)
        _, cited, _ = normalize_marks(raw, len(passages))
        if not cited and raw and not incomplete:
            notice = " ".join(n for n in (NO_CITATIONS, notice) if n)
        if left_out:
            notice = " ".join(n for n in (notice, left_out) if n)
        return self.save(
            raw,
            _mark_cited(passages, set(cited)),
            model=model,
            extractive=False,
            notice=notice,
            incomplete=incomplete,
        )

    def save(
        self,
        raw: str,
        passages: Sequence[SourcePassage],
        *,
        model: str | None,
        extractive: bool,
        notice: str | None,
        incomplete: bool = False,
    ) -> Answer:
        text, _, dropped = normalize_marks(raw, len(passages))
        supports = support_spans(text, passages)
        message_id = chats.add_answer(
            self.store,
            self.chat_id,
            raw,
            model=model,
            extractive=extractive,
            incomplete=incomplete,
            passages=passages,
            supports=supports,
            notice=notice,
            searched=self.searched[1] if len(self.searched) > 1 else None,
        )
        if self.search_note:
            notice = " ".join(n for n in (self.search_note, notice) if n)
        return Answer(
            question=self.question,
            text=text,
            model=model,
            extractive=extractive,
            incomplete=incomplete,
            passages=tuple(passages),
            chat_id=self.chat_id,
            message_id=message_id,
            dropped_marks=dropped,
            notice=notice,
            searched=self.searched,
            supports=supports,
        )
