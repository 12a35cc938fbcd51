"""Re-embedding a notebook with another model, without ever mixing two models' vectors.

The new vectors are staged beside the notebook's own (`staged_vectors_<dim>`), one document per
transaction, while every search goes on with the notebook's model and vectors. Once every passage
has its staged vector, one transaction puts them in place, rebuilds the search codes and records
the new model on the notebook. A stopped re-embed keeps what it staged and goes on from there;
one abandoned for another model drops what it staged. This module owns `reembeds` and the
staged tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from knownote.errors import NotFound
from knownote.index.codes import insert_codes
from knownote.store.db import (
    Store,
    arrow_table,
    ensure_vectors_table,
    insert_rows,
    vector_rows,
    vectors_table,
)


@dataclass(frozen=True)
class Reembed:
    notebook_id: int
    model: str
    dim: int


STAGED = "staged_vectors"


def staged_table(dim: int) -> str:
    return f"{STAGED}_{int(dim)}"


def _ensure_staged(db: duckdb.DuckDBPyConnection, dim: int) -> str:
    return ensure_vectors_table(db, dim, STAGED)


def _drop_staged(db: duckdb.DuckDBPyConnection, notebook_id: int, dim: int) -> None:
    table = staged_table(dim)
    if db.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone():
        db.execute(
            f"DELETE FROM {table} WHERE passage_id IN "
            "(SELECT id FROM passages WHERE notebook_id = ?)",
            [notebook_id],
        )


def reembed_of(store: Store, notebook_id: int) -> Reembed | None:
    """The re-embed under way for the notebook, if any."""
    with store.lock:
        row = store.db.execute(
            "SELECT notebook_id, model, dim FROM reembeds WHERE notebook_id = ?", [notebook_id]
        ).fetchone()
    return Reembed(*row) if row else None


def reembeds(store: Store) -> list[Reembed]:
    """Every re-embed under way."""
    with store.lock:
        rows = store.db.execute(
            "SELECT notebook_id, model, dim FROM reembeds ORDER BY notebook_id"
        ).fetchall()
    return [Reembed(*row) for row in rows]


def start_reembed(store: Store, notebook_id: int, model: str, dim: int) -> Reembed:
    """Record the model the notebook is being re-embedded with. The same model again goes on
    from what was staged; another model starts over."""
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM notebooks WHERE id = ?", [notebook_id]).fetchone() is None:
            raise NotFound(f"The notebook {notebook_id} was deleted.")
        row = db.execute(
            "SELECT model, dim FROM reembeds WHERE notebook_id = ?", [notebook_id]
        ).fetchone()
        if row == (model, dim):
            return Reembed(notebook_id, model, dim)
        if row is not None:
            _drop_staged(db, notebook_id, row[1])
            db.execute("DELETE FROM reembeds WHERE notebook_id = ?", [notebook_id])
        db.execute(
            "INSERT INTO reembeds (notebook_id, model, dim) VALUES (?, ?, ?)",
            [notebook_id, model, dim],
        )
    return Reembed(notebook_id, model, dim)


def cancel_reembed(store: Store, notebook_id: int) -> None:
    """Forget the re-embed and what it staged; the notebook keeps its model."""
    with store.transaction() as db:
        delete_notebook_reembed(db, notebook_id)


def delete_notebook_reembed(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    """Inside the caller's transaction (also `knownote.notebooks.delete_notebook`'s)."""
    row = db.execute("SELECT dim FROM reembeds WHERE notebook_id = ?", [notebook_id]).fetchone()
    if row is not None:
        _drop_staged(db, notebook_id, row[0])
        db.execute("DELETE FROM reembeds WHERE notebook_id = ?", [notebook_id])


def documents_to_reembed(store: Store, reembed: Reembed) -> list[int]:
    """The notebook's documents with a passage that has no staged vector yet, oldest first."""
    with store.transaction() as db:
        table = _ensure_staged(db, reembed.dim)
        rows = db.execute(
            f"SELECT DISTINCT p.document_id FROM passages p LEFT JOIN {table} s "
            "ON s.passage_id = p.id WHERE p.notebook_id = ? AND s.passage_id IS NULL "
            "ORDER BY p.document_id",
            [reembed.notebook_id],
        ).fetchall()
    return [row[0] for row in rows]


def stage_vectors(
    store: Store, reembed: Reembed, document_id: int, starts: Sequence[int], vectors: np.ndarray
) -> None:
    """Stage a document's new vectors, one per passage in order. Raises NotFound when the
    document was deleted, or re-split, meanwhile (its passages start elsewhere)."""
    with store.transaction() as db:
        rows = db.execute(
            "SELECT id, start FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
        ).fetchall()
        if not rows or [s for _, s in rows] != list(starts):
            raise NotFound(f"The passages of document {document_id} changed meanwhile.")
        if vectors.shape != (len(rows), reembed.dim):
            raise ValueError("one vector of the new model's dimension per passage is required")
        table = _ensure_staged(db, reembed.dim)
        ids = [i for i, _ in rows]
        db.execute(f"DELETE FROM {table} WHERE passage_id IN (SELECT unnest(?::BIGINT[]))", [ids])
        insert_rows(db, table, vector_rows(ids, vectors))


def finish_reembed(store: Store, reembed: Reembed, embedded_as: str) -> bool:
    """Put the staged vectors in place and record the new model, in one transaction; False
    (and nothing changed) when a passage still has no staged vector."""
    notebook_id, dim = reembed.notebook_id, reembed.dim
    with store.transaction() as db:
        staged = _ensure_staged(db, dim)
        (missing,) = db.execute(
            f"SELECT count(*) FROM passages p LEFT JOIN {staged} s ON s.passage_id = p.id "
            "WHERE p.notebook_id = ? AND s.passage_id IS NULL",
            [notebook_id],
        ).fetchone()
        if missing:
            return False
        row = db.execute("SELECT embedding_dim FROM notebooks WHERE id = ?", [notebook_id])
        (old_dim,) = row.fetchone()
        inside = "passage_id IN (SELECT id FROM passages WHERE notebook_id = ?)"
        old = vectors_table(old_dim)
        if db.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [old]
        ).fetchone():
            db.execute(f"DELETE FROM {old} WHERE {inside}", [notebook_id])
        table = ensure_vectors_table(db, dim)
        db.execute(
            f"INSERT INTO {table} SELECT s.* FROM {staged} s WHERE s.{inside}", [notebook_id]
        )
        db.execute(
            "UPDATE notebooks SET embedding_model = ?, embedding_dim = ? WHERE id = ?",
            [reembed.model, dim, notebook_id],
        )
        # The codes are taken around the new model's centre (set just above).
        db.execute("DELETE FROM passage_codes WHERE notebook_id = ?", [notebook_id])
        ids, documents, vectors = _staged_rows(db, staged, notebook_id, dim)
        if len(ids):
            insert_codes(db, ids, [notebook_id] * len(ids), documents, vectors)
        db.execute(f"DELETE FROM {staged} WHERE {inside}", [notebook_id])
        db.execute(
            "UPDATE documents SET embedded_as = ? WHERE notebook_id = ?", [embedded_as, notebook_id]
        )
        db.execute("DELETE FROM reembeds WHERE notebook_id = ?", [notebook_id])
    return True


def _staged_rows(
    db: duckdb.DuckDBPyConnection, staged: str, notebook_id: int, dim: int
) -> tuple[list[int], list[int], np.ndarray]:
    rows = db.execute(
        f"SELECT p.id, p.document_id, s.embedding FROM {staged} s JOIN passages p "
        "ON p.id = s.passage_id WHERE p.notebook_id = ? ORDER BY p.id",
        [notebook_id],
    )
    rows = arrow_table(rows)
    embeddings = rows.column("embedding").combine_chunks()
    vectors = embeddings.values.to_numpy(zero_copy_only=False).reshape(len(rows), dim)
    return rows.column("id").to_pylist(), rows.column("document_id").to_pylist(), vectors
