"""Search codes: the sign bits of each passage vector, kept beside the vectors.

A scan over these compact codes (Hamming distance in SQL) picks the candidates that the vector
search then ranks exactly. Written with every passage in the import's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import pyarrow as pa

CODE_BITS = 384  # six 64-bit words a passage, whatever the model's dimension


def binary_codes(vectors: np.ndarray) -> np.ndarray:
    """Sign bits of each vector as six 64-bit words (int64: DuckDB counts BIGINT bits fastest).

    Vectors of another dimension than 384 are first multiplied by a fixed random matrix, so the
    bits are random hyperplane hashes (the Hamming distance still tracks the angle).
    """
    x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    if x.shape[1] != CODE_BITS:
        projection = np.random.default_rng(x.shape[1]).standard_normal((x.shape[1], CODE_BITS))
        x = x @ projection.astype(np.float32)
    return np.packbits(x > 0, axis=1).view(">i8").astype(np.int64)


def insert_codes(
    db: duckdb.DuckDBPyConnection,
    passage_ids: Sequence[int],
    notebook_ids: Sequence[int],
    document_ids: Sequence[int],
    vectors: np.ndarray,
) -> None:
    """Store the codes of new passages (called inside the import's transaction)."""
    codes = binary_codes(vectors)
    columns = {f"c{i}": pa.array(codes[:, i], pa.int64()) for i in range(codes.shape[1])}
    rows = pa.table(
        {
            "passage_id": pa.array(np.asarray(passage_ids), pa.int64()),
            "notebook_id": pa.array(np.asarray(notebook_ids), pa.int64()),
            "document_id": pa.array(np.asarray(document_ids), pa.int64()),
            **columns,
        }
    )
    db.register("new_codes", rows)
    try:
        db.execute("INSERT INTO passage_codes SELECT * FROM new_codes")
    finally:
        db.unregister("new_codes")
