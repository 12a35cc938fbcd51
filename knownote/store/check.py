"""Whole-database verification: every document whole, no orphan rows, one kept file per document
and per audio overview.

Used by `knownote check`, by the archive import (on the notebook it is about to commit) and by the
crash tests. Each problem is one sentence in plain words.
"""

from __future__ import annotations

from itertools import pairwise

import duckdb
import numpy as np

from knownote.index.analyze import passage_terms
from knownote.index.codes import binary_codes, code_center
from knownote.index.context import heading
from knownote.read.roles import ROLES
from knownote.store.db import Store, sha256_hex, vectors_table

# Rows that must point at a row that exists: (table, column, parent table, parent column).
REFERENCES = [
    ("documents", "notebook_id", "notebooks", "id"),
    ("pages", "document_id", "documents", "id"),
    ("passages", "document_id", "documents", "id"),
    ("passages", "notebook_id", "notebooks", "id"),
    ("passage_terms", "passage_id", "passages", "id"),
    ("passage_codes", "passage_id", "passages", "id"),
    ("passage_codes", "document_id", "documents", "id"),
    ("chats", "notebook_id", "notebooks", "id"),
    ("messages", "chat_id", "chats", "id"),
    ("answer_passages", "message_id", "messages", "id"),
    ("ocr_pages", "document_id", "documents", "id"),
    ("answer_supports", "message_id", "messages", "id"),
    ("notes", "notebook_id", "notebooks", "id"),
    ("document_overviews", "document_id", "documents", "id"),
    ("note_passages", "note_id", "notes", "id"),
    ("note_supports", "note_id", "notes", "id"),
    ("headings", "document_id", "documents", "id"),
    ("roles", "document_id", "documents", "id"),
    ("spoken", "document_id", "documents", "id"),
    ("web_pages", "document_id", "documents", "id"),
    ("reembeds", "notebook_id", "notebooks", "id"),
    ("mind_maps", "notebook_id", "notebooks", "id"),
    ("mind_map_nodes", "map_id", "mind_maps", "id"),
    ("mind_map_links", "map_id", "mind_maps", "id"),
    ("mind_map_cites", "map_id", "mind_maps", "id"),
    ("cards", "document_id", "documents", "id"),
    ("cards", "notebook_id", "notebooks", "id"),
    ("card_sources", "document_id", "documents", "id"),
    ("card_schedule", "card_id", "cards", "id"),
    ("card_reviews", "card_id", "cards", "id"),
    ("reports", "notebook_id", "notebooks", "id"),
    ("report_lines", "report_id", "reports", "id"),
    ("report_cites", "report_id", "reports", "id"),
    ("report_sources", "report_id", "reports", "id"),
    ("audio_overviews", "notebook_id", "notebooks", "id"),
    ("audio_lines", "overview_id", "audio_overviews", "id"),
    ("audio_cites", "overview_id", "audio_overviews", "id"),
    ("audio_sources", "overview_id", "audio_overviews", "id"),
]


def vector_tables(db: duckdb.DuckDBPyConnection) -> list[str]:
    rows = db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'vectors_%' "
        "ORDER BY table_name"
    ).fetchall()
    return [row[0] for row in rows]


def orphan_rows(db: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows whose parent row is gone (or, for passages, rows missing a vector or a code)."""
    found = {}
    checks = [
        (f"{table}.{column}", f"SELECT count(*) FROM {table} WHERE {column} NOT IN "
         f"(SELECT {parent_column} FROM {parent})")
        for table, column, parent, parent_column in REFERENCES
    ]  # fmt: skip
    checks.append(
        ("passage_codes.notebook_id", "SELECT count(*) FROM passage_codes c JOIN passages p "
         "ON p.id = c.passage_id WHERE c.notebook_id <> p.notebook_id OR "
         "c.document_id <> p.document_id")
    )  # fmt: skip
    checks.append(
        ("passages without a code", "SELECT count(*) FROM passages WHERE id NOT IN "
         "(SELECT passage_id FROM passage_codes)")
    )  # fmt: skip
    for table in vector_tables(db):
        dim = int(table.removeprefix("vectors_"))
        checks.append(
            (f"{table}.passage_id", f"SELECT count(*) FROM {table} WHERE passage_id NOT IN "
             "(SELECT id FROM passages)")
        )  # fmt: skip
        checks.append(
            (f"passages without a row in {table}", "SELECT count(*) FROM passages p JOIN "
             f"notebooks n ON n.id = p.notebook_id WHERE n.embedding_dim = {dim} AND p.id "
             f"NOT IN (SELECT passage_id FROM {table})")
        )  # fmt: skip
    staged = db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE "
        "'staged_vectors_%' ORDER BY table_name"
    ).fetchall()
    for (table,) in staged:  # a re-embed's new vectors: of passages of a notebook re-embedded
        checks.append(
            (f"{table}.passage_id", f"SELECT count(*) FROM {table} s LEFT JOIN passages p ON "
             "p.id = s.passage_id LEFT JOIN reembeds r ON r.notebook_id = p.notebook_id AND "
             f"'staged_vectors_' || r.dim = '{table}' WHERE r.notebook_id IS NULL")
        )  # fmt: skip
    for name, sql in checks:
        (n,) = db.execute(sql).fetchone()
        if n:
            found[name] = n
    return found


def describe_orphans(found: dict[str, int]) -> list[str]:
    return [f"{n} rows of {name} point at nothing (orphan rows)." for name, n in found.items()]


def document_problems(
    db: duckdb.DuckDBPyConnection, document_id: int, *, recount_terms: bool = True
) -> list[str]:
    """What is wrong with one stored document (nothing: an empty list).

    A document is whole when its passages are exact slices of its text in order, its pages are
    numbered and ordered and hold their passages, and every passage has a unit vector, the code
    of that vector and (with `recount_terms`) keyword rows equal to a recount of its text.
    """
    row = db.execute(
        "SELECT d.title, d.text, d.n_chars, d.n_pages, d.n_passages, n.embedding_dim, "
        "d.terms_as, n.id FROM documents d JOIN notebooks n ON n.id = d.notebook_id "
        "WHERE d.id = ?",
        [document_id],
    ).fetchone()
    if row is None:
        return [f"Document {document_id} has no notebook."]
    title, text, n_chars, n_pages, n_passages, dim, terms_as, notebook_id = row
    name = f"Document {document_id} (“{title}”)"
    problems = []
    passages = db.execute(
        'SELECT id, idx, start, "end", page_start, page_end, text, section FROM passages '
        "WHERE document_id = ? ORDER BY idx",
        [document_id],
    ).fetchall()
    pages = db.execute(
        'SELECT page_no, start, "end" FROM pages WHERE document_id = ? ORDER BY page_no',
        [document_id],
    ).fetchall()
    if n_chars != len(text):
        problems.append(f"{name} records {n_chars} characters but its text has {len(text)}.")
    if not passages:
        problems.append(f"{name} has no passages.")
    if n_passages != len(passages):
        problems.append(f"{name} records {n_passages} passages but {len(passages)} are stored.")
    if n_pages != len(pages):
        problems.append(f"{name} records {n_pages} pages but {len(pages)} are stored.")
    if [p[1] for p in passages] != list(range(len(passages))):
        problems.append(f"{name}: its passages are not numbered 0, 1, 2, … without gaps.")
    bad = [p[1] for p in passages if not 0 <= p[2] < p[3] <= len(text) or text[p[2] : p[3]] != p[6]]
    if bad:
        problems.append(
            f"{name}: {len(bad)} passages are not the text at their offsets (first: {bad[0]})."
        )
    headings = db.execute(
        'SELECT start, "end", level FROM headings WHERE document_id = ?', [document_id]
    ).fetchall()
    if any(
        not (0 <= a < b <= len(text) and level >= 1 and text[a:b].strip())
        for a, b, level in headings
    ):
        problems.append(f"{name}: some headings fall outside its text or hold no words.")
    roles = db.execute(
        'SELECT start, "end", role FROM roles WHERE document_id = ? ORDER BY start', [document_id]
    ).fetchall()
    if any(not (0 <= a < b <= len(text)) or role not in ROLES[1:] for a, b, role in roles) or any(
        a[1] > b[0] for a, b in pairwise(roles)
    ):
        problems.append(f"{name}: some roles fall outside its text, overlap or are unknown.")
    # A source's text never changes: a report's (or an audio overview's) citation of it that no
    # longer quotes it at its range was damaged (a changed source is a new document, and the
    # citation of the old stale).
    for table, what in (("report_cites", "report"), ("audio_cites", "audio overview")):
        cites = db.execute(
            f'SELECT start, "end", quote FROM {table} WHERE document_id = ?', [document_id]
        ).fetchall()
        misquoted = sum(text[a:b] != quote for a, b, quote in cites)
        if misquoted:
            problems.append(
                f"{name}: {misquoted} {what} citations do not quote its text at their range."
            )
    if pages:
        if [p[0] for p in pages] != list(range(1, len(pages) + 1)):
            problems.append(f"{name}: its pages are not numbered 1, 2, 3, … without gaps.")
        if any(a[2] > b[1] for a, b in pairwise(pages)) or any(
            not 0 <= p[1] <= p[2] <= len(text) for p in pages
        ):
            problems.append(f"{name}: its page ranges overlap or fall outside the text.")
        by_number = {p[0]: p for p in pages}
        misplaced = [
            p[1]
            for p in passages
            if p[4] not in by_number
            or p[5] not in by_number
            or not by_number[p[4]][1] <= p[2] < by_number[p[4]][2]
            or not by_number[p[5]][1] < p[3] <= by_number[p[5]][2]
        ]
        if misplaced:
            problems.append(
                f"{name}: {len(misplaced)} passages name pages that do not hold them "
                f"(first: {misplaced[0]})."
            )
    table = vectors_table(dim)
    exists = db.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone()
    if passages and not exists:
        problems.append(f"{name}: its passages have no vectors ({table} is missing).")
        return problems
    if not passages:
        return problems
    got = db.execute(
        f"SELECT v.embedding FROM {table} v JOIN passages p ON p.id = v.passage_id "
        "WHERE p.document_id = ? ORDER BY p.idx",
        [document_id],
    ).fetchnumpy()["embedding"]
    if len(got) != len(passages):
        problems.append(f"{name}: {len(passages)} passages but {len(got)} vectors.")
        return problems
    vectors = np.stack(got).astype(np.float32)
    if not np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3):
        problems.append(f"{name}: some vectors are not of unit length.")
    codes = db.execute(
        "SELECT c0, c1, c2, c3, c4, c5 FROM passage_codes c JOIN passages p ON p.id = c.passage_id "
        "WHERE p.document_id = ? ORDER BY p.idx",
        [document_id],
    ).fetchall()
    if len(codes) != len(passages) or not np.array_equal(
        np.array(codes, dtype=np.int64), binary_codes(vectors, code_center(db, notebook_id))
    ):
        problems.append(f"{name}: the search codes do not match the vectors.")
    if recount_terms:
        stored = {
            (pid, term): tf
            for pid, term, tf in db.execute(
                "SELECT t.passage_id, t.term, t.tf FROM passage_terms t JOIN passages p "
                "ON p.id = t.passage_id WHERE p.document_id = ?",
                [document_id],
            ).fetchall()
        }
        counted = [passage_terms(p[6], heading(title, p[7]), terms_as) for p in passages]
        expected = {
            (p[0], t): tf
            for p, (c, _) in zip(passages, counted, strict=True)
            for t, tf in c.items()
        }
        n_terms = db.execute(
            "SELECT n_terms FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
        ).fetchall()
        if stored != expected or [n for (n,) in n_terms] != [n for _, n in counted]:
            problems.append(f"{name}: its keyword index does not match its passages.")
    return problems


def file_problems(store: Store) -> list[str]:
    """Exactly one kept file per document hash and audio overview's audio, each holding the
    bytes of that hash."""
    originals = {row[0] for row in store.db.execute("SELECT sha256 FROM documents").fetchall()}
    audio = {
        row[0]
        for row in store.db.execute(
            "SELECT audio_sha256 FROM audio_overviews WHERE audio_sha256 IS NOT NULL"
        ).fetchall()
    }
    hashes = originals | audio
    folder = store.files_dir
    if folder is None:
        return []
    kept = {entry.name for entry in folder.iterdir()} if folder.is_dir() else set()
    problems = []
    missing = sorted(originals - kept)
    extra = sorted(kept - hashes)
    if missing:
        problems.append(
            f"{len(missing)} documents have lost their original file (first: {missing[0]})."
        )
    unheard = sorted(audio - kept)
    if unheard:
        problems.append(
            f"{len(unheard)} audio overviews have lost their audio file (first: {unheard[0]}); "
            "delete them and make them again."
        )
    if extra:
        problems.append(
            f"{len(extra)} kept files belong to no document or audio overview (first: {extra[0]})."
        )
    for digest in sorted(kept & hashes):
        if sha256_hex((folder / digest).read_bytes()) != digest:
            problems.append(f"The kept file {digest} does not hold the bytes it is named after.")
    return problems


def check_store(store: Store, *, files: bool = True) -> tuple[int, list[str]]:
    """Check the whole database; return (documents checked, problems in plain words)."""
    with store.lock:
        problems = describe_orphans(orphan_rows(store.db))
        ids = [
            row[0] for row in store.db.execute("SELECT id FROM documents ORDER BY id").fetchall()
        ]
        for document_id in ids:
            problems += document_problems(store.db, document_id)
        if files:
            problems += file_problems(store)
    return len(ids), problems
