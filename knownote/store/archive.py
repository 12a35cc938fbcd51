"""Notebook archives: one `.knownote` file that carries a notebook to another data folder.

The file is a zip holding `manifest.json` (format version, the notebook, every entry's size and
SHA-256, the row count and a content digest of every table), `tables/<table>.arrow` (the
notebook's rows as uncompressed Arrow IPC files) and `sources/<sha256>` (the original bytes of
each document, and each audio overview's audio). Nothing in it is ever extracted to disk: entries
are read into memory (bounded by the sizes the zip declares, which are checked first) and rows
are inserted with new ids in one transaction, which is rolled back, kept files and all, when
anything does not check out.

Adding a table to archives is one line in `TABLES`.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import lzma
import os
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from knownote.errors import DamagedArchive, DiskFull, FileTooLarge, KnowNoteError
from knownote.store.check import document_problems
from knownote.store.db import (
    Store,
    arrow_table,
    ensure_vectors_table,
    sha256_hex,
    vectors_table,
)

FORMAT = "knownote-notebook"
VERSION = 8  # 2: notes; 3: headings and passages.section; 4: web pages' origins, spoken words;
# 5: study cards and their schedule, and the mind map a model wrote; 6: roles; 7: reports;
# 8: audio overviews (their audio among `sources/`)
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
# Deflate reaches about 1000:1 at best; real tables and documents stay far below this.
MAX_RATIO = 200
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Table:
    """The rows of one table that belong to a notebook.

    `scope` selects them (`?` is the notebook id), `order` fixes their order. `key` is the table's
    own id column, renumbered from `sequence` on import. `refs` are columns that must point at a
    row of the named table inside the archive; `loose` columns may point at a row that is gone
    (a citation of a deleted document): unresolved, they get the value given.
    """

    name: str
    scope: str
    order: str
    key: str | None = None
    sequence: str | None = None
    refs: dict[str, str] = field(default_factory=dict)
    loose: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    since: int = 1  # the first format version that carries the table

    def physical(self, dim: int) -> str:
        return vectors_table(dim) if self.name == "vectors" else self.name


_IN_DOCUMENTS = "document_id IN (SELECT id FROM documents WHERE notebook_id = ?)"
_IN_CHATS = "chat_id IN (SELECT id FROM chats WHERE notebook_id = ?)"
_IN_MESSAGES = (
    "message_id IN (SELECT m.id FROM messages m JOIN chats c ON c.id = m.chat_id "
    "WHERE c.notebook_id = ?)"
)
_IN_MIND_MAPS = "map_id IN (SELECT id FROM mind_maps WHERE notebook_id = ?)"
_IN_REPORTS = "report_id IN (SELECT id FROM reports WHERE notebook_id = ?)"
_IN_AUDIO = "overview_id IN (SELECT id FROM audio_overviews WHERE notebook_id = ?)"
_IN_NOTES = "note_id IN (SELECT id FROM notes WHERE notebook_id = ?)"
_IN_CARDS = "card_id IN (SELECT id FROM cards WHERE notebook_id = ?)"
_NB = {"notebook_id": "notebooks"}

# In insertion order: a table's refs point at tables above it.
TABLES: list[Table] = [
    Table("documents", "notebook_id = ?", "id", "id", "document_ids", _NB),
    Table("pages", _IN_DOCUMENTS, "document_id, page_no", refs={"document_id": "documents"}),
    Table("passages", "notebook_id = ?", "id", "id", "passage_ids",
          {"document_id": "documents", **_NB}),
    Table("passage_terms", "notebook_id = ?", "passage_id, term",
          refs={"passage_id": "passages", **_NB}),
    Table("vectors", "passage_id IN (SELECT id FROM passages WHERE notebook_id = ?)",
          "passage_id", refs={"passage_id": "passages"}),
    Table("passage_codes", "notebook_id = ?", "passage_id",
          refs={"passage_id": "passages", "document_id": "documents", **_NB}),
    Table("chats", "notebook_id = ?", "id", "id", "chat_ids", _NB),
    Table("messages", _IN_CHATS, "id", "id", "message_ids", {"chat_id": "chats"}),
    Table("answer_passages", _IN_MESSAGES, "message_id, n", refs={"message_id": "messages"},
          loose={"passage_id": ("passages", None), "document_id": ("documents", 0)}),
    Table("ocr_pages", _IN_DOCUMENTS, "document_id, page_no", refs={"document_id": "documents"}),
    Table("answer_supports", _IN_MESSAGES, "message_id, sentence, n, start",
          refs={"message_id": "messages"}, loose={"document_id": ("documents", 0)}),
    Table("document_overviews", _IN_DOCUMENTS, "document_id", refs={"document_id": "documents"},
          since=2),
    Table("notes", "notebook_id = ?", "id", "id", "note_ids", _NB, since=2),
    Table("note_passages", _IN_NOTES, "note_id, n", refs={"note_id": "notes"},
          loose={"passage_id": ("passages", None), "document_id": ("documents", 0)}, since=2),
    Table("note_supports", _IN_NOTES, "note_id, sentence, n, start",
          refs={"note_id": "notes"}, loose={"document_id": ("documents", 0)}, since=2),
    Table("headings", _IN_DOCUMENTS, 'document_id, start, level, "end"',
          refs={"document_id": "documents"}, since=3),
    Table("web_pages", _IN_DOCUMENTS, "document_id", refs={"document_id": "documents"},
          since=4),
    Table("roles", _IN_DOCUMENTS, "document_id, start", refs={"document_id": "documents"},
          since=6),
    Table("mind_maps", "notebook_id = ?", "id", "id", "mind_map_ids", _NB, since=5),
    Table("mind_map_nodes", _IN_MIND_MAPS, "map_id, node", refs={"map_id": "mind_maps"},
          since=5),
    Table("mind_map_links", _IN_MIND_MAPS, "map_id, link", refs={"map_id": "mind_maps"},
          since=5),
    Table("mind_map_cites", _IN_MIND_MAPS, "map_id, of_link, item, n",
          refs={"map_id": "mind_maps"},
          loose={"passage_id": ("passages", None), "document_id": ("documents", 0)}, since=5),
    Table("spoken", _IN_DOCUMENTS, "document_id, start", refs={"document_id": "documents"},
          since=4),
    Table("cards", "notebook_id = ?", "id", "id", "card_ids",
          {"document_id": "documents", **_NB}, since=5),
    Table("card_sources", _IN_DOCUMENTS, "document_id, made_by",
          refs={"document_id": "documents"}, since=5),
    Table("card_schedule", _IN_CARDS, "card_id", refs={"card_id": "cards"}, since=5),
    Table("card_reviews", _IN_CARDS, "card_id, reviewed_at, rating", refs={"card_id": "cards"},
          since=5),
    Table("reports", "notebook_id = ?", "id", "id", "report_ids", _NB, since=7),
    Table("report_lines", _IN_REPORTS, "report_id, line", refs={"report_id": "reports"},
          since=7),
    Table("report_cites", _IN_REPORTS, "report_id, n", refs={"report_id": "reports"},
          loose={"document_id": ("documents", 0)}, since=7),
    Table("report_sources", _IN_REPORTS, "report_id, n", refs={"report_id": "reports"},
          loose={"document_id": ("documents", 0)}, since=7),
    Table("audio_overviews", "notebook_id = ?", "id", "id", "audio_overview_ids", _NB, since=8),
    Table("audio_lines", _IN_AUDIO, "overview_id, ordinal",
          refs={"overview_id": "audio_overviews"}, since=8),
    Table("audio_cites", _IN_AUDIO, "overview_id, n", refs={"overview_id": "audio_overviews"},
          loose={"document_id": ("documents", 0)}, since=8),
    Table("audio_sources", _IN_AUDIO, "overview_id, n", refs={"overview_id": "audio_overviews"},
          loose={"document_id": ("documents", 0)}, since=8),
]  # fmt: skip
_BY_NAME = {t.name: t for t in TABLES}
_ENTRY = re.compile(r"(tables/(?P<table>[a-z_]+)\.arrow|sources/(?P<sha>[0-9a-f]{64}))")


@dataclass(frozen=True)
class ArchiveResult:
    notebook_id: int
    name: str
    documents: int
    chats: int
    bytes: int
    digests: dict[str, str]


# --- reading a notebook's rows and their digests ---------------------------------------------


def _notebook_row(db: duckdb.DuckDBPyConnection, notebook_id: int) -> dict[str, object]:
    row = db.execute(
        "SELECT id, name, embedding_model, embedding_dim, created_at FROM notebooks WHERE id = ?",
        [notebook_id],
    ).fetchone()
    if row is None:
        raise KnowNoteError(f"There is no notebook {notebook_id}.")
    return {
        "id": row[0],
        "name": row[1],
        "embedding_model": row[2],
        "embedding_dim": row[3],
        "created_at": row[4].isoformat(),
    }


def _has_table(db: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        db.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchone()
    )


def read_tables(db: duckdb.DuckDBPyConnection, notebook_id: int, dim: int) -> dict[str, pa.Table]:
    """The notebook's rows of every table in `TABLES`, in their fixed order."""
    out = {}
    for table in TABLES:
        physical = table.physical(dim)
        if not _has_table(db, physical):  # a notebook that never held a passage
            out[table.name] = pa.table(
                {
                    "passage_id": pa.array([], pa.int64()),
                    "embedding": pa.array([], pa.list_(pa.float32(), dim)),
                }
            )
            continue
        sql = f"SELECT * FROM {physical} WHERE {table.scope} ORDER BY {table.order}"
        out[table.name] = arrow_table(db.execute(sql, [notebook_id] * sql.count("?")))
    return out


def _ordinals(tables: dict[str, pa.Table], notebook_id: int) -> dict[str, dict[int, int]]:
    """Each keyed row's position in its table: ids differ between databases, positions do not."""
    found = {"notebooks": {notebook_id: 0}}
    for table in TABLES:
        if table.key:
            ids = tables[table.name].column(table.key).to_pylist()
            found[table.name] = {old: i for i, old in enumerate(ids)}
    return found


def _column_bytes(column: pa.ChunkedArray) -> bytes:
    column = column.combine_chunks()
    if pa.types.is_fixed_size_list(column.type):
        values = column.flatten().to_numpy(zero_copy_only=False).astype("<f4")
        return str(column.type.list_size).encode() + values.tobytes()
    return json.dumps(column.to_pylist(), default=str, ensure_ascii=False).encode()


def digests(tables: dict[str, pa.Table], notebook: dict[str, object]) -> dict[str, str]:
    """A SHA-256 per table over its rows, with every id replaced by the position of its row.

    Two notebooks with equal digests hold the same passages, offsets, vectors, chats and
    citations, whatever ids their databases gave them.
    """
    ordinals = _ordinals(tables, int(notebook["id"]))
    out = {
        "notebook": hashlib.sha256(
            json.dumps([notebook["embedding_model"], notebook["embedding_dim"]]).encode()
        ).hexdigest()
    }
    for table in TABLES:
        rows = tables[table.name]
        h = hashlib.sha256()
        for name in sorted(rows.column_names):
            target = (
                table.name if name == table.key
                else table.refs.get(name) or table.loose.get(name, (None,))[0]
            )  # fmt: skip
            if target:
                mapped = [ordinals[target].get(v, -1) for v in rows.column(name).to_pylist()]
                data = np.asarray(mapped, dtype="<i8").tobytes()
            else:
                data = _column_bytes(rows.column(name))
            h.update(f"{name}:{len(data)}:".encode())
            h.update(data)
        out[table.name] = h.hexdigest()
    return out


def notebook_digests(store: Store, notebook_id: int) -> dict[str, str]:
    """The content digests of a stored notebook (see `digests`)."""
    with store.lock:
        notebook = _notebook_row(store.db, notebook_id)
        tables = read_tables(store.db, notebook_id, int(notebook["embedding_dim"]))
    return digests(tables, notebook)


# --- export ---------------------------------------------------------------------------------


def kept_files(tables: dict[str, pa.Table]) -> set[str]:
    """The hashes of the kept files the notebook's rows use: its documents' originals and its
    audio overviews' audio (an archive older than format 8 has none)."""
    wanted = set(tables["documents"].column("sha256").to_pylist())
    audio = tables.get("audio_overviews")
    if audio is not None and "audio_sha256" in audio.column_names:
        wanted |= {str(h) for h in audio.column("audio_sha256").to_pylist() if h is not None}
    return wanted


def disk_full_error(what: str, error: OSError) -> KnowNoteError:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"The disk is full: {what} could not be written and nothing was kept. "
                        "Free some space and try again.")  # fmt: skip
    return KnowNoteError(f"{what} could not be written: {error.strerror or error}.")


def export_notebook(store: Store, notebook_id: int, target: Path) -> ArchiveResult:
    """Write the notebook to `target` (atomically: a partial file is never left there)."""
    with store.lock:  # one consistent snapshot: no write through this store meanwhile
        notebook = _notebook_row(store.db, notebook_id)
        tables = read_tables(store.db, notebook_id, int(notebook["embedding_dim"]))
        hashes = sorted(kept_files(tables))
    sources = {}
    for digest in hashes:
        sources[digest] = store.file_path(digest)
        if sources[digest] is None or not sources[digest].exists():
            raise KnowNoteError(
                f"The kept file {digest} of a document or an audio overview is missing from the "
                "data folder, so the notebook cannot be archived whole. Run `knownote check`."
            )
    target = Path(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    entries: dict[str, dict[str, object]] = {}
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for name, rows in tables.items():
                sink = io.BytesIO()
                with pa.ipc.new_file(sink, rows.schema) as writer:
                    writer.write_table(rows)
                data = sink.getvalue()
                entry = f"tables/{name}.arrow"
                zf.writestr(entry, data)
                entries[entry] = {"size": len(data), "sha256": sha256_hex(data)}
            for digest, path in sources.items():
                data = path.read_bytes()
                if sha256_hex(data) != digest:
                    raise KnowNoteError(
                        f"The kept file {digest} no longer holds its original bytes, so the "
                        "notebook cannot be archived whole. Run `knownote check`."
                    )
                entry = f"sources/{digest}"
                zf.writestr(entry, data, compress_type=zipfile.ZIP_STORED)
                entries[entry] = {"size": len(data), "sha256": digest}
            table_digests = digests(tables, notebook)
            manifest = {
                "format": FORMAT,
                "version": VERSION,
                "created_at": datetime.now(UTC).isoformat(),
                "notebook": notebook,
                "entries": entries,
                "rows": {name: rows.num_rows for name, rows in tables.items()},
                "digests": table_digests,
            }
            zf.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise disk_full_error(f"The archive {target}", e) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ArchiveResult(
        notebook_id, str(notebook["name"]), tables["documents"].num_rows, tables["chats"].num_rows,
        target.stat().st_size, table_digests,
    )  # fmt: skip


# --- import ---------------------------------------------------------------------------------


def _bad(what: str) -> DamagedArchive:
    return DamagedArchive(f"This is not a KnowNote notebook archive, or it was damaged or "
                          f"altered: {what} Nothing was imported.")  # fmt: skip


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, sink: Callable[[bytes], None]) -> str:
    """Stream an entry (never more than it declares) into `sink`; return its SHA-256."""
    h = hashlib.sha256()
    seen = 0
    try:
        with zf.open(info) as f:
            while chunk := f.read(_CHUNK):
                seen += len(chunk)
                if seen > info.file_size:
                    raise _bad(f"{info.filename} holds more than it declares.")
                h.update(chunk)
                sink(chunk)
    # zlib.error and LZMAError: a compressed entry whose data is corrupt (bzip2's is an OSError)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error,
            lzma.LZMAError) as e:  # fmt: skip
        raise _bad(f"{info.filename} cannot be read ({e}).") from None
    if seen != info.file_size:
        raise _bad(f"{info.filename} is shorter than it declares.")
    return h.hexdigest()


def _entry_bytes(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes, str]:
    parts: list[bytes] = []
    digest = _read_entry(zf, info, parts.append)
    return b"".join(parts), digest


def _manifest(zf: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]) -> dict:
    info = infos.get(MANIFEST)
    if info is None:
        raise _bad("it has no manifest.json.")
    if info.file_size > MAX_MANIFEST_BYTES:
        raise _bad("its manifest is implausibly large.")
    data, _ = _entry_bytes(zf, info)
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError):
        raise _bad("its manifest is not valid JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _bad("its manifest does not name the KnowNote notebook format.")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _bad("its manifest has no format version.")
    if version > VERSION:
        raise DamagedArchive(
            f"This archive was written by a newer KnowNote (format {version}); this one reads "
            f"format {VERSION}. Update KnowNote and import it again. Nothing was imported."
        )
    if version < 1:
        raise _bad(f"format version {version} does not exist.")
    notebook = manifest.get("notebook")
    entries = manifest.get("entries")
    rows = manifest.get("rows")
    table_digests = manifest.get("digests")
    if not (
        isinstance(notebook, dict)
        and isinstance(notebook.get("name"), str)
        and isinstance(notebook.get("embedding_model"), str)
        and isinstance(notebook.get("embedding_dim"), int)
        and 0 < notebook["embedding_dim"] <= 65536
        and isinstance(notebook.get("id"), int)
        and isinstance(entries, dict)
        and all(
            isinstance(e, dict)
            and isinstance(e.get("size"), int)
            and isinstance(e.get("sha256"), str)
            for e in entries.values()
        )
        and isinstance(rows, dict)
        and isinstance(table_digests, dict)
    ):
        raise _bad("its manifest lacks the notebook, its entries, row counts or digests.")
    return manifest


def _check_entries(zf: zipfile.ZipFile, max_bytes: int) -> dict[str, zipfile.ZipInfo]:
    """Every entry is one we write, listed in the manifest with its size, and not a bomb."""
    infos: dict[str, zipfile.ZipInfo] = {}
    total = 0
    if MANIFEST not in zf.namelist():
        # Also what a cut-short archive looks like: zipfile may then read the directory of a
        # document stored inside it (a DOCX is a zip too).
        raise _bad("it has no manifest.json; it is not a notebook archive, or it was cut short.")
    for info in zf.infolist():
        name = info.filename
        if name in infos:
            raise _bad(f"it holds {name!r} twice.")
        if name != MANIFEST and not _ENTRY.fullmatch(name):
            raise _bad(f"it holds an entry KnowNote never writes ({name[:120]!r}).")
        if info.flag_bits & 0x1:
            raise _bad(f"{name} is encrypted.")
        total += info.file_size
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise _bad(f"{name} unpacks to {info.file_size:,} bytes from {info.compress_size:,} "
                       "(a zip bomb?).")  # fmt: skip
        infos[name] = info
    if total > max_bytes:
        raise FileTooLarge(
            f"The archive unpacks to {total / 1024 / 1024:,.0f} MB; the limit is "
            f"{max_bytes // 1024 // 1024:,} MB (setting max_archive_mb). Nothing was imported."
        )
    return infos


def _load(zf: zipfile.ZipFile, max_bytes: int) -> tuple[dict, dict[str, pa.Table], list[str]]:
    """Check the whole archive against its manifest; return it with its tables and sources."""
    first = _check_entries(zf, max_bytes)
    manifest = _manifest(zf, first)
    listed = manifest["entries"]
    present = set(first) - {MANIFEST}
    if set(listed) - present:
        raise _bad(f"{sorted(set(listed) - present)[0]} is listed but missing.")
    if present - set(listed):
        raise _bad(f"{sorted(present - set(listed))[0]} is not listed in the manifest.")
    for name in TABLES:
        # A table can be younger than its format (ocr_pages and answer_supports came after the
        # first archives of format 1, document_overviews after the first of format 2): a writer
        # without it records neither its rows nor its digest, and it arrives empty.
        unknown = name.name not in manifest["rows"] and name.name not in manifest["digests"]
        absent = f"tables/{name.name}.arrow" not in listed
        if absent and name.since <= manifest["version"] and not unknown:
            raise _bad(f"the table {name.name} is missing.")
    tables: dict[str, pa.Table] = {}
    sources = []
    for name in sorted(listed):
        info = first[name]
        if info.file_size != listed[name]["size"]:
            raise _bad(f"{name} is not the size the manifest records.")
        match = _ENTRY.fullmatch(name)
        if match["sha"]:
            digest = _read_entry(zf, info, lambda _: None)
            if digest != match["sha"] or digest != listed[name]["sha256"]:
                raise _bad(f"{name} does not hold the bytes its name and manifest record.")
            sources.append(digest)
            continue
        data, digest = _entry_bytes(zf, info)
        if digest != listed[name]["sha256"]:
            raise _bad(f"{name} does not match the hash in the manifest.")
        table = match["table"]
        if table not in _BY_NAME:
            # A table a newer KnowNote carries; this one would drop it silently.
            raise DamagedArchive(
                f"This archive holds rows of “{table}”, which this KnowNote does not know; it "
                "was written by a newer version. Update KnowNote. Nothing was imported."
            )
        try:
            rows = pa.ipc.open_file(pa.py_buffer(data)).read_all()
            rows.validate(full=True)
        except (pa.ArrowException, ValueError, OSError) as e:
            raise _bad(f"{name} is not a readable table ({str(e)[:200]}).") from None
        if rows.num_rows != manifest["rows"].get(table):
            raise _bad(f"{name} holds {rows.num_rows} rows, not the {manifest['rows'].get(table)} "
                       "the manifest records.")  # fmt: skip
        tables[table] = rows
    return manifest, tables, sources


def _remap(
    column: pa.ChunkedArray, mapping: dict[int, int], what: str, missing: int | str | None
) -> pa.Array:
    """Old ids to new ids; `missing` is the value for an unresolved id, or "error"."""
    if not pa.types.is_integer(column.type):
        raise _bad(f"{what} is not a column of ids.")
    old = pa.array(list(mapping), pa.int64())
    new = pa.array(list(mapping.values()), pa.int64())
    index = pc.index_in(column.cast(pa.int64()), value_set=old)
    mapped = pc.take(new, index)
    unresolved = mapped.null_count - column.null_count
    if unresolved and missing == "error":
        raise _bad(f"{unresolved} rows of {what} point at rows the archive does not hold.")
    if unresolved and missing is not None:
        mapped = pc.if_else(
            pc.and_(pc.is_null(mapped), pc.is_valid(column)), pa.scalar(missing, pa.int64()), mapped
        )
    return mapped.combine_chunks() if isinstance(mapped, pa.ChunkedArray) else mapped


def _columns(db: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    rows = db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
    ).fetchall()
    return {row[0] for row in rows}


def _insert(
    db: duckdb.DuckDBPyConnection,
    table: Table,
    rows: pa.Table,
    dim: int,
    ids: dict[str, dict[int, int]],
) -> None:
    physical = table.physical(dim)
    if table.name == "vectors":
        ensure_vectors_table(db, dim)
        embedding = (
            rows.schema.field("embedding").type if "embedding" in rows.column_names else None
        )
        if not (pa.types.is_fixed_size_list(embedding) and embedding.list_size == dim):
            raise _bad(f"its vectors are not of the notebook's dimension {dim}.")
    known = _columns(db, physical)
    unknown = set(rows.column_names) - known
    if unknown:
        raise DamagedArchive(
            f"The archive's {table.name} rows carry columns this KnowNote does not know "
            f"({', '.join(sorted(unknown))}); it was written by a newer version. Update "
            "KnowNote. Nothing was imported."
        )
    if table.key:
        old = rows.column(table.key)
        if old.null_count or pc.count_distinct(old).as_py() != rows.num_rows:
            raise _bad(f"the ids of {table.name} are not unique.")
        fresh = db.execute(
            f"SELECT nextval('{table.sequence}') FROM range(?)", [rows.num_rows]
        ).fetchall()
        ids[table.name] = dict(zip(old.to_pylist(), sorted(r[0] for r in fresh), strict=True))
    for i, name in enumerate(rows.column_names):
        if name == table.key:
            mapped = _remap(rows.column(name), ids[table.name], f"{table.name}.{name}", "error")
        elif name in table.refs:
            mapped = _remap(rows.column(name), ids[table.refs[name]], f"{table.name}.{name}",
                            "error")  # fmt: skip
        elif name in table.loose:
            target, missing = table.loose[name]
            mapped = _remap(rows.column(name), ids[target], f"{table.name}.{name}", missing)
        else:
            continue
        rows = rows.set_column(i, name, mapped)
    columns = ", ".join(f'"{c}"' for c in rows.column_names)
    db.register("archive_rows", rows)
    try:
        db.execute(f"INSERT INTO {physical} ({columns}) SELECT {columns} FROM archive_rows")
    except duckdb.Error as e:
        if "No space left" in str(e):
            raise
        raise _bad(f"its {table.name} rows do not fit this database ({str(e)[:200]}).") from None
    finally:
        db.unregister("archive_rows")


def import_notebook(
    store: Store, path: Path, *, name: str | None = None, max_bytes: int
) -> ArchiveResult:
    """Import the archive at `path` as a new notebook (named `name`, or as it was called).

    Either the whole notebook arrives, checked row by row against the manifest's digests, or
    nothing does: no row and no kept file.
    """
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    # NotImplementedError: a directory entry claiming a zip version zipfile does not read
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
            NotImplementedError) as e:  # fmt: skip
        raise _bad(f"it is not a zip file ({e}).") from None
    except OSError as e:
        raise KnowNoteError(f"{path} could not be read: {e.strerror or e}.") from None
    with zf:
        manifest, tables, sources = _load(zf, max_bytes)
        notebook = manifest["notebook"]
        dim = notebook["embedding_dim"]
        title = (name if name is not None else notebook["name"]).strip()
        if not title:
            raise KnowNoteError("A notebook needs a name.")
        if store.notebook_by_name(title) is not None:
            raise KnowNoteError(
                f"A notebook called “{title}” already exists. Import the archive under another "
                "name (--as NAME on the command line)."
            )
        created = _timestamp(notebook.get("created_at"))
        if created is None:
            raise _bad("its manifest gives no time the notebook was made.")
        wanted = kept_files(tables)
        if wanted != set(sources):
            raise _bad("its documents and its original files do not match.")
        saved: list[str] = []
        try:
            with store.transaction() as db:
                (notebook_id,) = db.execute(
                    "INSERT INTO notebooks (name, embedding_model, embedding_dim, created_at) "
                    "VALUES (?, ?, ?, ?) RETURNING id",
                    [title, notebook["embedding_model"], dim, created],
                ).fetchone()  # fmt: skip
                ids = {"notebooks": {notebook["id"]: notebook_id}}
                for table in TABLES:
                    if table.name in tables:  # an older format lacks the newer tables
                        _insert(db, table, tables[table.name], dim, ids)
                for digest in sorted(sources):
                    data, _ = _entry_bytes(zf, zf.getinfo(f"sources/{digest}"))
                    if sha256_hex(data) != digest:
                        raise _bad(f"sources/{digest} changed while it was being read.")
                    saved.append(digest)
                    store.save_file(data)
                _verify(store, db, notebook_id, manifest, notebook, tables)
        except OSError as e:
            _discard(store, saved)
            raise disk_full_error("The imported notebook", e) from None
        except duckdb.Error as e:
            _discard(store, saved)
            if "No space left" in str(e):
                raise DiskFull("The disk is full: the notebook was not imported and nothing "
                               "was kept. Free some space and try again.") from None  # fmt: skip
            raise
        except BaseException:
            _discard(store, saved)
            raise
    store.sort_terms_when_due()
    return ArchiveResult(
        notebook_id, title, tables["documents"].num_rows, tables["chats"].num_rows,
        path.stat().st_size,
        manifest["digests"],
    )  # fmt: skip


def _timestamp(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _discard(store: Store, saved: list[str]) -> None:
    for digest in saved:
        store.discard_file_if_unused(digest)


def _verify(
    store: Store,
    db: duckdb.DuckDBPyConnection,
    notebook_id: int,
    manifest: dict,
    notebook: dict,
    archived: dict[str, pa.Table],
) -> None:
    """Inside the import's transaction: every document whole, every digest as recorded.

    Columns that later migrations added and an older archive lacks are left out of the digests:
    they were not filled from it (they stay empty).
    """
    ids = [row[0] for row in db.execute(
        "SELECT id FROM documents WHERE notebook_id = ? ORDER BY id", [notebook_id]
    ).fetchall()]  # fmt: skip
    for document_id in ids:
        problems = document_problems(db, document_id, recount_terms=False)
        if problems:
            raise _bad(problems[0])
    stored = {**notebook, "id": notebook_id}
    imported = read_tables(db, notebook_id, int(notebook["embedding_dim"]))
    for name, rows in archived.items():
        imported[name] = imported[name].select(
            [c for c in imported[name].column_names if c in rows.column_names]
        )
    got = digests(imported, stored)
    for table, digest in got.items():
        if table not in manifest["digests"] and table not in archived:
            continue  # an older format or writer: the table is empty here too
        if manifest["digests"].get(table) != digest:
            raise _bad(f"its {table} rows do not match the digest in its manifest.")
