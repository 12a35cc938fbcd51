"""Search a notebook: vector, keyword (BM25) and hybrid, over the store's tables and what is
kept of them in memory (the vectors' codes, the keyword rows' posting lists).

Only passages of enabled documents are searched; `document_ids` narrows the scope further.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from knownote.errors import KnowNoteError
from knownote.index.analyze import query_terms
from knownote.index.centring import (
    LanguageMeans,
    centred_codes,
    held_languages,
    load_language_means,
)
from knownote.index.codes import CodeIndex, load_code_index
from knownote.index.embed import Embedder
from knownote.index.tokenize import mostly_cjk
from knownote.search.minor import NAMED_SHARE, named
from knownote.search.postings import EMPTY, Postings, bm25f, by_language, top
from knownote.search.postings import load as load_postings
from knownote.settings import MULTILINGUAL
from knownote.store.db import Store, vectors_table

MODES = ("hybrid", "vector", "keyword")

# BM25 parameters: Okapi's k1, and a length normalisation b below the usual 0.75 (tuned with
# the weights below on held-out questions, the first 400 of xquad.en: README).
K1 = 1.2
B = 0.5
# BM25F: a term in the passage's heading (document title and section path) counts as this many
# occurrences in its text, unnormalised by length.
HEADING_WEIGHT = 0.5
# A word matched only through its stem ("trains" for "trained") counts this much of an exact match.
STEM_WEIGHT = 0.5
# Only the part of a vector z-score above DENSE_FLOOR counts: a model that cannot read the
# query's language still puts some passage ~3 standard deviations above the mean by chance.
DENSE_FLOOR = 2.0
DENSE_WEIGHT = 2.0
# ... and for a question mostly in CJK characters, which the default (English) model reads
# poorly: on cmrc2018 a weight of 2 cost 0.6 points of MRR@10 where xquad.en gained 0.4. Chosen
# on questions 1,501-3,000 of cmrc2018 and JSQuAD (held out from the README's figures): MRR@10
# with weights 1 / 0.5 / 0.25: cmrc2018 0.9617 / 0.9637 / 0.9645, JSQuAD 0.9475 / 0.9479 / -,
# JSQuAD in article mode 0.937 / 0.943 / 0.944; recall@5 equal or better. Below 0.5 it gains
# little, and a question mixing scripts still gets some say from the model.
DENSE_WEIGHT_CJK = 0.5
# ... and BM25's length normalisation for such a question (JSQuAD's recall@5 fell with 0.5).
B_CJK = 0.75
# See Tuning.minor_weight. Chosen on half the questions of benchmarks/roles_search.py: the
# smallest with the best MRR@10 there (2, 3 and 4 equal, 1 lower); MRR@10 on the other half,
# weight 0 / 1 / 2: reference questions 0.966 / 0.966 / 0.971, sections 0.550 / 0.550 / 0.555.
MINOR_WEIGHT = 2.0


@dataclass(frozen=True)
class Tuning:
    """The weights of a search: BM25F's and the fusion's (see `keyword_ranking`, `fuse`)."""

    k1: float = K1
    b: float = B
    stem_weight: float = STEM_WEIGHT
    heading_weight: float = HEADING_WEIGHT
    dense_weight: float = DENSE_WEIGHT
    dense_weight_cjk: float = DENSE_WEIGHT_CJK
    dense_floor: float = DENSE_FLOOR
    b_cjk: float = B_CJK
    coverage_power: float = 0.0
    # Whether a notebook of several languages is searched fairly across them (vectors centred
    # on their language's mean, BM25 scored against its language's passages); False searches
    # it as before (`knownote eval`'s figures before issue 35).
    fair: bool = True
    # ... and then fused with these weights: the passages in the question's own language that
    # BM25 still favours hold no answer more often than not. Chosen on held-out questions (the
    # first 300 of the German mixed set, `benchmarks/languages.py`): MRR@10 0.830 with the
    # weights above, 0.881 with these, the top of the grid flat up to 8 and 6.
    mixed_dense_weight: float = 4.0
    mixed_coverage_power: float = 4.0
    # A hybrid score loses this much (in the fusion's z-score units) times the share of the
    # passage that is references, front matter or page furniture (knownote.read.roles.MINOR):
    # a question about a paper's method should find its text before the titles it cites, and a
    # question naming a cited title still finds its entry. Chosen with benchmarks/roles_search.py.
    minor_weight: float = MINOR_WEIGHT
    # ... except where the passage's minor parts hold this share of the question's words close
    # together (knownote.search.minor): the question names that entry, and it is the answer.
    minor_named: float = NAMED_SHARE

    def for_query(self, query: str) -> Tuning:
        """The weights for this question (the CJK ones for a question mostly in CJK)."""
        if mostly_cjk(query):
            return dataclasses.replace(self, dense_weight=self.dense_weight_cjk, b=self.b_cjk)
        return self


TUNED = Tuning()
# The weights of notebooks embedded with another model than the packaged English one. The
# multilingual model reads CJK as well as the rest, and BM25 weighs in by the share of the
# question's words found in the scope, squared: a German question over English sources shares
# few, and those by chance. Chosen with `benchmarks/fusion.py` (held-out questions: the first 400
# of xquad.en, de→en and en→de, cmrc2018's and JSQuAD's 1,501-2,500): among the best by mean
# MRR@10 (0.9268 against 0.9274 at best and 0.8679 with the English model's weights), and of
# those the closest to the English model's.
TUNINGS: dict[str, Tuning] = {
    MULTILINGUAL: Tuning(dense_floor=1.0, dense_weight_cjk=1.0, coverage_power=2.0),
}


def tuned_for(model: str) -> Tuning:
    """The weights chosen for notebooks embedded with `model`."""
    return TUNINGS.get(model, TUNED)


# The search before titles, sections and stemming (what `knownote eval --compare` shows first).
BEFORE_TUNING = Tuning(
    k1=1.2, b=0.75, dense_weight=1.0, dense_weight_cjk=1.0, dense_floor=2.0, b_cjk=0.75
)


class SearchError(KnowNoteError):
    """A search that cannot run as asked (unknown mode, empty query)."""


@dataclass(frozen=True)
class Hit:
    passage_id: int
    document_id: int
    title: str
    passage_index: int
    start: int
    end: int
    page_start: int | None
    page_end: int | None
    score: float
    text: str
    section: str = ""  # the section path at the passage's start ('' when none)
    language: str | None = None  # the passage's language (index.language.passage_languages)

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Scope:
    """Which passages a search may return: a notebook, optionally only some documents."""

    notebook_id: int
    document_ids: tuple[int, ...] | None = None

    def where(self) -> tuple[str, list[object]]:
        """A condition on `p` (passages) joined with `d` (documents), and its parameters."""
        sql = "p.notebook_id = ? AND d.enabled"
        params: list[object] = [self.notebook_id]
        if self.document_ids is not None:
            sql += " AND list_contains(?::BIGINT[], p.document_id)"
            params.append(list(self.document_ids))
        return sql, params


def search(
    store: Store,
    embedder: Embedder,
    notebook_id: int,
    query: str,
    k: int = 8,
    mode: str = "hybrid",
    document_ids: Sequence[int] | None = None,
) -> list[Hit]:
    """The `k` passages of a notebook that best match `query`, best first.

    Args:
        store: the open database.
        embedder: the notebook's embedding model (used by "hybrid" and "vector").
        notebook_id: the notebook to search.
        query: the user's question or keywords.
        k: how many passages to return.
        mode: "hybrid" (default), "vector" or "keyword".
        document_ids: when given, only these documents are searched.

    Returns:
        Hits ordered by score, highest first; scores are comparable only within one mode.
    """
    if mode not in MODES:
        raise SearchError(f"Unknown search mode “{mode}”; use one of {', '.join(MODES)}.")
    if not query or not query.strip():
        raise SearchError("The search query is empty; type a question or some keywords.")
    if k < 1:
        return []
    scope = Scope(notebook_id, tuple(document_ids) if document_ids is not None else None)
    if scope.document_ids == ():
        return []
    ranked = rank(store, embedder, scope, query, k, mode)
    return fetch_hits(store, ranked)


def rank(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    query: str,
    k: int,
    mode: str,
    vector: np.ndarray | None = None,
    tuning: Tuning | None = None,
) -> list[tuple[int, float]]:
    """(passage id, score) pairs for the top `k`, best first. Pass `vector` if already known;
    `tuning` None: the weights chosen for the embedding model (`tuned_for`)."""
    tuning = tuning or tuned_for(embedder.name)
    if mode == "keyword":
        return keyword_scores(store, scope, query, k, tuning)
    if vector is None:
        vector = embedder.embed_query(query)
    if mode == "vector":
        return vector_scores(store, scope, vector, k, question=query, fair=tuning.fair)
    return hybrid_scores(store, scope, query, vector, k, tuning)


# The first pass of a vector query keeps the HAMMING_NEAR passages nearest by Hamming distance
# to the query's code, plus one for every HAMMING_PER passages of the notebook; of those, the
# EXACT_BEST best by the query against their sign bits, plus one per EXACT_PER, are ranked
# exactly in SQL. Fetching those vectors is most of a vector query at 100k passages (~1.6 ms a
# query plus ~2.2 ms a thousand candidates), so the exact count is kept small. Measured on
# benchmarks/search.py's vectors at 100k (3,000 then 400): 198/200 questions got the exact top
# 10, as with 1,000 candidates by Hamming distance alone before (2,000 then 300: 196/200; 5,000
# then 500: 200/200 at 1.2x the time); at 1M (12,000 then 1,300) 100/100 in benchmarks/scale.py.
HAMMING_NEAR = 2000
HAMMING_PER = 100
EXACT_BEST = 300
EXACT_PER = 1000
# Each ranking contributes this many candidates to a hybrid search.
FUSION_DEPTH = 50
# Passage vectors sampled to estimate the distribution of vector scores in a large scope.
SAMPLE = 2048


@dataclass(frozen=True)
class Ranking:
    """The top of one ranking, plus the mean and spread of its score over the whole scope."""

    hits: list[tuple[int, float]]
    mean: float
    std: float
    # The share of the query's words found anywhere in the scope (keyword rankings only).
    coverage: float = 1.0
    # Scored per language, in a notebook of several (keyword rankings only).
    mixed: bool = False


def vector_scores(
    store: Store,
    scope: Scope,
    vector: np.ndarray,
    k: int,
    seen: Lookup | None = None,
    question: str = "",
    fair: bool = True,
) -> list[tuple[int, float]]:
    """Cosine similarity (stored vectors are normalised), best first; in a notebook of several
    languages, of the vectors centred on their language's mean (knownote.index.centring), the
    `question`'s language read from its text.

    A pass over the notebook's codes in memory picks candidates (see HAMMING_NEAR); those are
    ranked by their exact inner product in SQL. `seen` is the search's `look_up(scope)`
    when the caller already has it.
    """
    dim = int(vector.shape[0])
    seen = seen or look_up(store, scope)
    if seen.documents == []:
        return []
    fair = fairness(store, seen, dim, fair)
    query_vector = fair.query(vector, question)
    index = fair.index or code_index(store, seen)
    n = len(index.passage_ids)
    shortlist = index.shortlist(
        query_vector,
        seen.documents,
        near=HAMMING_NEAR + n // HAMMING_PER,
        best=max(EXACT_BEST + n // EXACT_PER, 4 * k),
    )
    if not len(shortlist):
        return []
    candidates = shortlist.tolist()
    rows = []
    with store.lock, _no_vectors_yet():
        # The query vector is a one-row CTE: as a parameter in the select list it was cast
        # again for every chunk of candidates (~1 ms of 2,000).
        if fair.index is None:
            rows = store.db.execute(
                f"""
                WITH query AS (SELECT ?::FLOAT[{dim}] AS embedding)
                SELECT v.passage_id, array_inner_product(v.embedding, query.embedding) AS score
                FROM {vectors_table(dim)} v, query
                WHERE v.passage_id IN (SELECT unnest(?::BIGINT[]))
                ORDER BY score DESC, v.passage_id
                LIMIT ?
                """,
                [query_vector.tolist(), candidates, k],
            ).fetchall()
        else:
            # Each candidate's centred vector is its stored one less its language's mean: its
            # inner product with the query is the stored one less the mean's, over its length.
            places = np.searchsorted(index.passage_ids, shortlist)
            rows = store.db.execute(
                f"""
                WITH query AS (SELECT ?::FLOAT[{dim}] AS embedding),
                candidate AS (
                    SELECT unnest(?::BIGINT[]) AS passage_id, unnest(?::DOUBLE[]) AS shift,
                           unnest(?::DOUBLE[]) AS length
                )
                SELECT v.passage_id,
                       (array_inner_product(v.embedding, query.embedding) - candidate.shift)
                       / candidate.length AS score
                FROM {vectors_table(dim)} v JOIN candidate USING (passage_id), query
                ORDER BY score DESC, v.passage_id
                LIMIT ?
                """,
                [
                    query_vector.tolist(),
                    candidates,
                    fair.means.shifts(query_vector)[fair.rows[places]].tolist(),
                    fair.lengths[places].tolist(),
                    k,
                ],
            ).fetchall()
    return [(int(pid), float(score)) for pid, score in rows]


def vector_distribution(
    store: Store,
    scope: Scope,
    vector: np.ndarray,
    seen: Lookup | None = None,
    question: str = "",
    fair: bool = True,
) -> tuple[float, float]:
    """Mean and standard deviation of the vector score over the scope (sampled when large),
    scored as `vector_scores` scores."""
    seen = seen or look_up(store, scope)
    dim = int(vector.shape[0])
    sample, _ = seen.facts.sample(store, scope, dim)
    if not len(sample):
        return 0.0, 1.0
    fair = fairness(store, seen, dim, fair)
    query = fair.query(vector, question)
    if fair.index is None:
        scores = sample @ query
    else:
        rows, lengths = seen.facts.centred(store, scope, fair.means)
        scores = fair.means.scores(sample, rows, query, lengths)
    return float(scores.mean()), float(scores.std() or 1.0)


@dataclass(frozen=True)
class Fairness:
    """How a notebook's vector scores are made fair across its languages: its language means,
    the codes of its centred vectors, each one's language row and length (`centred_codes`);
    `index` None for a notebook of one language, scored as plain cosines over its stored codes."""

    means: LanguageMeans
    index: CodeIndex | None = None
    rows: np.ndarray | None = None  # per passage of `index`: its language's row of the means
    lengths: np.ndarray | None = None  # ... and the length of its centred vector

    def query(self, vector: np.ndarray, question: str) -> np.ndarray:
        """The query vector as scores use it: centred on its language's mean when mixed."""
        if self.index is None:
            return _unit(vector)
        return self.means.query(vector, question)


class ScopeFacts:
    """What a search needs to know about its whole scope, computed once per set of documents.

    BM25's collection statistics (passage count, average length) and the passage vectors
    sampled for the vector score's distribution used to be computed for every query, which
    cost most of a hybrid search at 100k passages. Documents never change once imported, so
    the facts of a scope stay true while the same documents are searchable: the cache key is
    the notebook and the list of searchable document ids.
    """

    def __init__(self, analyzers: Sequence[str] = ()) -> None:
        self._bm25: tuple[int, float] | None = None
        self._minor: dict[int, float] | None = None
        self._languages: dict[str, int] | None = None
        self._in_scope: tuple[Postings, np.ndarray] | None = None
        self._centred: dict[int, tuple[LanguageMeans, np.ndarray, np.ndarray]] = {}
        self._samples: dict[int, tuple[np.ndarray, list[str]]] = {}
        # How the scope's documents were indexed (documents.terms_as): a query is analysed once
        # for each, so that documents not yet re-indexed are searched correctly meanwhile.
        self.analyzers = tuple(sorted(set(analyzers)))

    def bm25(self, store: Store, scope: Scope) -> tuple[int, float]:
        """(number of passages, average passage length in terms) over the scope."""
        if self._bm25 is None:
            where, params = scope.where()
            with store.lock:
                n, avgdl = store.db.execute(
                    "SELECT count(*), greatest(coalesce(avg(p.n_terms), 1), 1) "
                    f"FROM passages p JOIN documents d ON d.id = p.document_id WHERE {where}",
                    params,
                ).fetchone()
            self._bm25 = (int(n), float(avgdl))
        return self._bm25

    def minor(self, store: Store, scope: Scope) -> dict[int, float]:
        """The share of minor parts (references, front matter, page furniture) of each passage
        of the scope that has any."""
        if self._minor is None:
            where, params = scope.where()
            with store.lock:
                rows = store.db.execute(
                    f"SELECT p.id, p.minor FROM passages p JOIN documents d "
                    f"ON d.id = p.document_id WHERE {where} AND p.minor > 0",
                    params,
                ).fetchall()
            self._minor = {int(pid): float(share) for pid, share in rows}
        return self._minor

    def languages(self, store: Store, scope: Scope) -> dict[str, int]:
        """How many passages of the scope are in each language ('' for none read)."""
        if self._languages is None:
            where, params = scope.where()
            with store.lock:
                rows = store.db.execute(
                    "SELECT coalesce(p.language, ''), count(*) "
                    f"FROM passages p JOIN documents d ON d.id = p.document_id WHERE {where} "
                    "GROUP BY ALL",
                    params,
                ).fetchall()
            self._languages = {language: int(count) for language, count in rows}
        return self._languages

    def in_scope(self, postings: Postings, documents: list[int] | None) -> np.ndarray | None:
        """Which rows of `postings` the scope holds (None: all), kept while they are the same."""
        if documents is None:
            return None
        if self._in_scope is None or self._in_scope[0] is not postings:
            self._in_scope = (postings, np.isin(postings.document, documents))
        return self._in_scope[1]

    def centred(
        self, store: Store, scope: Scope, means: LanguageMeans
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each sampled vector's row of `means` and the length of it centred (kept while the
        notebook's means stay the same)."""
        dim = means.means.shape[1]
        kept = self._centred.get(dim)
        if kept is None or kept[0] is not means:
            sample, languages = self.sample(store, scope, dim)
            rows = means.rows(languages)
            kept = self._centred[dim] = (means, rows, means.lengths(sample, rows))
        return kept[1], kept[2]

    def sample(self, store: Store, scope: Scope, dim: int) -> tuple[np.ndarray, list[str]]:
        """Up to SAMPLE stored vectors of the scope (a fixed, repeatable sample), and their
        passages' languages."""
        if dim not in self._samples:
            where, params = scope.where()
            rows = {"embedding": [], "language": np.array([], dtype=object)}
            with store.lock, _no_vectors_yet():
                rows = store.db.execute(
                    f"""
                    SELECT v.embedding, coalesce(s.language, '') AS language
                    FROM {vectors_table(dim)} v JOIN (
                        SELECT id, language FROM (
                            SELECT p.id, p.language
                            FROM passages p JOIN documents d ON d.id = p.document_id
                            WHERE {where}
                        ) USING SAMPLE reservoir({SAMPLE} ROWS) REPEATABLE (7)
                    ) s ON s.id = v.passage_id
                    """,
                    params,
                ).fetchnumpy()
            embeddings = rows["embedding"]
            self._samples[dim] = (
                np.stack(embeddings).astype(np.float32)
                if len(embeddings)
                else np.zeros((0, dim), dtype=np.float32),
                rows["language"].tolist(),
            )
        return self._samples[dim]


_FACTS_KEPT = 8  # scopes remembered per store (a sample is 3 MB at 384 dimensions)
_facts: weakref.WeakKeyDictionary[Store, OrderedDict[tuple, ScopeFacts]] = (
    weakref.WeakKeyDictionary()
)
_facts_lock = threading.Lock()


@dataclass(frozen=True)
class Lookup:
    """What one search knows of its scope, looked up once (one query on the documents)."""

    facts: ScopeFacts
    # The searchable document ids, or None when that is every document of the notebook (the
    # common case, where the pass over the codes filters nothing).
    documents: list[int] | None
    # The notebook and how each of its documents was indexed: while this stays the same, so
    # do the notebook's codes (see `code_index`).
    notebook: tuple


def look_up(store: Store, scope: Scope) -> Lookup:
    """The cached facts of the scope's current set of searchable documents, and that set."""
    with store.lock:
        rows = store.db.execute(
            "SELECT id, enabled, terms_as, embedded_as, "
            "coalesce(array_to_string(languages, ','), ''), coalesce(roles_read, 0) "
            "FROM documents WHERE notebook_id = ? ORDER BY id",
            [scope.notebook_id],
        ).fetchall()
        # fetchall: a half-read result would stop the next register() on this shared connection.
        model = tuple(
            store.db.execute(
                "SELECT embedding_model FROM notebooks WHERE id = ?", [scope.notebook_id]
            ).fetchall()
        )
    wanted = tuple(
        (i, terms_as, embedded_as, languages, roles)
        for i, enabled, terms_as, embedded_as, languages, roles in rows
        if enabled and (scope.document_ids is None or i in scope.document_ids)
    )
    documents = None if len(wanted) == len(rows) else [i for i, *_ in wanted]
    # How each document was indexed is part of the key: a re-indexed document changes the facts,
    # and so does a re-embedded notebook (knownote.pipeline.reembed), or the languages of older
    # documents read at last (Store.set_languages: their passages' languages change), and their
    # roles (Store.replace_roles: their passages' minor shares change).
    key = (scope.notebook_id, model, wanted)
    with _facts_lock:
        kept = _facts.setdefault(store, OrderedDict())
        facts = kept.get(key)
        if facts is None:
            facts = kept[key] = ScopeFacts([terms_as for _, terms_as, *_ in wanted])
            while len(kept) > _FACTS_KEPT:
                kept.popitem(last=False)
        kept.move_to_end(key)
    notebook = (scope.notebook_id, model, tuple((i, t, e, r) for i, _, t, e, r, _ in rows))
    return Lookup(facts, documents, notebook)


_INDEXES_KEPT = 4  # notebooks whose codes are kept in memory, per store
_indexes: weakref.WeakKeyDictionary[Store, OrderedDict[tuple, CodeIndex]] = (
    weakref.WeakKeyDictionary()
)
_indexes_lock = threading.Lock()


def code_index(store: Store, seen: Lookup) -> CodeIndex:
    """The codes of the lookup's notebook in memory, read again once its documents change."""
    with _indexes_lock:
        kept = _indexes.setdefault(store, OrderedDict())
        index = kept.get(seen.notebook)
        if index is None:
            with store.lock:
                index = load_code_index(store.db, seen.notebook[0])
            for key in [key for key in kept if key[0] == seen.notebook[0]]:
                del kept[key]  # the notebook's codes as they were before
            kept[seen.notebook] = index
            while len(kept) > _INDEXES_KEPT:
                kept.popitem(last=False)
        kept.move_to_end(seen.notebook)
    return index


def language_means(store: Store, notebook_id: int) -> LanguageMeans:
    """The mean vector of each language of the notebook's passages, as its searches use them
    (`LanguageMeans.mixed` False: a notebook of one language, whose scores are not centred)."""
    seen = look_up(store, Scope(notebook_id))
    return fairness(store, seen, store.notebook(notebook_id).embedding_dim).means


_fairness: weakref.WeakKeyDictionary[Store, OrderedDict[tuple, Fairness]] = (
    weakref.WeakKeyDictionary()
)


def fairness(store: Store, seen: Lookup, dim: int, fair: bool = True) -> Fairness:
    """The lookup's notebook's `Fairness`, computed again once its documents change (`fair`
    False: scores as before, plain cosines)."""
    plain = Fairness(LanguageMeans((), (), np.zeros((0, dim), dtype=np.float32)))
    if not fair:
        return plain
    key = (seen.notebook, dim)
    with _indexes_lock:
        kept = _fairness.setdefault(store, OrderedDict())
        found = kept.get(key)
    if found is None:
        table = vectors_table(dim)
        found = plain  # no vector of that dimension stored yet
        with store.lock, _no_vectors_yet():
            means = load_language_means(store.db, seen.notebook[0], table, dim)
            found = Fairness(means)
            if means.mixed:
                found = Fairness(means, *centred_codes(store.db, seen.notebook[0], table, means))
        with _indexes_lock:
            for old in [old for old in kept if old[0][0] == seen.notebook[0]]:
                del kept[old]
            kept[key] = found
            while len(kept) > _INDEXES_KEPT:
                kept.popitem(last=False)
    return found


def keyword_scores(
    store: Store, scope: Scope, query: str, k: int, tuning: Tuning = TUNED
) -> list[tuple[int, float]]:
    """BM25F over the passage_terms index, best first."""
    return keyword_ranking(store, scope, query, k, tuning=tuning).hits


def keyword_ranking(
    store: Store,
    scope: Scope,
    query: str,
    k: int,
    seen: Lookup | None = None,
    tuning: Tuning = TUNED,
) -> Ranking:
    """BM25F top `k`; collection statistics (N, average length, df) come from the scope.

    N and the average length are the scope's cached facts; df is counted over the matches.
    The terms' rows are read from the notebook's posting lists in memory (`postings`).
    The query is analysed once per analyzer of the scope (see knownote.index.analyze): each stored
    term names its field, text or heading; a term's occurrences in both fields add up (the
    heading's weighted by `tuning.heading_weight`) before BM25's saturation, and count once in df.
    """
    seen = seen or look_up(store, scope)
    documents, facts = seen.documents, seen.facts
    if documents == []:
        return Ranking([], 0.0, 1.0)
    held = facts.languages(store, scope)
    mixed = tuning.fair and len(held_languages(held)) >= 2
    tuning = tuning.for_query(query)
    wanted = query_terms(query, facts.analyzers, tuning.stem_weight, tuning.heading_weight)
    if not wanted:
        return Ranking([], 0.0, 1.0)
    n, avgdl = facts.bm25(store, scope)
    held_postings = postings(store, seen)
    scored = bm25f(
        held_postings, wanted, facts.in_scope(held_postings, documents), n, avgdl,
        tuning.k1, tuning.b,
    )  # fmt: skip
    if not len(scored.rows):
        return Ranking([], 0.0, 1.0, coverage=0.0)
    coverage = scored.found / len({row[2] for row in wanted})
    ids = held_postings.ids[scored.rows]
    if mixed:
        z, known = by_language(held_postings, scored, held)
        return Ranking(top(ids[known], z, k), 0.0, 1.0, coverage, mixed=True)
    mean = float(scored.scores.sum()) / n
    std = max(float(np.square(scored.scores).sum()) / n - mean * mean, 0.0) ** 0.5
    return Ranking(top(ids, scored.scores, k), mean, std or 1.0, coverage)


_postings: weakref.WeakKeyDictionary[Store, dict[int, tuple[tuple, Postings]]] = (
    weakref.WeakKeyDictionary()
)


def postings(store: Store, seen: Lookup) -> Postings:
    """The keyword rows of the lookup's notebook in memory (knownote.search.postings), read
    again, or only its new documents', once its documents change."""
    notebook_id = seen.notebook[0]
    with _indexes_lock:
        kept = _postings.setdefault(store, {})
        key, held = kept.get(notebook_id, (None, EMPTY))
        if key != seen.notebook:
            documents = frozenset((i, f"{terms}/{read}") for i, terms, _, read in seen.notebook[2])
            with store.lock:
                held = load_postings(store.db, notebook_id, documents, held)
            kept[notebook_id] = (seen.notebook, held)
    return held


def hybrid_scores(
    store: Store,
    scope: Scope,
    query: str,
    vector: np.ndarray,
    k: int,
    tuning: Tuning = TUNED,
) -> list[tuple[int, float]]:
    """Fuse the vector and keyword rankings (see `fuse`), minor parts weighed down."""
    depth = max(k, FUSION_DEPTH)
    seen = look_up(store, scope)
    dense, sparse = hybrid_rankings(store, scope, query, vector, depth, tuning, seen)
    fused = fuse(dense, sparse, depth, tuning.for_query(query))
    if tuning.minor_weight:
        minor = seen.facts.minor(store, scope)
        held = {pid: minor[pid] for pid, _ in fused if pid in minor}
        if held:
            weighed = sorted(
                score - tuning.minor_weight * held.get(pid, 0.0) for pid, score in fused
            )
            last = weighed[-k] if len(weighed) >= k else -math.inf
            # only a passage that would be in the top k unweighed can change it by being named
            asked = [pid for pid, score in fused if pid in held and score >= last]
            for pid in named(store, query, asked, tuning.minor_named):
                del held[pid]
            fused = sorted(
                ((pid, score - tuning.minor_weight * held.get(pid, 0.0)) for pid, score in fused),
                key=lambda item: (-item[1], item[0]),
            )
    return fused[:k]


def hybrid_rankings(
    store: Store,
    scope: Scope,
    query: str,
    vector: np.ndarray,
    depth: int,
    tuning: Tuning = TUNED,
    seen: Lookup | None = None,
) -> tuple[Ranking, Ranking]:
    """The vector and the keyword ranking of a hybrid search, `depth` deep, before fusion."""
    seen = seen or look_up(store, scope)
    dense_hits = vector_scores(store, scope, vector, depth, seen, query, tuning.fair)
    mean, std = vector_distribution(store, scope, vector, seen, query, tuning.fair)
    sparse = keyword_ranking(store, scope, query, depth, seen, tuning.for_query(query))
    return Ranking(dense_hits, mean, std), sparse


def fuse(
    dense: Ranking, sparse: Ranking, depth: int, tuning: Tuning = TUNED
) -> list[tuple[int, float]]:
    """Score-normalised fusion: each score becomes a z-score over the whole scope.

    A z-score measures how far a passage stands out from the rest of the notebook in that
    ranking, so each ranking weighs in by how clearly it separates a few passages for *this*
    query: BM25 on a Chinese question puts the right passage ~17 standard deviations out, the
    English embedding model ~4 (noise); on English both are informative and add up.
    A passage missing from a ranking gets that ranking's last candidate score (or 0 for BM25
    when fewer than `depth` passages matched at all).
    BM25 weighs in by the share of the query's words the scope has at all, to the power
    `tuning.coverage_power`: a question in another language than the sources shares few words
    with them, and those it shares (a German "die", "war") match by chance.
    """
    if sparse.mixed:
        tuning = dataclasses.replace(
            tuning,
            dense_weight=tuning.mixed_dense_weight,
            coverage_power=tuning.mixed_coverage_power,
        )
    keyword_weight = sparse.coverage**tuning.coverage_power
    dense_scores = dict(dense.hits)
    sparse_scores = dict(sparse.hits)
    dense_missing = dense.hits[-1][1] if dense.hits else dense.mean
    sparse_missing = sparse.hits[-1][1] if len(sparse.hits) >= depth else 0.0
    fused = {}
    for pid in dense_scores.keys() | sparse_scores.keys():
        z_dense = (dense_scores.get(pid, dense_missing) - dense.mean) / dense.std
        z_sparse = (sparse_scores.get(pid, sparse_missing) - sparse.mean) / sparse.std
        dense_part = tuning.dense_weight * max(z_dense - tuning.dense_floor, 0.0)
        fused[pid] = dense_part + keyword_weight * z_sparse
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / (float(np.linalg.norm(v)) or 1.0)


INDEX_LOOKUPS = 64  # above this many hits, one scan of the passages beats the lookups


def fetch_hits(store: Store, ranked: list[tuple[int, float]]) -> list[Hit]:
    """Load the passages behind ranked ids, keeping the ranking's order."""
    if not ranked:
        return []
    ids = [pid for pid, _ in ranked]
    if len(ids) <= INDEX_LOOKUPS:
        # One lookup in the primary key's index per passage: at 100k passages the semi-join
        # (which scans the table) took ~3x longer for 8 hits, list_contains ~12x.
        source = "(" + " UNION ALL ".join(["SELECT * FROM passages WHERE id = ?"] * len(ids)) + ")"
        params: list[object] = ids
    else:
        source, params = "(SELECT * FROM passages WHERE id IN (SELECT unnest(?::BIGINT[])))", [ids]
    with store.lock:
        rows = store.db.execute(
            'SELECT p.id, p.document_id, d.title, p.idx, p.start, p."end", p.page_start, '
            f"p.page_end, p.text, p.section, p.language FROM {source} p "
            "JOIN documents d ON d.id = p.document_id",
            params,
        ).fetchall()
    by_id = {row[0]: row for row in rows}
    hits = []
    for pid, score in ranked:
        row = by_id.get(pid)
        if row is not None:
            hits.append(
                Hit(*row[:8], score=score, text=row[8], section=row[9] or "", language=row[10])
            )
    return hits


@contextlib.contextmanager
def _no_vectors_yet() -> Iterator[None]:
    """Leave the block quietly when no vector of that dimension was ever stored.

    Cheaper than asking the catalog first, which took ~1.5 ms of every search.
    """
    try:
        yield
    except duckdb.CatalogException as e:
        if "vectors_" not in str(e):
            raise
