"""What the answer model is sent: the rules, the numbered passages, earlier turns, fitted to the
model's context; and the rewrite of a follow-up into a standalone search query."""

from __future__ import annotations

import re
from collections.abc import Sequence

from knownote.answer.cite import Answer, SourcePassage, strip_marks
from knownote.answer.ollama_chat import ANSWER_ROOM, OllamaChat, estimate_tokens, num_ctx_for
from knownote.answer.servers import AnswerServers
from knownote.errors import ModelError
from knownote.index.language import language_among, language_name, language_of

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

TRANSLATE_PROMPT = """\
Translate the user's question into {language} for a search of documents written in {language}. \
Keep names, numbers and technical terms. Reply with the translation alone: no explanation, no \
quotation marks."""
MAX_TRANSLATIONS = 3  # languages a question is translated into at most

HISTORY_TURNS = 3  # earlier turns shown to the model
HISTORY_CHARS = 1500  # of each earlier answer

Chat = OllamaChat | AnswerServers


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
            messages.append({"role": "assistant", "content": shorten(strip_marks(turn.text))})
    blocks = [f"{passage_header(p.n, p)}\n{p.text.strip()}" for p in passages]
    messages.append(
        {
            "role": "user",
            "content": "Passages:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}",
        }
    )
    return messages


def shorten(text: str, limit: int = HISTORY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def fit_prompt(
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


QUOTES = "\"'“”「」 "  # around a one-line reply (a query, a translation)


def first_line(reply: str) -> str:
    """The first line of a model's reply that holds anything, after its thinking."""
    lines = [line.strip() for line in without_thinking(reply).splitlines() if line.strip()]
    return lines[0] if lines else ""


def without_thinking(text: str) -> str:
    text = re.sub(r"<think>.*?</think>\s*", "", text, flags=re.DOTALL)
    return re.sub(r"<think>.*", "", text, flags=re.DOTALL).strip()


def standalone_query(
    question: str, history: Sequence[Answer], llm: Chat | None, model: str | None
) -> str:
    """The search query for a follow-up: rewritten by the model from the earlier turns (the
    question itself when that fails), or, without a model, the previous question and the
    follow-up together."""
    return rewrite_query(question, history, llm, model)[0]


def rewrite_query(
    question: str, history: Sequence[Answer], llm: Chat | None, model: str | None
) -> tuple[str, ModelError | None]:
    """standalone_query, plus the model's failure when it could not answer."""
    earlier = [turn for turn in history if turn.question][-HISTORY_TURNS:]
    if not earlier:
        return question, None
    if llm is None or not model:
        return f"{earlier[-1].question} {question}", None
    turns = "\n\n".join(
        f"Q: {turn.question}\nA: {shorten(strip_marks(turn.text), 400)}" for turn in earlier
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
    query = re.sub(r"^(standalone )?query:\s*", "", first_line(reply), flags=re.I).strip(QUOTES)
    return (query if 0 < len(query) <= 400 else question), None


def translate_question(
    question: str, languages: Sequence[str], llm: Chat, model: str
) -> tuple[list[str], ModelError | None]:
    """The question translated by the model into each of `languages` (codes: "en"), in order;
    replies that are no translation are left out (`translation_in`). Returns the translations
    made before any failure, and the failure."""
    translations: list[str] = []
    for code in languages[:MAX_TRANSLATIONS]:
        language = language_name(code)
        messages = [
            {"role": "system", "content": TRANSLATE_PROMPT.format(language=language)},
            {"role": "user", "content": question},
        ]
        try:
            reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=256))
        except ModelError as e:
            return translations, e
        if (text := translation_in(reply, question, code)) is not None:
            translations.append(text)
    return translations, None


def translation_in(reply: str, question: str, code: str) -> str | None:
    """The translation of `question` into language `code` that a model's reply holds, or None.

    A small model rarely translates: it restates or answers the question in its own language, or
    answers, explains or makes something up in the language asked for. Searched beside the
    question, those replies rank its passages lower (benchmarks/translations.py), so a reply is
    kept only when it reads more like `code` than the question's language (`in_language`) and
    has the shape of a translation of it (`shaped_like`)."""
    text = in_language(reply, question, code)
    return text if text is not None and shaped_like(text, question) else None


def in_language(reply: str, question: str, code: str) -> str | None:
    """The first line of the reply, unless it is empty, too long, the question itself, or
    reads more like the question's language than `code`."""
    text = first_line(reply).strip(QUOTES)
    if not 0 < len(text) <= 400 or " ".join(text.split()) == " ".join(question.split()):
        return None
    asked = language_of(question)
    if asked is not None and asked != code and language_among(text, (code, asked)) != code:
        return None
    return text


QUESTION_MARKS = ("?", "？", "؟")
_NUMBER = re.compile(r"\d+")
_LABELLED = re.compile(r"^[^\W\d][\w ]{0,30}:\s*[\"'“„«「]")  # 'English: "…', 'In English: "…'
_SENTENCE_END = re.compile(r"[.!?](?:[\"'”»)]*)\s+\S|[。！？](?=\S)")


def shaped_like(text: str, question: str) -> bool:
    """Whether `text` can be a translation of `question`: a question still (it ends with a
    question mark when the question does), no more sentences than the question (not an answer
    followed by a question of its own), every number of the question kept, and the question not
    quoted inside it (a reply that talks about the question), nor put after a label ('English:
    "…': the 135M model's label comes before something else than the question). Human
    translations of XQuAD's questions pass 97-99% of the time; most of the rest are English
    originals typed without their question mark."""
    asked = question.strip().rstrip(QUOTES)
    if _LABELLED.match(text) and not _LABELLED.match(asked):
        return False
    if asked.endswith(QUESTION_MARKS) and not text.rstrip(QUOTES).endswith(QUESTION_MARKS):
        return False
    if len(_SENTENCE_END.findall(text.strip())) > len(_SENTENCE_END.findall(asked)):
        return False
    if not set(_NUMBER.findall(asked)) <= set(_NUMBER.findall(text)):
        return False
    return " ".join(asked.split()).casefold() not in " ".join(text.split()).casefold()


# Reports a model writes (knownote.study.report_writer): it is asked for the questions a report
# raises, then for each part of the report from numbered passages; then, for a timeline, labels.
REPORT_QUESTIONS_PROMPT = """\
You plan {what} from numbered passages of a notebook's sources.
Write {n} questions that it should answer and that the passages can answer.{focus}
Reply with the questions alone, one per line, each ending with a question mark. Write them in \
{language}."""

REPORT_PART_PROMPT = """\
You write part of {what} using only the numbered passages from a notebook's sources.

Rules:
- Use only what the passages say. Do not add facts from elsewhere.
- After each sentence put the number of the passage it draws on in square brackets, like [2]. \
When a sentence draws on several passages, cite every one of them, like [1][3].
- Cite only the numbers of the passages given.
- Write in {language}.{focus}

{task}"""

REPORT_TASKS = {
    "summary": "Write a summary of the sources in three to five sentences, as one paragraph.",
    "points": 'List the four to six most important points, one per line starting with "- ", '
    "each point one sentence.",
    "terms": "List five key terms of the sources with what the passages say they mean, one per "
    "line in this form:\n- term: a one-sentence definition [2]",
    "answer": "Answer the question in two or three sentences.",
    "short": "Answer the question in one or two sentences.",
    "custom": "Write what the user asks for: {instructions}\nWrite short paragraphs; start a "
    'heading\'s line with "# " and a list item\'s with "- " where they help.',
}

REPORT_ESSAY_PROMPT = """\
You write essay questions for a study guide from numbered passages of a notebook's sources.
Write {n} essay questions that ask a student to discuss the passages' main ideas at length.\
{focus}
Reply with the questions alone, one per line. Write them in {language}."""

TIMELINE_LABEL_PROMPT = """\
You label the entries of a timeline. Each entry is a date and a sentence quoted from a source.
For each entry write a label of a few words (at most ten) that says what happened, in the \
language of its sentence. Reply with one line per entry and nothing else, in this form:
1: a label
2: a label"""

# Audio overviews a model writes (knownote.study.audio_script): it is asked for the points the
# conversation covers (REPORT_QUESTIONS_PROMPT), then for each part from numbered passages.
AUDIO_WHAT = {
    "deep-dive": "a podcast conversation of two hosts about a notebook's sources",
    "brief": "a short spoken brief, by one host, of the main points of a notebook's sources",
    "debate": "a spoken debate of two hosts about a notebook's sources",
}

AUDIO_PART_PROMPT = """\
You write part of {what}, using only the numbered passages from the sources.

Rules:
- {hosts}
- Use only what the passages say. Do not add facts from elsewhere.
- After each sentence put the number of the passage it draws on in square brackets, like [2].
- Cite only the numbers of the passages given.
- Write in {language}, about {size}.{focus}
- Write one line per turn, in this form:
{form}

{task}"""

AUDIO_HOSTS = {
    "deep-dive": "Two hosts talk the sources through: one explains, the other asks and adds.",
    "brief": "One host says the main points, plainly.",
    "debate": "Two hosts take different readings of the sources, and back each claim with a "
    "passage.",
}
AUDIO_FORMS = {
    1: "HOST 1: what the host says [1]",
    2: "HOST 1: what the first host says [1]\nHOST 2: what the second host says [2]",
}
AUDIO_TASKS = {
    "first": "Open the {kind}, then talk about: {point}",
    "middle": "Go on to: {point}",
    "last": "Talk about: {point}\nThen close the {kind}.",
    "only": "Open the {kind}, talk about: {point}\nThen close it.",
}
AUDIO_FOCUS = "\n- Dwell on what the listener asks for: {focus}"
AUDIO_MAIN_POINTS = "the main points of the passages"
