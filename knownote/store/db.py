"""The DuckDB database: notebooks, documents, pages, passages, vectors and the keyword index.

One `Store` wraps one connection. Every call takes the store's lock, so the connection can be
shared by the threads of a Streamlit server. Writes that belong together run in `transaction()`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import threading
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from knownote.errors import DatabaseInUse, DiskFull, KnowNoteError, NotFound
from knownote.index.codes import insert_codes
from knownote.index.context import NewPassage
from knownote.index.language import passage_languages
from knownote.read.extracted import OcrPage, Page, Timed
from knownote.read.roles import LAYOUT_LATER, MINOR, ROLES_VERSION, RoleRange
from knownote.read.sections import Heading
from knownote.store.migrations import Progress, migrate


@dataclass(frozen=True)
class Notebook:
    id: int
    name: str
    embedding_model: str
    embedding_dim: int
    documents: int = 0
    passages: int = 0


@dataclass(frozen=True)
class Document:
    id: int
    notebook_id: int
    title: str
    filename: str
    kind: str
    sha256: str
    n_chars: int
    n_pages: int
    enabled: bool
    warnings: tuple[str, ...]
    passages: int = 0
    passage_size: int | None = None  # the split it was imported with (None: before it was kept)
    passage_overlap: int | None = None
    embedded_as: str = "text"  # see knownote.index.context: what the embedding model was given
    terms_as: str = "words"  # see knownote.index.analyze: how the keyword terms were made
    # ISO 639-1 codes, the main language first (knownote.index.language); () when the text has
    # too few letters to tell, None when not read yet (imported before languages were kept).
    languages: tuple[str, ...] | None = None
    roles_read: int | None = None  # the version of the rules that read its roles (None: never)


@dataclass(frozen=True)
class WebOrigin:
    """Where a source imported by its address came from, and when."""

    address: str
    final_address: str
    fetched_at: datetime  # UTC
    version: int = 1  # among the notebook's imports of the same address


@dataclass(frozen=True)
class Passage:
    id: int
    document_id: int
    idx: int
    start: int
    end: int
    page_start: int | None
    page_end: int | None
    text: str
    section: str = ""


NO_SPACE = "No space left on device"
DISK_FULL = (
    "The disk is full, so this was not saved; nothing was half-written and everything saved "
    "before is intact. Free some space and try again."
)

# The integer key of a term in passage_terms (see migration m010); SQL over a `term` column.
TERM_KEY = "(md5_number_lower(term) >> 1)::BIGINT"


def term_key(term: str) -> int:
    """TERM_KEY computed here: a search needs its terms' keys before its query is written."""
    return int.from_bytes(hashlib.md5(term.encode()).digest()[8:], "little") >> 1


# When Store.sort_terms_when_due rewrites the keyword rows: a search's posting lists read the
# rows in term order as runs of one term and sort the rest (knownote.search.postings), and a
# rewrite costs ~0.6 s per million rows.
# A source's second language is a language of its notebook when this share of sources has it.
SECOND_LANGUAGE_SHARE = 0.1
UNSORTED_TERMS_MIN = 200_000
UNSORTED_TERMS_SHARE = 0.25


def arrow_table(result: duckdb.DuckDBPyConnection) -> pa.Table:
    """A query's rows as an Arrow table."""
    # DuckDB 2 renamed fetch_arrow_table() to to_arrow_table() (and warns of a copy we accept).
    convert = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return convert()


def vector_rows(ids: Sequence[int], vectors: np.ndarray) -> pa.Table:
    """Passage ids and their vectors as an Arrow table made on numpy's memory: `pa.array`
    imports pandas, which took seconds of a cold import's first write."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    flat = np.ascontiguousarray(vectors, dtype=np.float32).ravel()
    embedding = pa.Array.from_buffers(pa.float32(), len(flat), [None, pa.py_buffer(flat)])
    return pa.Table.from_arrays(
        [
            pa.Array.from_buffers(pa.int64(), len(ids), [None, pa.py_buffer(ids)]),
            pa.FixedSizeListArray.from_arrays(embedding, vectors.shape[1]),
        ],
        names=["passage_id", "embedding"],
    )


def insert_rows(
    db: duckdb.DuckDBPyConnection, table: str, rows: dict[str, np.ndarray] | pa.Table
) -> None:
    """Insert columns of numpy arrays (or an Arrow table) into `table`, matched by name.

    DuckDB reads numpy arrays in place, without the pandas import that Arrow arrays made from
    Python objects cost (0.6–3.2 s of a cold import by the load, docs/benchmarks.md)."""
    columns = rows.column_names if isinstance(rows, pa.Table) else list(rows)
    names = ", ".join(f'"{name}"' for name in columns)
    db.register("new_rows", rows)
    try:
        db.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM new_rows")
    finally:
        db.unregister("new_rows")


def vectors_table(dim: int) -> str:
    """Vectors live in one table per dimension, as fixed-size FLOAT[dim] arrays."""
    return f"vectors_{int(dim)}"


def ensure_vectors_table(db: duckdb.DuckDBPyConnection, dim: int, prefix: str = "vectors") -> str:
    """Create the vectors table of that dimension when missing; return its name. (A re-embed
    stages its vectors in tables of another prefix: knownote.store.reembed.)"""
    table = f"{prefix}_{int(dim)}"
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {table} "
        f"(passage_id BIGINT PRIMARY KEY, embedding FLOAT[{int(dim)}] NOT NULL)"
    )
    return table


def _n_terms(passage: NewPassage) -> int:
    return sum(passage.terms.values()) if passage.n_terms is None else passage.n_terms


def _ranges(
    document_id: int, ranges: Sequence[Page | Heading | RoleRange | Timed]
) -> dict[str, np.ndarray]:
    """A document's ranges as columns for `insert_rows`: a few hundred rows by `executemany`
    took 0.4 s of a 352-page book's import (a recording has a row per word)."""
    return {
        "document_id": np.full(len(ranges), document_id, dtype=np.int64),
        "start": np.asarray([r.start for r in ranges], dtype=np.int64),
        "end": np.asarray([r.end for r in ranges], dtype=np.int64),
    }


def _insert_headings(
    db: duckdb.DuckDBPyConnection, document_id: int, headings: Sequence[Heading]
) -> None:
    if headings:
        levels = np.asarray([h.level for h in headings], dtype=np.int64)
        insert_rows(db, "headings", {**_ranges(document_id, headings), "level": levels})


def _insert_roles(
    db: duckdb.DuckDBPyConnection,
    document_id: int,
    roles: Sequence[RoleRange],
    read: int = ROLES_VERSION,
) -> None:
    """Store a document's roles, after its passages: each passage's share of minor parts
    (references, front matter, page furniture) is kept with it for retrieval to weigh. `read`:
    what read them (ROLES_VERSION, or LAYOUT_LATER)."""
    if roles:
        names = np.asarray([r.role for r in roles], dtype=object)
        insert_rows(db, "roles", {**_ranges(document_id, roles), "role": names})
    db.execute("UPDATE documents SET roles_read = ? WHERE id = ?", [read, document_id])
    db.execute("UPDATE passages SET minor = 0 WHERE document_id = ? AND minor > 0", [document_id])
    db.execute(
        'UPDATE passages SET minor = x.share FROM (SELECT p.id, sum(least(p."end", r."end") '
        '- greatest(p.start, r.start)) / (p."end" - p.start) AS share FROM passages p '
        'JOIN roles r ON r.document_id = p.document_id AND r.start < p."end" '
        'AND p.start < r."end" WHERE p.document_id = ? AND list_contains(?, r.role) '
        'GROUP BY p.id, p.start, p."end") x WHERE passages.id = x.id',
        [document_id, sorted(MINOR)],
    )


# The kept files in use: documents' originals and audio overviews' audio
# (knownote.store.audio_overviews).
KEPT_FILES = (
    "SELECT sha256 FROM documents UNION "
    "SELECT audio_sha256 FROM audio_overviews WHERE audio_sha256 IS NOT NULL"
)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Store:
    """The connection, and the SQL of the tables it owns: notebooks, documents, pages,
    passages, their vectors, codes and keyword rows. Other tables have their own modules (chats,
    notes, the import queue), which run their SQL through `transaction()` and the lock.
    Open with `Store.open(path)`; close with `close()`."""

    def __init__(self, db: duckdb.DuckDBPyConnection, path: Path | None) -> None:
        self.db = db
        self.path = path
        self.lock = threading.RLock()

    @classmethod
    def open(cls, path: Path | str | None, progress: Progress | None = None) -> Store:
        """Open (creating and migrating as needed) the database at `path`; None is in memory.
        `progress` is told of each migration before it runs (an old database being upgraded)."""
        db_path = Path(path) if path is not None else None
        if db_path is not None:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = duckdb.connect(str(db_path) if db_path else ":memory:")
        except duckdb.IOException as e:
            if "lock" in str(e).lower():
                raise DatabaseInUse(
                    f"The database {db_path} is in use by another KnowNote process (the app "
                    "or a knownote command). Close it and try again, or use another data "
                    "folder (KNOWNOTE_HOME, or --db on the command line)."
                ) from e
            raise KnowNoteError(f"Could not open the database {db_path}: {e}") from e
        store = cls(db, db_path)
        migrate(db, progress)
        store.remove_orphan_files()
        return store

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self.db.execute("BEGIN TRANSACTION")
            try:
                yield self.db
            except BaseException as e:
                self.db.execute("ROLLBACK")
                if isinstance(e, duckdb.Error) and NO_SPACE in str(e):
                    raise DiskFull(DISK_FULL) from e
                raise
            try:
                self.db.execute("COMMIT")
            except duckdb.Error as e:  # DuckDB ends the transaction when its commit fails
                if NO_SPACE in str(e):
                    raise DiskFull(DISK_FULL) from e
                raise

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self.lock:
            return self.db.execute(sql, list(params)).fetchall()

    def _one(self, sql: str, params: Sequence[object] = ()) -> tuple | None:
        with self.lock:
            return self.db.execute(sql, list(params)).fetchone()

    # --- original files -------------------------------------------------------------------

    @property
    def files_dir(self) -> Path | None:
        """Original bytes, named by their sha256, beside the database file."""
        return self.path.with_name(self.path.name + ".files") if self.path else None

    def file_path(self, sha256: str) -> Path | None:
        folder = self.files_dir
        return folder / sha256 if folder else None

    def save_file(self, data: bytes) -> str:
        """Keep the original bytes (atomically) under their hash; return the hash."""
        digest = sha256_hex(data)
        target = self.file_path(digest)
        if target is not None and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                tmp.write_bytes(data)
            except OSError as e:
                tmp.unlink(missing_ok=True)
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise DiskFull(DISK_FULL) from e
                raise
            os.replace(tmp, target)
        return digest

    def read_file(self, sha256: str) -> bytes:
        target = self.file_path(sha256)
        if target is None or not target.exists():
            raise NotFound("The original file is not kept for this document.")
        return target.read_bytes()

    def discard_file_if_unused(self, sha256: str) -> None:
        """Delete a kept file once no document (nor audio overview) refers to it any more.

        Checked and deleted under the lock, which an import holds from saving its file until its
        document commits, so a file about to be referred to is never deleted.
        """
        target = self.file_path(sha256)
        with self.lock:
            if target is not None and not self._one(
                f"SELECT 1 FROM ({KEPT_FILES}) WHERE sha256 = ?", [sha256]
            ):
                target.unlink(missing_ok=True)

    def remove_orphan_files(self) -> int:
        """Delete kept files no document or audio overview refers to (left by a killed import).

        Only safe while no import runs, so it is called when the database is opened; the
        database lock guarantees this process is the only one using the folder.
        """
        folder = self.files_dir
        if folder is None or not folder.is_dir():
            return 0
        wanted = {row[0] for row in self._all(KEPT_FILES)}
        removed = 0
        for entry in folder.iterdir():
            if entry.name not in wanted:
                entry.unlink(missing_ok=True)
                removed += 1
        return removed

    # --- notebooks ------------------------------------------------------------------------

    def create_notebook(self, name: str, embedding_model: str, embedding_dim: int) -> Notebook:
        name = name.strip()
        if not name:
            raise KnowNoteError("A notebook needs a name.")
        with self.transaction() as db:
            if db.execute("SELECT 1 FROM notebooks WHERE name = ?", [name]).fetchone():
                raise KnowNoteError(f"A notebook called “{name}” already exists.")
            (notebook_id,) = db.execute(
                "INSERT INTO notebooks (name, embedding_model, embedding_dim) VALUES (?, ?, ?) "
                "RETURNING id",
                [name, embedding_model, embedding_dim],
            ).fetchone()
        return self.notebook(notebook_id)

    _NOTEBOOK_SQL = """
        SELECT n.id, n.name, n.embedding_model, n.embedding_dim,
               (SELECT count(*) FROM documents d WHERE d.notebook_id = n.id),
               (SELECT coalesce(sum(d.n_passages), 0) FROM documents d WHERE d.notebook_id = n.id)
        FROM notebooks n
    """

    def notebooks(self) -> list[Notebook]:
        return [Notebook(*row) for row in self._all(self._NOTEBOOK_SQL + " ORDER BY n.id")]

    def notebook(self, notebook_id: int) -> Notebook:
        row = self._one(self._NOTEBOOK_SQL + " WHERE n.id = ?", [notebook_id])
        if row is None:
            raise NotFound(f"There is no notebook {notebook_id}.")
        return Notebook(*row)

    def notebook_by_name(self, name: str) -> Notebook | None:
        row = self._one(self._NOTEBOOK_SQL + " WHERE n.name = ?", [name.strip()])
        return Notebook(*row) if row else None

    def rename_notebook(self, notebook_id: int, name: str) -> None:
        name = name.strip()
        if not name:
            raise KnowNoteError("A notebook needs a name.")
        with self.transaction() as db:
            taken = db.execute(
                "SELECT 1 FROM notebooks WHERE name = ? AND id <> ?", [name, notebook_id]
            ).fetchone()
            if taken:
                raise KnowNoteError(f"A notebook called “{name}” already exists.")
            db.execute("UPDATE notebooks SET name = ? WHERE id = ?", [name, notebook_id])

    def delete_notebook_rows(self, db: duckdb.DuckDBPyConnection, notebook: Notebook) -> list[str]:
        """Delete the notebook's row and its documents' rows (inside the caller's transaction,
        in which the owners of the other tables delete theirs: `knownote.notebooks`). Returns
        the hashes of the kept files to discard once it commits."""
        rows = db.execute(
            "SELECT id, sha256 FROM documents WHERE notebook_id = ?", [notebook.id]
        ).fetchall()
        for document_id, _ in rows:
            self._delete_document_rows(db, document_id, notebook.embedding_dim)
        db.execute("DELETE FROM notebooks WHERE id = ?", [notebook.id])
        return [sha256 for _, sha256 in rows]

    # --- documents ------------------------------------------------------------------------

    _DOCUMENT_SQL = """
        SELECT d.id, d.notebook_id, d.title, d.filename, d.kind, d.sha256, d.n_chars, d.n_pages,
               d.enabled, d.warnings, d.n_passages, d.passage_size, d.passage_overlap,
               d.embedded_as, d.terms_as, d.languages, d.roles_read
        FROM documents d
    """

    @staticmethod
    def _document(row: tuple) -> Document:
        languages = None if row[15] is None else tuple(row[15])
        return Document(*row[:9], tuple(row[9] or ()), *row[10:15], languages, row[16])

    def documents(self, notebook_id: int) -> list[Document]:
        rows = self._all(
            self._DOCUMENT_SQL + " WHERE d.notebook_id = ? ORDER BY d.id", [notebook_id]
        )
        return [self._document(row) for row in rows]

    def document(self, document_id: int) -> Document:
        row = self._one(self._DOCUMENT_SQL + " WHERE d.id = ?", [document_id])
        if row is None:
            raise NotFound(f"There is no document {document_id}.")
        return self._document(row)

    def documents_without_languages(self, limit: int) -> list[int]:
        """Documents imported before their languages were kept (oldest first)."""
        rows = self._all(
            "SELECT id FROM documents WHERE languages IS NULL ORDER BY id LIMIT ?", [limit]
        )
        return [row[0] for row in rows]

    def notebook_languages(self, notebook_id: int) -> list[str]:
        """The languages of the notebook's sources used in answers, the most common first: each
        source's main language, and a second language held by a tenth of them at least (one
        source's stray paragraph, a list of names read as Aragonese, is no language to ask in)."""
        rows = self._all(
            "SELECT languages FROM documents WHERE notebook_id = ? AND enabled "
            "AND len(languages) > 0",
            [notebook_id],
        )
        held = Counter(code for (languages,) in rows for code in languages)
        main = {languages[0] for (languages,) in rows}
        kept = [c for c, n in held.items() if c in main or n >= SECOND_LANGUAGE_SHARE * len(rows)]
        return sorted(kept, key=lambda c: (-held[c], c))

    def passage_languages(self, notebook_id: int) -> dict[str, int]:
        """How many passages of the notebook's enabled sources are in each language, the most
        first (passages of no language read, such as tables of figures, are not counted)."""
        rows = self._all(
            "SELECT p.language, count(*) AS n FROM passages p "
            "JOIN documents d ON d.id = p.document_id "
            "WHERE p.notebook_id = ? AND d.enabled AND p.language IS NOT NULL "
            "GROUP BY ALL ORDER BY n DESC, p.language",
            [notebook_id],
        )
        return {language: int(n) for language, n in rows}

    def set_languages(self, document_id: int, languages: Sequence[str]) -> None:
        """Record the languages of a document imported before they were read, and its
        passages' (each its own, among them)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE documents SET languages = ? WHERE id = ?", [list(languages), document_id]
            )
            rows = db.execute(
                'SELECT id, start, "end" FROM passages WHERE document_id = ?', [document_id]
            ).fetchall()
            if rows:
                (text,) = db.execute(
                    "SELECT text FROM documents WHERE id = ?", [document_id]
                ).fetchone()
                found = passage_languages(text, [(a, b) for _, a, b in rows], languages)
                db.execute(
                    "UPDATE passages SET language = x.language FROM (SELECT "
                    "unnest(?::BIGINT[]) AS id, unnest(?::VARCHAR[]) AS language) x "
                    "WHERE passages.id = x.id",
                    [[row[0] for row in rows], found],
                )

    def document_by_hash(self, notebook_id: int, sha256: str) -> Document | None:
        row = self._one(
            self._DOCUMENT_SQL + " WHERE d.notebook_id = ? AND d.sha256 = ?", [notebook_id, sha256]
        )
        return self._document(row) if row else None

    def document_text(self, document_id: int) -> str:
        row = self._one("SELECT text FROM documents WHERE id = ?", [document_id])
        if row is None:
            raise NotFound(f"There is no document {document_id}.")
        return row[0]

    def roles(self, document_id: int) -> list[RoleRange]:
        """The document's roles in text order (knownote.read.roles): text they leave out is
        body text."""
        rows = self._all(
            'SELECT start, "end", role FROM roles WHERE document_id = ? ORDER BY start',
            [document_id],
        )
        return [RoleRange(*row) for row in rows]

    def documents_without_roles(self, limit: int) -> list[int]:
        """Documents whose roles were never read, or read by older rules (oldest first)."""
        rows = self._all(
            "SELECT id FROM documents WHERE roles_read IS NULL OR roles_read < ? "
            "ORDER BY id LIMIT ?",
            [ROLES_VERSION, limit],
        )
        return [row[0] for row in rows]

    def replace_roles(self, document_id: int, roles: Sequence[RoleRange]) -> None:
        """Store a document's roles (normalised, knownote.read.roles.normalise) in place of what
        it had; the text and every offset stay as they are."""
        with self.transaction() as db:
            db.execute("DELETE FROM roles WHERE document_id = ?", [document_id])
            _insert_roles(db, document_id, roles)

    def headings(self, document_id: int) -> list[Heading]:
        rows = self._all(
            'SELECT start, "end", level FROM headings WHERE document_id = ? ORDER BY start, level',
            [document_id],
        )
        return [Heading(*row) for row in rows]

    def replace_headings(
        self, document_id: int, headings: Sequence[Heading], sections: Sequence[str]
    ) -> None:
        """Store a document's headings and its passages' section paths (one per passage, in
        passage order) in one transaction; the text and every offset stay as they are."""
        with self.transaction() as db:
            ids = [
                row[0]
                for row in db.execute(
                    "SELECT id FROM passages WHERE document_id = ? ORDER BY idx", [document_id]
                ).fetchall()
            ]
            if len(ids) != len(sections):
                raise ValueError(f"{len(sections)} section paths for {len(ids)} passages")
            db.execute("DELETE FROM headings WHERE document_id = ?", [document_id])
            _insert_headings(db, document_id, headings)
            changed = [(section, i) for i, section in zip(ids, sections, strict=True)]
            if changed:
                db.executemany("UPDATE passages SET section = ? WHERE id = ?", changed)

    def pages(self, document_id: int) -> list[Page]:
        rows = self._all(
            'SELECT page_no, start, "end" FROM pages WHERE document_id = ? ORDER BY page_no',
            [document_id],
        )
        return [Page(*row) for row in rows]

    def file_versions(self, notebook_id: int, sha256: str) -> list[int]:
        """The notebook's sources read from the same file (read again as new versions), oldest
        first."""
        rows = self._all(
            "SELECT id FROM documents WHERE notebook_id = ? AND sha256 = ? ORDER BY id",
            [notebook_id, sha256],
        )
        return [row[0] for row in rows]

    def web_origin(self, document_id: int) -> WebOrigin | None:
        """The address a source was fetched from, when it was imported by one."""
        row = self._one(
            "SELECT address, final_address, fetched_at, version FROM web_pages "
            "WHERE document_id = ?",
            [document_id],
        )
        return (
            None if row is None else WebOrigin(row[0], row[1], row[2].replace(tzinfo=UTC), row[3])
        )

    def versions(self, notebook_id: int, address: str) -> list[tuple[int, WebOrigin]]:
        """The notebook's sources fetched from `address`, oldest first."""
        rows = self._all(
            "SELECT w.document_id, w.address, w.final_address, w.fetched_at, w.version "
            "FROM web_pages w JOIN documents d ON d.id = w.document_id "
            "WHERE d.notebook_id = ? AND w.address = ? ORDER BY w.version",
            [notebook_id, address],
        )
        return [(r[0], WebOrigin(r[1], r[2], r[3].replace(tzinfo=UTC), r[4])) for r in rows]

    def spoken(self, document_id: int) -> list[Timed]:
        rows = self._all(
            'SELECT start, "end", seconds_start, seconds_end FROM spoken WHERE document_id = ? '
            "ORDER BY start",
            [document_id],
        )
        return [Timed(*row) for row in rows]

    def spoken_seconds(self, document_id: int) -> float | None:
        """When a recording's last recognised word ends (None: not a recording)."""
        row = self._one("SELECT max(seconds_end) FROM spoken WHERE document_id = ?", [document_id])
        return None if row is None else row[0]

    def time_range(self, document_id: int, start: int, end: int) -> tuple[float, float] | None:
        """When the words of `text[start:end]` were said (None: not a recording)."""
        row = self._one(
            "SELECT min(seconds_start), max(seconds_end) FROM spoken WHERE document_id = ? "
            'AND "end" > ? AND start < ?',
            [document_id, start, end],
        )
        return None if row is None or row[0] is None else (row[0], row[1])

    def passages(self, document_id: int) -> list[Passage]:
        rows = self._all(
            'SELECT id, document_id, idx, start, "end", page_start, page_end, text, section '
            "FROM passages WHERE document_id = ? ORDER BY idx",
            [document_id],
        )
        return [Passage(*row) for row in rows]

    def set_document_enabled(self, document_id: int, enabled: bool) -> None:
        with self.lock:
            self.db.execute("UPDATE documents SET enabled = ? WHERE id = ?", [enabled, document_id])

    def add_document(
        self,
        *,
        notebook_id: int,
        title: str,
        filename: str,
        kind: str,
        sha256: str,
        text: str,
        pages: Sequence[Page],
        passages: Sequence[NewPassage],
        vectors: np.ndarray,
        warnings: Sequence[str] = (),
        ocr_pages: Sequence[OcrPage] = (),
        split: tuple[int, int] | None = None,
        headings: Sequence[Heading] = (),
        embedded_as: str = "text",
        terms_as: str = "words",
        languages: Sequence[str] | None = None,
        times: Sequence[Timed] = (),
        origin: WebOrigin | None = None,
        again: bool = False,
        roles: Sequence[RoleRange] | None = None,
        layout_later: bool = False,
    ) -> int | None:
        """Store a document with all its passages in one transaction.

        `times`: a recording's words and when they were said; `origin`: a web page's address
        (its version is counted here, in the transaction); `again`: a file the notebook holds,
        read again (by OCR) as a new version beside the others; `roles`: what each part of the
        text is, normalised (None: not read, left to the background reading); `layout_later`:
        those are a PDF's rules' alone, its page layouts left to the background reading.

        Returns the new document id, or None when the notebook already holds this file. Raises
        NotFound when the notebook is gone (deleted by another session while the file was read).
        """
        with self.transaction() as db:
            row = db.execute(
                "SELECT embedding_dim FROM notebooks WHERE id = ?", [notebook_id]
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"The notebook {notebook_id} was deleted, so the file was not imported."
                )
            (dim,) = row
            if len(vectors) != len(passages) or (len(passages) and vectors.shape[1] != dim):
                raise ValueError("one vector of the notebook's dimension per passage is required")
            table = vectors_table(dim)
            if (
                not again
                and db.execute(
                    "SELECT 1 FROM documents WHERE notebook_id = ? AND sha256 = ?",
                    [notebook_id, sha256],
                ).fetchone()
            ):
                return None
            (document_id,) = db.execute(
                "INSERT INTO documents (notebook_id, title, filename, kind, sha256, text, n_chars, "
                "n_pages, n_passages, warnings, passage_size, passage_overlap, embedded_as, "
                "terms_as, languages) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                [
                    notebook_id,
                    title,
                    filename,
                    kind,
                    sha256,
                    text,
                    len(text),
                    len(pages),
                    len(passages),
                    list(warnings),
                    *(split or (None, None)),
                    embedded_as,
                    terms_as,
                    None if languages is None else list(languages),
                ],
            ).fetchone()
            if pages:
                numbers = np.asarray([p.number for p in pages], dtype=np.int64)
                insert_rows(db, "pages", {**_ranges(document_id, pages), "page_no": numbers})
            _insert_headings(db, document_id, headings)
            if times:
                said = {
                    "seconds_start": np.asarray([t.seconds_start for t in times], dtype=np.float64),
                    "seconds_end": np.asarray([t.seconds_end for t in times], dtype=np.float64),
                }
                insert_rows(db, "spoken", {**_ranges(document_id, times), **said})
            if origin is not None:
                db.execute(
                    "INSERT INTO web_pages (document_id, address, final_address, fetched_at, "
                    "version) SELECT ?, ?, ?, ?, 1 + count(*) FROM web_pages w JOIN documents d "
                    "ON d.id = w.document_id WHERE d.notebook_id = ? AND w.address = ?",
                    [
                        document_id,
                        origin.address,
                        origin.final_address,
                        origin.fetched_at.replace(tzinfo=None),
                        notebook_id,
                        origin.address,
                    ],
                )
            if passages:
                self._insert_passages(
                    db, notebook_id, document_id, text, passages, vectors, table, languages
                )
            if roles is not None:
                _insert_roles(
                    db, document_id, roles, LAYOUT_LATER if layout_later else ROLES_VERSION
                )
            if ocr_pages:
                db.executemany(
                    "INSERT INTO ocr_pages (document_id, page_no, boxes, lines) "
                    "VALUES (?, ?, ?, ?)",
                    [
                        (
                            document_id,
                            p.number,
                            p.boxes.astype("<f4").tobytes(),
                            p.lines.astype("<i4").tobytes(),
                        )
                        for p in ocr_pages
                    ],
                )
        return document_id

    def ocr_page(self, document_id: int, page_no: int) -> OcrPage | None:
        """The boxes of a page read by OCR, or None when the page was not."""
        row = self._one(
            "SELECT boxes, lines FROM ocr_pages WHERE document_id = ? AND page_no = ?",
            [document_id, page_no],
        )
        if row is None:
            return None
        boxes = np.frombuffer(row[0], dtype="<f4").reshape(-1, 4)
        return OcrPage(page_no, boxes, np.frombuffer(row[1], dtype="<i4"))

    def ocr_page_numbers(self, document_id: int) -> list[int]:
        rows = self._all(
            "SELECT page_no FROM ocr_pages WHERE document_id = ? ORDER BY page_no", [document_id]
        )
        return [row[0] for row in rows]

    def _insert_passages(
        self,
        db: duckdb.DuckDBPyConnection,
        notebook_id: int,
        document_id: int,
        text: str,
        passages: Sequence[NewPassage],
        vectors: np.ndarray,
        table: str,
        languages: Sequence[str] | None,
    ) -> None:
        n = len(passages)
        ids = sorted(
            row[0]
            for row in db.execute("SELECT nextval('passage_ids') FROM range(?)", [n]).fetchall()
        )
        spans = [(p.start, p.end) for p in passages]
        insert_rows(
            db,
            "passages",
            {
                "id": np.asarray(ids, dtype=np.int64),
                "document_id": np.full(n, document_id, dtype=np.int64),
                "notebook_id": np.full(n, notebook_id, dtype=np.int64),
                "idx": np.arange(n, dtype=np.int32),
                "start": np.asarray([p.start for p in passages], dtype=np.int32),
                "end": np.asarray([p.end for p in passages], dtype=np.int32),
                # objects: a passage outside the pages has None
                "page_start": np.asarray([p.page_start for p in passages], dtype=object),
                "page_end": np.asarray([p.page_end for p in passages], dtype=object),
                "text": np.asarray([text[start:end] for start, end in spans], dtype=object),
                "n_terms": np.asarray([_n_terms(p) for p in passages], dtype=np.int32),
                "section": np.asarray([p.section for p in passages], dtype=object),
                "language": np.asarray(passage_languages(text, spans, languages), dtype=object),
            },
        )
        self._insert_index(db, notebook_id, document_id, ids, passages, vectors, table)

    @staticmethod
    def _insert_index(
        db: duckdb.DuckDBPyConnection,
        notebook_id: int,
        document_id: int,
        ids: Sequence[int],
        passages: Sequence[NewPassage],
        vectors: np.ndarray,
        table: str,
    ) -> None:
        """The keyword rows, vectors and codes of passages already inserted with these ids."""
        terms = [term for passage in passages for term in passage.terms]
        counts = [tf for passage in passages for tf in passage.terms.values()]
        per_passage = [len(passage.terms) for passage in passages]
        db.register(
            "new_terms",
            {
                "passage_id": np.repeat(np.asarray(ids, dtype=np.int64), per_passage),
                "term": np.asarray(terms, dtype=object),
                "tf": np.asarray(counts, dtype=np.int32),
            },
        )
        try:
            db.execute(
                "INSERT INTO passage_terms (passage_id, notebook_id, term, tf, term_key) "
                f"SELECT passage_id, ?, term, tf, {TERM_KEY} FROM new_terms",
                [notebook_id],
            )
        finally:
            db.unregister("new_terms")
        ensure_vectors_table(db, vectors.shape[1])
        insert_rows(db, table, vector_rows(ids, vectors))
        n = len(ids)
        insert_codes(db, list(ids), [notebook_id] * n, [document_id] * n, vectors)

    def reindex_document(
        self,
        document_id: int,
        passages: Sequence[NewPassage],
        vectors: np.ndarray,
        *,
        embedded_as: str,
        terms_as: str,
    ) -> None:
        """Replace a document's keyword rows, vectors and codes in one transaction (the
        passages, their offsets and text stay). Raises NotFound when it was deleted meanwhile,
        or re-split (its passages no longer match the ones given)."""
        with self.transaction() as db:
            row = db.execute(
                "SELECT d.notebook_id, n.embedding_dim FROM documents d "
                "JOIN notebooks n ON n.id = d.notebook_id WHERE d.id = ?",
                [document_id],
            ).fetchone()
            if row is None:
                raise NotFound(f"The document {document_id} was deleted meanwhile.")
            notebook_id, dim = row
            rows = db.execute(
                'SELECT id, start, "end" FROM passages WHERE document_id = ? ORDER BY idx',
                [document_id],
            ).fetchall()
            if [(s, e) for _, s, e in rows] != [(p.start, p.end) for p in passages] or (
                len(passages) and vectors.shape != (len(passages), dim)
            ):
                raise NotFound(f"The passages of document {document_id} changed meanwhile.")
            ids = [pid for pid, _, _ in rows]
            table = ensure_vectors_table(db, dim)
            inside = "passage_id IN (SELECT id FROM passages WHERE document_id = ?)"
            db.execute(f"DELETE FROM passage_terms WHERE {inside}", [document_id])
            db.execute(f"DELETE FROM {table} WHERE {inside}", [document_id])
            db.execute("DELETE FROM passage_codes WHERE document_id = ?", [document_id])
            if ids:
                db.execute(
                    "UPDATE passages SET n_terms = x.n FROM (SELECT unnest(?::BIGINT[]) AS id, "
                    "unnest(?::INTEGER[]) AS n) x WHERE passages.id = x.id",
                    [ids, [_n_terms(p) for p in passages]],
                )
                self._insert_index(db, notebook_id, document_id, ids, passages, vectors, table)
            db.execute(
                "UPDATE documents SET embedded_as = ?, terms_as = ? WHERE id = ?",
                [embedded_as, terms_as, document_id],
            )

    def sort_terms_when_due(self) -> bool:
        """Rewrite the keyword rows in term order when enough were added since the last time.

        BM25 reads the rows of its query's terms (`term_key IN (...)`); DuckDB skips every row
        group whose min/max key cannot hold them, which only happens when the rows are in key
        order. At 100k passages (13.8M rows) a search read every row (~250 ms) before, and
        ~860k rows (~20 ms) after. Rows added since are read whole, so the rewrite (~8 s at
        13.8M rows, holding the lock) runs when they pass UNSORTED_TERMS_MIN and a share
        UNSORTED_TERMS_SHARE of the sorted ones. Returns whether it ran.
        """
        with self.lock:
            (total,) = self.db.execute("SELECT count(*) FROM passage_terms").fetchone()
            (done,) = self.db.execute("SELECT max(sorted_rows) FROM sorted_terms").fetchone()
            unsorted = total - (done or 0)
            if unsorted < UNSORTED_TERMS_MIN or unsorted < UNSORTED_TERMS_SHARE * (done or 0):
                return False
            self.sort_terms()
            return True

    def sort_terms(self) -> None:
        """Rewrite passage_terms in term order (one transaction; the rows stay the same)."""
        with self.transaction() as db:
            (last,) = db.execute("SELECT max(rowid) FROM passage_terms").fetchone()
            if last is None:
                return
            # Rows appended in a transaction get row ids above every committed one.
            db.execute("INSERT INTO passage_terms SELECT * FROM passage_terms ORDER BY term_key")
            db.execute("DELETE FROM passage_terms WHERE rowid <= ?", [last])
            (total,) = db.execute("SELECT count(*) FROM passage_terms").fetchone()
            db.execute("UPDATE sorted_terms SET sorted_rows = ?", [total])

    def delete_document(self, document_id: int) -> None:
        document = self.document(document_id)
        dim = self.notebook(document.notebook_id).embedding_dim
        with self.transaction() as db:
            self._delete_document_rows(db, document_id, dim)
        self.discard_file_if_unused(document.sha256)

    def _delete_document_rows(
        self, db: duckdb.DuckDBPyConnection, document_id: int, dim: int
    ) -> None:
        table = vectors_table(dim)
        has_vectors = db.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [table]
        ).fetchone()
        if has_vectors:
            db.execute(
                f"DELETE FROM {table} WHERE passage_id IN "
                "(SELECT id FROM passages WHERE document_id = ?)",
                [document_id],
            )
        db.execute(
            "DELETE FROM passage_terms WHERE passage_id IN "
            "(SELECT id FROM passages WHERE document_id = ?)",
            [document_id],
        )
        db.execute("DELETE FROM passage_codes WHERE document_id = ?", [document_id])
        staged = db.execute(  # a re-embed's new vectors (knownote.store.reembed)
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_name LIKE 'staged_vectors_%'"
        ).fetchall()
        for (name,) in staged:
            db.execute(
                f"DELETE FROM {name} WHERE passage_id IN "
                "(SELECT id FROM passages WHERE document_id = ?)",
                [document_id],
            )
        db.execute("DELETE FROM passages WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM pages WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM headings WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM roles WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM ocr_pages WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM spoken WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM web_pages WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM document_overviews WHERE document_id = ?", [document_id])
        for table in ("card_reviews", "card_schedule"):  # study cards (knownote.study)
            db.execute(
                f"DELETE FROM {table} WHERE card_id IN "
                "(SELECT id FROM cards WHERE document_id = ?)",
                [document_id],
            )
        db.execute("DELETE FROM cards WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM card_sources WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM documents WHERE id = ?", [document_id])

    def save_overview(
        self,
        document_id: int,
        model: str,
        summary: str,
        questions: Sequence[str],
        passage_indexes: Sequence[int],
    ) -> None:
        """Keep a model's overview of a document (replacing an earlier one)."""
        with self.transaction() as db:
            if not db.execute("SELECT 1 FROM documents WHERE id = ?", [document_id]).fetchone():
                raise NotFound("That source was deleted meanwhile; its overview was not kept.")
            db.execute("DELETE FROM document_overviews WHERE document_id = ?", [document_id])
            db.execute(
                "INSERT INTO document_overviews "
                "(document_id, model, summary, questions, passage_indexes) VALUES (?, ?, ?, ?, ?)",
                [document_id, model, summary, list(questions), list(passage_indexes)],
            )

    def overview(self, document_id: int) -> tuple[str, str, list[str], list[int]] | None:
        """(model, summary, questions, passage indexes) of a kept overview, or None."""
        with self.lock:
            row = self.db.execute(
                "SELECT model, summary, questions, passage_indexes FROM document_overviews "
                "WHERE document_id = ?",
                [document_id],
            ).fetchone()
        return None if row is None else (row[0], row[1], list(row[2]), list(row[3]))

    def vectors(self, document_id: int) -> np.ndarray:
        """The stored vectors of a document's passages, in passage order."""
        document = self.document(document_id)
        table = vectors_table(self.notebook(document.notebook_id).embedding_dim)
        with self.lock:
            rows = self.db.execute(
                f"SELECT v.embedding FROM {table} v JOIN passages p ON p.id = v.passage_id "
                "WHERE p.document_id = ? ORDER BY p.idx",
                [document_id],
            ).fetchnumpy()
        if not len(rows["embedding"]):
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(rows["embedding"]).astype(np.float32)
