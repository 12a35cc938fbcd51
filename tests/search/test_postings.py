import dataclasses
import json
import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from knownote.index.analyze import query_terms
from knownote.measure.retrieval import import_text
from knownote.search import postings
from knownote.search.retrieve import TUNED, Scope, keyword_ranking, look_up
from tests.conftest import corpus_file

SETS = {"en": "qa_en/xquad.en.json", "zh": "qa_zh/cmrc2018_dev.json"}
QUESTIONS = 4  # of each language, the first question of each of the first paragraphs


def contexts(relative: str, n: int) -> list[str]:
    return [p["context"] for p in paragraphs_of(relative)[:n]]


def questions(language: str) -> list[str]:
    return [p["qas"][0]["question"] for p in paragraphs_of(SETS[language])[:QUESTIONS]]


def paragraphs_of(relative: str) -> list[dict]:
    data = json.loads(corpus_file(relative).read_text(encoding="utf-8"))
    return [p for article in data["data"] for p in article["paragraphs"]]


def import_paragraphs(store, notebook, embedder, languages) -> dict[str, int]:
    """Real paragraphs (xquad, CMRC 2018), one document each."""
    ids = {}
    for language in languages:
        for i, text in enumerate(contexts(SETS[language], 12)):
            ids[f"{language}{i}"] = import_text(
                store, notebook.id, embedder, f"{language}{i}", text
            )
    return ids


@pytest.fixture(params=["en", "zh"])
def paragraphs(request, store, notebook, embedder):
    """A notebook of one language: its language, and its documents by name."""
    return request.param, import_paragraphs(store, notebook, embedder, [request.param])


@pytest.fixture
def mixed_paragraphs(store, notebook, embedder):
    """A notebook of English and Chinese paragraphs."""
    return import_paragraphs(store, notebook, embedder, ["en", "zh"])


def by_hand(store, notebook_id, query, documents=None):
    """BM25F straight from the stored keyword rows, as keyword_ranking documents it."""
    where = "p.notebook_id = ? AND d.enabled"
    params = [notebook_id]
    if documents is not None:
        where += " AND list_contains(?::BIGINT[], p.document_id)"
        params.append(documents)
    passages = dict(
        store.db.execute(
            f"SELECT p.id, p.n_terms FROM passages p JOIN documents d ON d.id = p.document_id "
            f"WHERE {where}",
            params,
        ).fetchall()
    )
    analyzers = [
        a for (a,) in store.db.execute("SELECT DISTINCT terms_as FROM documents").fetchall()
    ]
    tuning = TUNED.for_query(query)
    wanted = query_terms(query, analyzers, tuning.stem_weight, tuning.heading_weight)
    n, avgdl = len(passages), max(sum(passages.values()) / len(passages), 1)
    fields: dict[tuple[int, str], float] = defaultdict(float)
    qtf = {}
    for passage_id, term, tf in store.db.execute(
        "SELECT passage_id, term, tf FROM passage_terms"
    ).fetchall():
        for wanted_term, count, base, weight, normalise in wanted:
            if wanted_term != term or passage_id not in passages:
                continue
            length = 1 - tuning.b + tuning.b * passages[passage_id] / avgdl if normalise else 1
            fields[passage_id, base] += weight * tf / length
            qtf[base] = count
    df = Counter(base for _, base in fields)
    scores: dict[int, float] = defaultdict(float)
    for (passage_id, base), tf in fields.items():
        idf = math.log(1 + (n - df[base] + 0.5) / (df[base] + 0.5))
        scores[passage_id] += qtf[base] * idf * tf * (tuning.k1 + 1) / (tf + tuning.k1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def assert_same_ranking(hits, expected):
    assert [pid for pid, _ in hits] == [pid for pid, _ in expected[: len(hits)]]
    assert [s for _, s in hits] == pytest.approx([s for _, s in expected[: len(hits)]], rel=1e-9)


def test_keyword_scores_are_bm25f_of_the_stored_rows(store, notebook, paragraphs):
    language, _ = paragraphs
    for query in questions(language):
        ranking = keyword_ranking(store, Scope(notebook.id), query, 10)
        assert ranking.hits and not ranking.mixed
        assert_same_ranking(ranking.hits, by_hand(store, notebook.id, query))


def test_a_narrowed_scope_counts_only_its_own_passages(store, notebook, paragraphs):
    language, ids = paragraphs
    chosen = [ids[f"{language}0"], ids[f"{language}3"], ids[f"{language}7"]]
    for query in questions(language):
        hits = keyword_ranking(store, Scope(notebook.id, tuple(chosen)), query, 10).hits
        assert_same_ranking(hits, by_hand(store, notebook.id, query, chosen))
        held = {p.id for d in chosen for p in store.passages(d)}
        assert {pid for pid, _ in hits} <= held


def held_documents(store, notebook_id):
    rows = store.db.execute(
        "SELECT id, terms_as FROM documents WHERE notebook_id = ?", [notebook_id]
    ).fetchall()
    return frozenset(rows)


def test_documents_added_later_are_read_alone_and_score_as_a_fresh_read(
    store, notebook, embedder, paragraphs, monkeypatch
):
    language, _ = paragraphs
    before = postings.load(store.db, notebook.id, held_documents(store, notebook.id))
    for text in contexts(SETS[language], 15)[12:]:
        import_text(store, notebook.id, embedder, "later", text)
    documents = held_documents(store, notebook.id)
    grown = postings.load(store.db, notebook.id, documents, before)
    fresh = postings.load(store.db, notebook.id, documents)
    assert len(grown.segments) == 2 and len(fresh.segments) == 1
    assert grown.segments[0] is before.segments[0]  # the earlier documents were not read again
    assert (
        len(grown.ids)
        == len(fresh.ids)
        == store.db.execute("SELECT count(*) FROM passages").fetchone()[0]
    )
    monkeypatch.setattr(postings, "SEGMENTS_MAX", 1)
    merged = postings.load(store.db, notebook.id, documents, before)
    assert len(merged.segments) == 1
    seen = look_up(store, Scope(notebook.id))
    n, avgdl = seen.facts.bm25(store, Scope(notebook.id))
    for query in questions(language):
        tuning = TUNED.for_query(query)
        wanted = query_terms(query, seen.facts.analyzers, tuning.stem_weight, 0.5)
        results = [
            postings.bm25f(p, wanted, None, n, avgdl, tuning.k1, tuning.b)
            for p in (grown, fresh, merged)
        ]
        ids = [p.ids[r.rows].tolist() for p, r in zip((grown, fresh, merged), results, strict=True)]
        assert ids[0] == ids[1] == ids[2]
        scores = [r.scores for r in results]
        assert scores[0] == pytest.approx(scores[1]) and scores[2] == pytest.approx(scores[1])


def test_a_deleted_document_is_no_longer_searched_or_held(store, notebook, paragraphs):
    query = questions(paragraphs[0])[1]
    first = keyword_ranking(store, Scope(notebook.id), query, 1).hits[0][0]
    document = store.db.execute(
        "SELECT document_id FROM passages WHERE id = ?", [first]
    ).fetchone()[0]
    store.delete_document(document)
    hits = keyword_ranking(store, Scope(notebook.id), query, 10).hits
    assert first not in {pid for pid, _ in hits}
    assert_same_ranking(hits, by_hand(store, notebook.id, query))
    kept = postings.load(store.db, notebook.id, held_documents(store, notebook.id))
    assert first not in set(kept.ids.tolist())


def test_in_two_languages_each_passage_is_scored_against_its_own_language(
    store, notebook, mixed_paragraphs
):
    held = store.passage_languages(notebook.id)
    assert set(held) == {"en", "zh"}
    query = "Super Bowl 50 是在哪里举行的？"  # words of both languages
    ranking = keyword_ranking(store, Scope(notebook.id), query, 200)
    assert ranking.mixed
    raw = dict(by_hand(store, notebook.id, query))
    languages = dict(store.db.execute("SELECT id, language FROM passages").fetchall())
    counted = Counter(languages.values())
    expected = {}
    for language, n in counted.items():
        scores = np.array([s for pid, s in raw.items() if languages[pid] == language])
        mean, square = scores.sum() / n, np.square(scores).sum() / n
        spread = math.sqrt(max(square - mean * mean, 0)) or 1
        for pid, s in raw.items():
            if languages[pid] == language:
                expected[pid] = (s - mean) / spread
    assert {languages[pid] for pid, _ in ranking.hits} == {"en", "zh"}
    assert_same_ranking(
        ranking.hits, sorted(expected.items(), key=lambda item: (-item[1], item[0]))
    )


def test_languages_read_after_a_search_are_searched_by_at_once(store, notebook, mixed_paragraphs):
    store.db.execute("UPDATE passages SET language = NULL")
    store.db.execute("UPDATE documents SET languages = NULL")
    query = "Super Bowl 50 是在哪里举行的？"
    assert not keyword_ranking(store, Scope(notebook.id), query, 10).mixed
    for name, document_id in mixed_paragraphs.items():
        store.set_languages(document_id, [name[:2]])
    ranking = keyword_ranking(store, Scope(notebook.id), query, 10)
    assert ranking.mixed
    languages = dict(store.db.execute("SELECT id, language FROM passages").fetchall())
    assert {languages[pid] for pid, _ in ranking.hits} == {"en", "zh"}


def test_rows_read_in_term_order_and_after_it_score_alike(
    store, notebook, embedder, paragraphs, monkeypatch
):
    language, _ = paragraphs
    store.sort_terms()  # the table in term order, as imports leave it once enough rows arrived
    for text in contexts(SETS[language], 15)[12:]:
        import_text(store, notebook.id, embedder, "later", text)  # rows after the sorted ones
    monkeypatch.setattr(postings, "READ_BATCH", 7)  # a term's rows go on in the next batch
    documents = held_documents(store, notebook.id)
    read = postings.load(store.db, notebook.id, documents)
    assert len(read.segments) == 2  # the rows in term order as runs, and the rest
    in_order = read.segments[0]
    assert (np.diff(in_order.keys) > 0).all() and in_order.starts[-1] == len(in_order.rows)
    merged = dataclasses.replace(read, segments=(postings._merged(read.segments),))
    seen = look_up(store, Scope(notebook.id))
    n, avgdl = seen.facts.bm25(store, Scope(notebook.id))
    for query in questions(language):
        tuning = TUNED.for_query(query)
        wanted = query_terms(query, seen.facts.analyzers, tuning.stem_weight, 0.5)
        got, expected = (
            postings.bm25f(p, wanted, None, n, avgdl, tuning.k1, tuning.b) for p in (read, merged)
        )
        assert read.ids[got.rows].tolist() == merged.ids[expected.rows].tolist()
        assert got.scores == pytest.approx(expected.scores)
        hits = keyword_ranking(store, Scope(notebook.id), query, 10).hits
        assert_same_ranking(hits, by_hand(store, notebook.id, query))


def test_only_the_documents_asked_for_are_read_among_others_ids(
    store, notebook, paragraphs, monkeypatch
):
    _, ids = paragraphs
    store.sort_terms()  # the rows in term order: theirs and the other documents' interleaved
    monkeypatch.setattr(postings, "READ_BATCH", 7)  # some batches only the others' rows
    ends = sorted(ids.values())[:: len(ids) - 1]
    documents = frozenset(d for d in held_documents(store, notebook.id) if d[0] in ends)
    read = postings.load(store.db, notebook.id, documents)
    wanted = {p.id for d in ends for p in store.passages(d)}
    assert set(read.ids.tolist()) == wanted
    held = {int(read.ids[r]) for s in read.segments for r in s.rows}
    counted = store.db.execute(
        "SELECT count(*) FROM passage_terms WHERE list_contains(?::BIGINT[], passage_id)",
        [sorted(wanted)],
    ).fetchone()[0]
    assert held == wanted and sum(len(s.rows) for s in read.segments) == counted
