"""Quoted answers lead with the answer, within one language and across languages (real corpus
questions, the real small models)."""

import re

import pytest

from knownote.answer.ask import ask
from knownote.answer.cite import MARK, parse_citations
from knownote.answer.quotes import extractive_answer
from knownote.index.embedders import get_embedder
from knownote.index.language import language_of
from knownote.measure.answers import contains, first_quote
from knownote.measure.retrieval import Dataset, import_text, load_squad
from knownote.read.roles import RoleRange, Roles
from knownote.search.retrieve import Hit, search
from knownote.settings import MULTILINGUAL, Settings
from knownote.store.db import Store
from tests.conftest import corpus_file

QUOTE = re.compile(r"(?:\((\w+)\) )?(.+?) \[(\d+)\]\s*")


def quotes(text: str) -> list[tuple[str | None, str, int]]:
    """(language marker or None, sentence, n) of each quote of an answer."""
    return [
        (m.group(1), m.group(2), int(m.group(3)))
        for paragraph in text.split("\n\n")
        for m in QUOTE.finditer(paragraph)
    ]


def notebook_of(store: Store, embedder, dataset: Dataset, settings: Settings) -> tuple[int, list]:
    notebook = store.create_notebook("Corpus", embedder.name, embedder.dim)
    ids = [
        import_text(store, notebook.id, embedder, c.title, c.text, settings.passage_size,
                    settings.passage_overlap)
        for c in dataset.contexts
    ]  # fmt: skip
    return notebook.id, ids


def first_quote_share(store, embedder, settings, dataset: Dataset) -> float:
    notebook_id, _ = notebook_of(store, embedder, dataset, settings)
    held = []
    for question in dataset.questions:
        answer = ask(store, embedder, notebook_id, question.text, llm=None, model=None,
                     settings=settings, quoted=True)  # fmt: skip
        held.append(contains(first_quote(answer.text), question.answers))
    return sum(held) / len(held)


# --- within one language ----------------------------------------------------------------------


def test_the_first_quote_holds_the_answer_to_most_english_questions(store, embedder, settings):
    # Questions 31-60 of xquad.en with the test model: in passage order the first quote held the
    # answer for 0.60 of them; the best sentence first, for 0.77.
    dataset = load_squad(corpus_file("qa_en/xquad.en.json"), 30, skip=30)
    assert first_quote_share(store, embedder, settings, dataset) >= 0.7


def test_the_first_quote_holds_the_answer_to_most_chinese_questions(store, settings):
    # cmrc2018 questions 1-20 with the multilingual model: 0.45 in passage order, 0.90 now.
    e5 = get_embedder(MULTILINGUAL)
    dataset = load_squad(corpus_file("qa_zh/cmrc2018_dev.json"), 20)
    assert first_quote_share(store, e5, settings, dataset) >= 0.65


def test_after_the_lead_each_passage_keeps_reading_order(store, embedder, settings):
    dataset = load_squad(corpus_file("qa_en/xquad.en.json"), 10)
    notebook_id, _ = notebook_of(store, embedder, dataset, settings)
    for question in dataset.questions:
        hits = search(store, embedder, notebook_id, question.text, k=8)
        text, cited = extractive_answer(embedder, question.text, hits)
        paragraphs = [quotes(p) for p in text.split("\n\n")]
        numbers = [{n for _, _, n in p} for p in paragraphs]
        assert all(len(n) == 1 for n in numbers), text  # a paragraph per passage
        assert len({min(n) for n in numbers}) == len(paragraphs) and cited == set().union(*numbers)
        for k, paragraph in enumerate(paragraphs):
            passage = hits[paragraph[0][2] - 1].text
            places = [passage.index(s.strip("…")[:30]) for _, s, _ in paragraph]
            # The lead comes first; everything else in the order it is read.
            assert places[1 if k == 0 else 0 :] == sorted(places[1 if k == 0 else 0 :]), text


# --- across languages --------------------------------------------------------------------------

MIXED = "qa_mixed/xquad.de-q.en-ctx.mixed.json"


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory):
    """A notebook of the English paragraphs where 12 German questions find their answers, beside
    German and English articles that hold no question; the multilingual model."""
    e5 = get_embedder(MULTILINGUAL)
    settings = Settings().with_(home=tmp_path_factory.mktemp("two-languages"))
    store = Store.open(settings.db_path)
    dataset = load_squad(corpus_file(MIXED), 12)
    asked = {q.context for q in dataset.questions}
    rest = [c for i, c in enumerate(dataset.contexts) if i not in asked]
    german = [c for c in rest if language_of(c.text[:400]) == "de"][:12]
    english = [c for c in rest if language_of(c.text[:400]) == "en"][:6]
    notebook = store.create_notebook("Two languages", e5.name, e5.dim)
    answering = set()
    for i, c in enumerate(dataset.contexts):
        if i in asked or c in german or c in english:
            document_id = import_text(store, notebook.id, e5, c.title, c.text, 500, 50)
            if i in asked:
                answering.add(document_id)
    yield store, e5, settings, notebook.id, dataset, answering
    store.close()


def test_a_german_question_is_answered_first_from_the_english_source(two_languages):
    store, e5, settings, notebook_id, dataset, answering = two_languages
    held = 0
    for question in dataset.questions:
        answer = ask(store, e5, notebook_id, question.text, llm=None, model=None,
                     settings=settings, quoted=True)  # fmt: skip
        marker, sentence, n = quotes(answer.text)[0]
        by_n = {p.n: p for p in answer.passages}
        if contains(sentence, question.answers):
            held += 1
            assert by_n[n].document_id in answering
            assert marker == "English"  # a German question, an English source
    assert held >= 0.7 * len(dataset.questions)


def test_only_sentences_in_another_language_than_the_question_are_marked(two_languages):
    store, e5, _, notebook_id, dataset, _ = two_languages
    question = dataset.questions[0].text
    hits = search(store, e5, notebook_id, question, k=8)
    german = [h for h in hits if h.language == "de"]
    english = [h for h in hits if h.language == "en"]
    assert german and english
    mixed = [english[0], german[0]]
    text, _ = extractive_answer(e5, question, mixed)
    for marker, _, n in quotes(text):
        assert marker == ("English" if mixed[n - 1].language == "en" else None), text
    # Asked in English, the English sentences are not marked and the German ones are.
    text, _ = extractive_answer(e5, "Who won Super Bowl 50 and by what score?", mixed)
    for marker, _, n in quotes(text):
        assert marker == (None if mixed[n - 1].language == "en" else "German"), text


def test_the_language_marker_keeps_marks_and_support_spans_whole(two_languages):
    store, e5, settings, notebook_id, dataset, _ = two_languages
    question = dataset.questions[1]
    answer = ask(store, e5, notebook_id, question.text, llm=None, model=None,
                 settings=settings, quoted=True)  # fmt: skip
    assert "(English) " in answer.text
    found = quotes(answer.text)
    assert len(MARK.findall(answer.text)) == len(found)
    assert {c.n for c in answer.citations} == {n for _, _, n in found}
    assert parse_citations(answer.text, len(answer.passages)) == (  # the marks still resolve
        list(dict.fromkeys(n for _, _, n in found)),
        0,
    )
    by_n = {p.n: p for p in answer.passages}
    for support in answer.supports:
        if not support.weak:
            quoted = answer.text[support.sentence_start : support.sentence_end]
            assert "[" in quoted and not support.suggested, quoted
            assert by_n[support.n].start <= support.start < by_n[support.n].end


def test_a_hit_without_a_language_is_never_marked(embedder):
    sentence = "The Broncos defeated the Panthers by 24 to 10 in the game played at Santa Clara."
    hit = Hit(1, 1, "Note", 0, 0, len(sentence), None, None, 1.0, sentence)
    text, cited = extractive_answer(embedder, "Wer hat das Spiel gewonnen?", [hit])
    assert cited == {1} and not text.startswith("(")


TESLA = (
    "Tesla was renowned for his achievements and showmanship. Tesla died on 7 January 1943. "
    "His work fell into relative obscurity after his death."
)
WARSAW = (
    "华沙自古就是一座多元文化的城市。据1901年人口普查，华沙711,988名居民中56.2%为天主教徒，"
    "35.7%为犹太人。八年后，城中的犹太人更多了。"
)


@pytest.mark.parametrize(
    ("passage", "question", "answer"),
    [
        (TESLA, "When did Tesla die?", "Tesla died on 7 January 1943."),
        (WARSAW, "1901年华沙有多少居民？", "据1901年人口普查，华沙711,988名居民中"),
    ],
)
def test_a_sentence_of_dates_and_figures_is_quoted(embedder, passage, question, answer):
    hit = Hit(1, 1, "Note", 0, 0, len(passage), None, None, 1.0, passage)
    text, _ = extractive_answer(embedder, question, [hit])
    assert first_quote(text).startswith(answer), text


@pytest.mark.parametrize("axis", ["0 20 40 60 80 100", "年份 2019 2020 2021", "PaSa 0.4834 0.6947"])
def test_a_row_of_numbers_is_not_quoted(embedder, axis):
    passage = (
        f"The figure plots recall against the papers read.\n\n{axis}\n\n"
        "Recall rises fastest over the first twenty papers read by the agent."
    )
    hit = Hit(1, 1, "Note", 0, 0, len(passage), None, None, 1.0, passage)
    text, _ = extractive_answer(embedder, "How does recall change with the papers read?", [hit])
    assert axis not in text and "Recall rises" in text


# --- roles: quotes drawn from prose -----------------------------------------------------------

PAPER = (
    "PaSa: An LLM Agent for Comprehensive Academic Paper Search\n"
    "Yichen He, Guanhua Huang, Peiyuan Feng. ByteDance Research, Peking University.\n"
    "Demo: https://pasa-agent.ai. Contact: he@example.com.\n\n"
    "PaSa searches for academic papers with a crawler that calls the search engine and reads "
    "each paper it finds. A selector then judges whether each paper meets the query.\n\n"
    "Method Recall@20 Recall@50\nPaSa 0.4834 0.6947\nGoogle 0.2015 0.2353\n\n"
    "He, Y. 2024. Academic search with agents. In Proceedings of ACL.\n"
)


def paper_roles(text: str) -> Roles:
    front = text.index("\n\nPaSa searches")
    table = text.index("Method Recall")
    reference = text.index("He, Y.")
    return Roles(
        [
            RoleRange(0, text.index("\n"), "heading"),
            RoleRange(text.index("Yichen"), front, "front_matter"),
            RoleRange(table, text.index("\n\nHe, Y."), "table"),
            RoleRange(reference, len(text), "reference"),
        ]
    )


def paper_hits(text: str) -> list[Hit]:
    half = text.index("Method Recall")
    return [
        Hit(1, 9, "PaSa", 0, 0, half, None, None, 1.0, text[:half]),
        Hit(2, 9, "PaSa", 1, half, len(text), None, None, 0.9, text[half:]),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "Which authors from ByteDance Research and Peking University wrote PaSa, and its demo?",
        "Who wrote about academic search with agents in the Proceedings of ACL?",
    ],
)
def test_an_author_block_or_a_reference_is_not_quoted_when_body_text_is_there(embedder, question):
    hits = paper_hits(PAPER)
    body = PAPER[PAPER.index("PaSa searches") : PAPER.index("Method Recall")]
    plain, _ = extractive_answer(embedder, question, hits, {9: PAPER})
    assert [s for _, s, _ in quotes(plain) if s not in body]  # without roles they are quoted
    text, _ = extractive_answer(embedder, question, hits, {9: PAPER}, roles={9: paper_roles(PAPER)})
    said = [s for _, s, _ in quotes(text)]
    assert said and all(s in body for s in said), said


def test_a_table_is_quoted_as_its_rows_never_as_a_sentence(embedder):
    question = "What recall does PaSa reach at 20 and 50 against Google?"
    hits = paper_hits(PAPER)
    text, _ = extractive_answer(embedder, question, hits, {9: PAPER}, roles={9: paper_roles(PAPER)})
    tables = [s for _, s, _ in quotes(text) if "0.4834" in s]
    assert tables == ["Method Recall@20 Recall@50 · PaSa 0.4834 0.6947 · Google 0.2015 0.2353"]


def test_a_page_header_inside_a_quoted_sentence_is_shown_as_an_ellipsis(embedder):
    text = (
        "莫高窟位于敦煌市东南，\n\n中国文化遗产 第12页\n\n是世界上现存规模最大的佛教艺术地。"
        "洞窟里有大量壁画。"
    )
    header = RoleRange(text.index("中国文化"), text.index("第12页") + 4, "page_header")
    hit = Hit(1, 3, "敦煌", 0, 0, len(text), None, None, 1.0, text, language="zh")
    answer, _ = extractive_answer(
        embedder, "莫高窟在哪里？", [hit], {3: text}, roles={3: Roles([header])}
    )
    assert "莫高窟位于敦煌市东南， … 是世界上现存规模最大的佛教艺术地。" in answer
    assert "第12页" not in answer


def test_the_quotes_of_a_real_paper_come_from_its_body_text(store, notebook, settings, embedder):
    from knownote.answer.quotes import UNQUOTED, shown_sentence
    from knownote.index.sentences import sentences
    from knownote.pipeline.ingest import import_file

    path = corpus_file("docs/pdf/paper_dpr_2004.04906_2col.pdf")
    result = import_file(store, notebook, path.name, path.read_bytes(), settings=settings,
                         embedder=embedder)  # fmt: skip
    roles = Roles(store.roles(result.document_id))
    assert roles.ranges, "the paper was read without roles"
    question = "Who are the authors of dense passage retrieval and which papers does it cite?"
    hits = search(store, embedder, notebook.id, question, k=8)
    document = store.document_text(result.document_id)
    text, _ = extractive_answer(embedder, question, hits, {result.document_id: document},
                                roles={result.document_id: roles})  # fmt: skip
    unquoted = {
        shown_sentence(h.text, s)
        for h in hits
        for s in sentences(h.text, roles=roles, offset=h.start)
        if s.role in UNQUOTED
    }
    assert unquoted, "the hits hold no author block, reference or page furniture"
    said = [s.strip("…") for _, s, _ in quotes(text)]
    assert said and not [s for s in said if s in unquoted]
