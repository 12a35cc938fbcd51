"""Vector scores that stay fair in a notebook of several languages.

A multilingual encoder puts every text of one language near a point of its own: a German
question sits closer to any German passage than to the English one that answers it. In a
notebook holding more than one language, each passage's vector is therefore scored with its
language's mean removed, and the question's with the mean of its own language (when the notebook
holds it; else the notebook's): the cosine of the two centred vectors. Centring on one mean for
the whole notebook does nothing for this; per language it took vector recall@5 on the Russian
mixed set from 0.51 to 0.92 (docs/benchmarks.md). A notebook of one language is scored as before.

The means are sums over the notebook's stored vectors per passage language (`passages.language`),
computed in SQL when the notebook's documents change, so they follow sources as they come and go.
The search codes stored at import are taken around the model's centre, which lies between the
languages' means: there the bits of a passage say mostly which language it is in (of a 100k
notebook in two languages, the pass over them kept the exact top 10 for 7 of 60 questions). A
notebook of several languages therefore has its codes made again in memory, of the centred
vectors, when its documents change (`centred_codes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from knownote.index.codes import CodeIndex, binary_codes
from knownote.index.language import question_language

# A language counts as held by a notebook from this many passages (a stray paragraph read as
# Welsh is none); a notebook holding two or more is centred.
MIN_HELD = 5
# Each language's mean is drawn towards the notebook's as if it had this many more passages
# there: a language of a few passages would otherwise lose all of them to its own mean.
PRIOR = 10
NONE = ""  # the group of passages with no language read (figures, code)
READ_BATCH = 65_536  # vectors read at a time to make the centred codes


def held_languages(counts: dict[str, int]) -> tuple[str, ...]:
    """Of passage counts per language, the languages held enough to count."""
    return tuple(name for name, n in counts.items() if name != NONE and n >= MIN_HELD)


@dataclass(frozen=True)
class LanguageMeans:
    """The mean passage vector of each language of a notebook (shrunk towards the notebook's)."""

    names: tuple[str, ...]  # a language code per row of `means`; NONE for no language
    counts: tuple[int, ...]
    means: np.ndarray  # (languages, dim) float32

    @property
    def held(self) -> tuple[str, ...]:
        """The languages the notebook holds enough of to count."""
        return held_languages(dict(zip(self.names, self.counts, strict=True)))

    @property
    def mixed(self) -> bool:
        """Whether scores are centred: the notebook holds two languages or more."""
        return len(self.held) >= 2

    def rows(self, languages: Sequence[str | None]) -> np.ndarray:
        """The row of `means` for each passage language."""
        place = {name: i for i, name in enumerate(self.names)}
        none = place.get(NONE, 0)
        return np.fromiter(
            (place.get(language or NONE, none) for language in languages), np.int64, len(languages)
        )

    def query(self, vector: np.ndarray, text: str) -> np.ndarray:
        """The question's unit vector with its language's mean removed; the notebook's mean
        when the notebook does not hold that language (a German question over English and
        Chinese sources), so that it lies among the centred vectors as theirs do."""
        language = question_language(text, self.held)
        if language is not None:
            mean = self.means[self.names.index(language)]
        else:
            weights = np.asarray(self.counts, dtype=np.float32)
            mean = weights @ self.means / max(float(weights.sum()), 1.0)
        v = np.asarray(vector, dtype=np.float32) - mean
        return v / (float(np.linalg.norm(v)) or 1.0)

    def shifts(self, query: np.ndarray) -> np.ndarray:
        """Each language mean's inner product with the (centred) query."""
        return self.means @ query

    def lengths(self, vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The length of each unit vector of `vectors` less its language's mean (`rows`)."""
        means = self.means[rows]
        squares = 1.0 - 2.0 * np.einsum("ij,ij->i", vectors, means) + (means**2).sum(1)
        return np.sqrt(np.maximum(squares, 1e-6))

    def scores(
        self,
        vectors: np.ndarray,
        rows: np.ndarray,
        query: np.ndarray,
        lengths: np.ndarray | None = None,
    ) -> np.ndarray:
        """Cosine of each centred passage vector (unit `vectors`, language `rows`, `lengths` if
        known) and the centred `query`, as vector search computes it in DuckDB."""
        lengths = self.lengths(vectors, rows) if lengths is None else lengths
        return (vectors @ query - self.shifts(query)[rows]) / lengths


def load_language_means(
    db: duckdb.DuckDBPyConnection, notebook_id: int, table: str, dim: int
) -> LanguageMeans:
    """The notebook's language means, from the vectors in `table` (the notebook's dimension).
    Only a notebook of several languages reads its vectors."""
    counted = db.execute(
        "SELECT coalesce(language, ?), count(*) FROM passages WHERE notebook_id = ? "
        "GROUP BY ALL ORDER BY 1",
        [NONE, notebook_id],
    ).fetchall()
    names = tuple(name for name, _ in counted)
    counts = tuple(int(n) for _, n in counted)
    single = LanguageMeans(names, counts, np.zeros((len(names), dim), dtype=np.float32))
    if not single.mixed:
        return single
    sums = ", ".join(f"sum(v.embedding[{i + 1}])" for i in range(dim))
    rows = db.execute(
        f"SELECT coalesce(p.language, ?), [{sums}]::DOUBLE[] FROM {table} v "
        "JOIN passages p ON p.id = v.passage_id WHERE p.notebook_id = ? GROUP BY ALL",
        [NONE, notebook_id],
    ).fetchall()
    total = {name: np.asarray(s, dtype=np.float64) for name, s in rows}
    overall = sum(total.values()) / max(sum(counts), 1)
    means = np.stack(
        [
            (total.get(name, 0.0) + PRIOR * overall) / (n + PRIOR)
            for name, n in zip(names, counts, strict=True)
        ]
    ).astype(np.float32)
    return LanguageMeans(names, counts, means)


def centred_codes(
    db: duckdb.DuckDBPyConnection, notebook_id: int, table: str, means: LanguageMeans
) -> tuple[CodeIndex, np.ndarray, np.ndarray]:
    """The search codes of the notebook's vectors centred on their language's mean, in passage
    id order, each passage's row of `means` and its centred vector's length (the vectors are
    read in batches)."""
    reader = db.sql(
        "SELECT v.passage_id, p.document_id, coalesce(p.language, ?) AS language, v.embedding "
        f"FROM {table} v JOIN passages p ON p.id = v.passage_id WHERE p.notebook_id = ? "
        "ORDER BY v.passage_id",
        params=[NONE, notebook_id],
    ).to_arrow_reader(READ_BATCH)
    dim = means.means.shape[1]
    ids, documents, rows, codes, lengths = [], [], [], [], []
    for batch in reader:
        vectors = batch.column("embedding").flatten().to_numpy().reshape(-1, dim)
        mine = means.rows(batch.column("language").to_pylist())
        codes.append(binary_codes(vectors - means.means[mine]))
        lengths.append(means.lengths(vectors, mine))
        ids.append(batch.column("passage_id").to_numpy())
        documents.append(batch.column("document_id").to_numpy())
        rows.append(mine)
    if not ids:
        empty = np.zeros(0, dtype=np.int64)
        return CodeIndex(empty, empty, np.zeros((0, 6), dtype=np.uint64)), empty, empty
    index = CodeIndex(
        np.concatenate(ids).astype(np.int64),
        np.concatenate(documents).astype(np.int64),
        np.concatenate(codes).view(np.uint64),
    )
    return index, np.concatenate(rows), np.concatenate(lengths)
