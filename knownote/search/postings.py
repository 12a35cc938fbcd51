"""A notebook's keyword rows in memory as posting lists, and BM25F scored over them.

DuckDB keeps the keyword rows (`passage_terms`); a search used to scan them for the query's
terms. Sorted by term, that scan still read every row group whose range could hold a query term:
~14 ms of the 13–21 ms a keyword search took at 100k passages. Here each term's rows are one
slice of an array, found by binary search, so a query reads only its own terms' rows.

The lists are read once per notebook (1.5–2 s per 100k passages on this machine) and kept while
the notebook's documents stay the same; documents added since are read alone and kept as another
segment of lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from knownote.index.analyze import QueryRow
from knownote.store.db import arrow_table, term_key

READ_BATCH = 1 << 20  # keyword rows read at a time
TF_MAX = np.iinfo(np.uint16).max
# Segments kept before they are merged into one (each costs a binary search per query term).
SEGMENTS_MAX = 8


@dataclass(frozen=True)
class Segment:
    """Posting lists: the rows of term `keys[i]` are `rows[starts[i]:starts[i + 1]]`."""

    keys: np.ndarray  # int64 term keys (knownote.store.db.TERM_KEY), ascending, each once
    starts: np.ndarray  # int64, one more than keys
    rows: np.ndarray  # int32: the passage's place in `Postings`' per-passage arrays
    tf: np.ndarray  # uint16: the term's count in the passage (or heading)


@dataclass(frozen=True)
class Postings:
    """The keyword rows of some documents of a notebook, and their passages."""

    # (document id, how its terms were made and its languages read) held
    documents: frozenset[tuple[int, str]]
    ids: np.ndarray  # int64 passage id of each row
    document: np.ndarray  # int64 document id of each row
    n_terms: np.ndarray  # float64 passage length in terms
    language: np.ndarray  # int32 index into `languages`
    languages: tuple[str, ...]  # '' for a passage whose language was not read
    segments: tuple[Segment, ...]

    def lists(self, key: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The (rows, tf) of a term key, one pair per segment holding it."""
        found = []
        for segment in self.segments:
            i = int(np.searchsorted(segment.keys, key))
            if i < len(segment.keys) and segment.keys[i] == key:
                a, b = segment.starts[i], segment.starts[i + 1]
                found.append((segment.rows[a:b], segment.tf[a:b]))
        return found


EMPTY = Postings(
    frozenset(),
    np.zeros(0, np.int64),
    np.zeros(0, np.int64),
    np.zeros(0, np.float64),
    np.zeros(0, np.int32),
    (),
    (),
)


def load(
    db: duckdb.DuckDBPyConnection,
    notebook_id: int,
    documents: frozenset[tuple[int, str]],
    kept: Postings = EMPTY,
) -> Postings:
    """The postings of `documents`: `kept`'s reused when it holds only some of them, unchanged
    (documents are only ever added to it; any other change reads everything again)."""
    if not kept.documents <= documents:
        kept = EMPTY
    added = sorted(i for i, _ in documents - kept.documents)
    if not added:
        return kept
    passages = arrow_table(
        db.execute(
            "SELECT id, document_id, coalesce(n_terms, 0) AS n_terms, "
            "coalesce(language, '') AS language FROM passages "
            "WHERE notebook_id = ? AND list_contains(?::BIGINT[], document_id) ORDER BY id",
            [notebook_id, added],
        )
    )
    ids = passages["id"].to_numpy()
    languages = tuple(dict.fromkeys([*kept.languages, *passages["language"].to_pylist()]))
    code = {language: i for i, language in enumerate(languages)}
    first = len(kept.ids)
    merged = Postings(
        documents,
        np.concatenate([kept.ids, ids]),
        np.concatenate([kept.document, passages["document_id"].to_numpy()]),
        np.concatenate([kept.n_terms, passages["n_terms"].to_numpy().astype(np.float64)]),
        np.concatenate([kept.language, [code[x] for x in passages["language"].to_pylist()]]).astype(
            np.int32
        ),
        languages,
        kept.segments,
    )
    if len(ids) == 0:
        return merged
    # Each row's passage by its id; rows of passages outside `added` (another document's, in
    # the same range of ids) are left out.
    place = np.full(int(ids[-1] - ids[0]) + 1, -1, dtype=np.int32)
    place[ids - ids[0]] = np.arange(first, first + len(ids))
    where = "WHERE notebook_id = $1 AND passage_id BETWEEN $2 AND $3"
    params = [notebook_id, int(ids[0]), int(ids[-1])]
    ((count,),) = db.sql(f"SELECT count(*) FROM passage_terms {where}", params=params).fetchall()
    read = _Read(count)
    reader = db.sql(
        f"SELECT term_key, passage_id, tf FROM passage_terms {where}", params=params
    ).to_arrow_reader(READ_BATCH)
    for batch in reader:
        place_of = place[batch.column("passage_id").to_numpy() - ids[0]]
        held = place_of >= 0
        # BM25 saturates long before a count this high.
        tf = np.minimum(batch.column("tf").to_numpy()[held], TF_MAX)
        read.add(batch.column("term_key").to_numpy()[held], place_of[held], tf)
    segments = (*kept.segments, *read.segments())
    if len(segments) > SEGMENTS_MAX:
        segments = (_merged(segments),)
    return dataclasses.replace(merged, segments=segments)


class _Read:
    """Keyword rows as they are read, a batch at a time, kept compact: the rows that come in
    term order (Store.sort_terms keeps the table so, but for the rows added since) as runs of
    one term, the rest with a term a row, sorted at the end. Read whole and then sorted, a
    million passages' rows took 2.8 GB more memory at their peak than what is kept."""

    def __init__(self, count: int) -> None:
        self.rows = np.empty(count, np.int32)
        self.tf = np.empty(count, np.uint16)
        self.n = 0
        self.in_order = 0  # the first rows, in term order
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []  # (term keys, rows of each)
        self.rest: list[np.ndarray] = []  # the term key of each later row

    def add(self, keys: np.ndarray, rows: np.ndarray, tf: np.ndarray) -> None:
        m = len(keys)
        self.rows[self.n : self.n + m] = rows
        self.tf[self.n : self.n + m] = tf
        self.n += m
        if not m:
            return  # every row of the batch was another document's
        follows = not self.runs or keys[0] >= self.runs[-1][0][-1]
        if not self.rest and follows and (keys[1:] >= keys[:-1]).all():
            firsts = np.concatenate([[0], np.flatnonzero(np.diff(keys)) + 1])
            self.runs.append((keys[firsts], np.diff(np.append(firsts, m))))
            self.in_order += m
        else:
            self.rest.append(keys)

    def segments(self) -> list[Segment]:
        found = []
        if self.runs:
            keys = np.concatenate([k for k, _ in self.runs])
            lengths = np.concatenate([n for _, n in self.runs])
            # A term's run can go on in the next batch.
            firsts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
            starts = np.concatenate([[0], np.cumsum(np.add.reduceat(lengths, firsts))])
            end = self.in_order
            found.append(Segment(keys[firsts], starts, self.rows[:end], self.tf[:end]))
        if self.rest:
            rows = slice(self.in_order, self.n)
            found.append(_segment(np.concatenate(self.rest), self.rows[rows], self.tf[rows]))
        return found


def _segment(keys: np.ndarray, rows: np.ndarray, tf: np.ndarray) -> Segment:
    if len(keys) and not (keys[1:] >= keys[:-1]).all():
        order = np.argsort(keys, kind="stable")
        keys, rows, tf = keys[order], rows[order], tf[order]
    firsts = np.flatnonzero(np.diff(keys)) + 1 if len(keys) else np.zeros(0, np.int64)
    starts = np.concatenate([[0], firsts, [len(keys)]]).astype(np.int64)
    return Segment(keys[starts[:-1]], starts, rows, tf)


def _merged(segments: Sequence[Segment]) -> Segment:
    keys = np.concatenate([np.repeat(s.keys, np.diff(s.starts)) for s in segments])
    rows = np.concatenate([s.rows for s in segments])
    tf = np.concatenate([s.tf for s in segments])
    return _segment(keys, rows, tf)


@dataclass(frozen=True)
class Scored:
    """BM25F scores of the passages holding some query term (rows of `Postings`)."""

    rows: np.ndarray
    scores: np.ndarray
    found: int  # how many of the query's words some passage of the scope holds


def bm25f(
    postings: Postings,
    wanted: Sequence[QueryRow],
    in_scope: np.ndarray | None,
    n: int,
    avgdl: float,
    k1: float,
    b: float,
) -> Scored:
    """BM25F over the postings of `wanted` (see knownote.search.retrieve.keyword_ranking):
    each word's occurrences in its fields add up, weighted (and length-normalised where the row
    says so), before BM25's saturation; its df counts each passage of the scope once; `in_scope`
    (a mask over the rows, None for all) narrows the passages."""
    bases = {base: i for i, base in enumerate(dict.fromkeys(row[2] for row in wanted))}
    parts_rows, parts_tf, parts_base = [], [], []
    for term, _qtf, base, weight, normalise in wanted:
        for rows, tf in postings.lists(term_key(term)):
            if in_scope is not None:
                kept = in_scope[rows]
                rows, tf = rows[kept], tf[kept]
            tf = weight * tf.astype(np.float64)
            if normalise:
                tf /= 1 - b + b * postings.n_terms[rows] / avgdl
            parts_rows.append(rows)
            parts_tf.append(tf)
            parts_base.append(np.full(len(rows), bases[base], dtype=np.int64))
    rows = np.concatenate([np.zeros(0, np.int64), *parts_rows]).astype(np.int64)
    if not len(rows):
        return Scored(rows, np.zeros(0), 0)
    # One field per (passage, word): the sum of the word's weighted counts in the passage.
    field, inverse = np.unique(rows * len(bases) + np.concatenate(parts_base), return_inverse=True)
    tf = np.bincount(inverse, weights=np.concatenate(parts_tf))
    base = field % len(bases)
    df = np.bincount(base, minlength=len(bases))
    qtf = np.zeros(len(bases))
    for _term, count, word, _weight, _normalise in wanted:
        qtf[bases[word]] = count
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    part = qtf[base] * idf[base] * tf * (k1 + 1) / (tf + k1)
    # `field` is sorted by passage first: each passage's fields are one run.
    passage = field // len(bases)
    firsts = np.concatenate([[0], np.flatnonzero(np.diff(passage)) + 1])
    return Scored(passage[firsts], np.add.reduceat(part, firsts), int(np.count_nonzero(df)))


def top(ids: np.ndarray, values: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The `k` best (passage id, value), best first, ties by passage id."""
    if len(values) > k:
        cut = np.argpartition(-values, k - 1)[:k]
        # Ties at the cut: every passage scoring as the k-th competes on its id.
        cut = np.flatnonzero(values >= values[cut].min())
    else:
        cut = np.arange(len(values))
    order = cut[np.lexsort((ids[cut], -values[cut]))][:k]
    return [(int(i), float(v)) for i, v in zip(ids[order], values[order], strict=True)]


def by_language(
    postings: Postings, scored: Scored, counted: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Each scored passage's score measured against its language's passages of the scope (less
    their mean, over their spread; `counted`: how many passages each language has), and which
    scored passages have a counted language.

    Every word of a question matches passages of its own language ("в", "die", "的"), so those
    stood out of the rest by their language alone; measured against their own language, only
    passages that share more than that do."""
    names = postings.languages
    n = np.array([float(counted.get(name, 0)) for name in names] or [0.0])
    language = postings.language[scored.rows]
    known = n[language] > 0
    language, scores = language[known], scored.scores[known]
    mean = np.bincount(language, scores, minlength=len(n))
    square = np.bincount(language, scores * scores, minlength=len(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean, square = mean / n, square / n
    spread = np.sqrt(np.maximum(square - mean * mean, 0))
    spread[spread == 0] = 1
    return (scores - mean[language]) / spread[language], known
