"""Numbered schema migrations. Each runs once, in its own transaction, and is recorded.

Append new migrations at the end with the next number; never edit one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import numpy as np

Migration = Callable[[duckdb.DuckDBPyConnection], None]


def m001_documents_and_passages(db: duckdb.DuckDBPyConnection) -> None:
    db.execute("CREATE SEQUENCE notebook_ids START 1")
    db.execute("CREATE SEQUENCE document_ids START 1")
    db.execute("CREATE SEQUENCE passage_ids START 1")
    db.execute(
        """
        CREATE TABLE notebooks (
            id BIGINT PRIMARY KEY DEFAULT nextval('notebook_ids'),
            name VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            embedding_model VARCHAR NOT NULL,
            embedding_dim INTEGER NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE documents (
            id BIGINT PRIMARY KEY DEFAULT nextval('document_ids'),
            notebook_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            filename VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            sha256 VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            n_chars INTEGER NOT NULL,
            n_pages INTEGER NOT NULL,
            enabled BOOLEAN NOT NULL DEFAULT true,
            status VARCHAR NOT NULL DEFAULT 'ready',
            warnings VARCHAR[] NOT NULL DEFAULT [],
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE pages (
            document_id BIGINT NOT NULL,
            page_no INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL
        )
        """
    )
    # notebook_id is repeated here so searches filter passages without a join.
    db.execute(
        """
        CREATE TABLE passages (
            id BIGINT PRIMARY KEY DEFAULT nextval('passage_ids'),
            document_id BIGINT NOT NULL,
            notebook_id BIGINT NOT NULL,
            idx INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            page_start INTEGER,
            page_end INTEGER,
            text VARCHAR NOT NULL,
            n_terms INTEGER NOT NULL
        )
        """
    )
    # Keyword index: term counts per passage, so BM25 runs in plain SQL.
    db.execute(
        """
        CREATE TABLE passage_terms (
            passage_id BIGINT NOT NULL,
            notebook_id BIGINT NOT NULL,
            term VARCHAR NOT NULL,
            tf INTEGER NOT NULL
        )
        """
    )


def m002_chats(db: duckdb.DuckDBPyConnection) -> None:
    db.execute("CREATE SEQUENCE chat_ids START 1")
    db.execute("CREATE SEQUENCE message_ids START 1")
    db.execute(
        """
        CREATE TABLE chats (
            id BIGINT PRIMARY KEY DEFAULT nextval('chat_ids'),
            notebook_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE messages (
            id BIGINT PRIMARY KEY DEFAULT nextval('message_ids'),
            chat_id BIGINT NOT NULL,
            role VARCHAR NOT NULL,
            content VARCHAR NOT NULL,
            model VARCHAR,
            extractive BOOLEAN NOT NULL DEFAULT false,
            incomplete BOOLEAN NOT NULL DEFAULT false,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    # The passages put in front of the model for one answer, numbered as in the prompt.
    db.execute(
        """
        CREATE TABLE answer_passages (
            message_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            passage_id BIGINT,
            document_id BIGINT NOT NULL,
            passage_index INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            page_start INTEGER,
            page_end INTEGER,
            title VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            cited BOOLEAN NOT NULL
        )
        """
    )


def m003_passage_codes(db: duckdb.DuckDBPyConnection) -> None:
    # Compact sign-bit codes of the passage vectors: the vector search scans these (6 words a
    # passage instead of 384 floats) and re-ranks a few hundred candidates exactly.
    db.execute(
        """
        CREATE TABLE passage_codes (
            passage_id BIGINT NOT NULL,
            notebook_id BIGINT NOT NULL,
            document_id BIGINT NOT NULL,
            c0 UBIGINT NOT NULL, c1 UBIGINT NOT NULL, c2 UBIGINT NOT NULL,
            c3 UBIGINT NOT NULL, c4 UBIGINT NOT NULL, c5 UBIGINT NOT NULL
        )
        """
    )
    # Filled by m005, which replaced these columns.


def m004_document_passage_counts(db: duckdb.DuckDBPyConnection) -> None:
    # Lists of notebooks and sources are drawn on every rerun; keep their counts off `passages`.
    db.execute("ALTER TABLE documents ADD COLUMN n_passages INTEGER DEFAULT 0")
    db.execute(
        "UPDATE documents SET n_passages = "
        "(SELECT count(*) FROM passages p WHERE p.document_id = documents.id)"
    )


def m005_signed_passage_codes(db: duckdb.DuckDBPyConnection) -> None:
    # The same bits as signed words: bit_count of a UBIGINT went through HUGEINT and made the
    # pass over the codes about twice as slow.
    db.execute("DROP TABLE passage_codes")
    db.execute(
        """
        CREATE TABLE passage_codes (
            passage_id BIGINT NOT NULL,
            notebook_id BIGINT NOT NULL,
            document_id BIGINT NOT NULL,
            c0 BIGINT NOT NULL, c1 BIGINT NOT NULL, c2 BIGINT NOT NULL,
            c3 BIGINT NOT NULL, c4 BIGINT NOT NULL, c5 BIGINT NOT NULL
        )
        """
    )
    tables = db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'vectors_%'"
    ).fetchall()
    for (table,) in tables:
        rows = db.execute(
            f"SELECT v.passage_id, p.notebook_id, p.document_id, v.embedding FROM {table} v "
            "JOIN passages p ON p.id = v.passage_id"
        ).fetchnumpy()
        if len(rows["passage_id"]):
            codes = _m005_codes(np.stack(rows["embedding"]).astype(np.float32))
            db.executemany(
                "INSERT INTO passage_codes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [int(p), int(n), int(d), *map(int, c)]
                    for p, n, d, c in zip(
                        rows["passage_id"],
                        rows["notebook_id"],
                        rows["document_id"],
                        codes,
                        strict=True,
                    )
                ],
            )


def _m005_codes(vectors: np.ndarray) -> np.ndarray:
    # A frozen copy of the codes as m005 wrote them (knownote.index.codes may change; a shipped
    # migration must not): the sign bits, through a fixed random projection to 384 dimensions
    # for other models, as six signed 64-bit words.
    if vectors.shape[1] != 384:
        projection = np.random.default_rng(vectors.shape[1]).standard_normal(
            (vectors.shape[1], 384)
        )
        vectors = vectors @ projection.astype(np.float32)
    return np.packbits(vectors > 0, axis=1).view(">i8").astype(np.int64)


def m006_ocr_pages(db: duckdb.DuckDBPyConnection) -> None:
    # Pages read by OCR: per character of the page's text, its box on the page (x0, y0, x1, y1
    # as little-endian float32, NaN where no ink) and its line number (int32).
    db.execute(
        """
        CREATE TABLE ocr_pages (
            document_id BIGINT NOT NULL,
            page_no INTEGER NOT NULL,
            boxes BLOB NOT NULL,
            lines BLOB NOT NULL
        )
        """
    )


def m008_support_spans(db: duckdb.DuckDBPyConnection) -> None:
    # Per sentence of an answer, the span of a passage it leans on (knownote.answer.support).
    db.execute(
        """
        CREATE TABLE answer_supports (
            message_id BIGINT NOT NULL,
            sentence INTEGER NOT NULL,
            sentence_start INTEGER NOT NULL,
            sentence_end INTEGER NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            score DOUBLE NOT NULL,
            suggested BOOLEAN NOT NULL,
            weak BOOLEAN NOT NULL
        )
        """
    )


def m009_answer_notices(db: duckdb.DuckDBPyConnection) -> None:
    # Why an answer fell short (dropped stream, time-out, model missing), as it was said when the
    # answer was given, so a reload shows the same reason.
    db.execute("ALTER TABLE messages ADD COLUMN notice VARCHAR")


def m010_passage_term_keys(db: duckdb.DuckDBPyConnection) -> None:
    # An integer key per term (63 bits of its MD5): BM25 finds the query's terms by scanning
    # integers instead of strings, about five times faster at 100k passages (14M term rows).
    # The key is only a filter; the terms themselves are still compared, so a collision
    # cannot change a score.
    db.execute("ALTER TABLE passage_terms ADD COLUMN term_key BIGINT")
    db.execute("UPDATE passage_terms SET term_key = (md5_number_lower(term) >> 1)::BIGINT")


def m011_import_jobs(db: duckdb.DuckDBPyConnection) -> None:
    # The import queue: one row per uploaded file, worked through by the app's import worker.
    # The original bytes wait beside the database under their sha256 until the job ends.
    db.execute("CREATE SEQUENCE import_job_ids START 1")
    db.execute(
        """
        CREATE TABLE import_jobs (
            id BIGINT PRIMARY KEY DEFAULT nextval('import_job_ids'),
            notebook_id BIGINT NOT NULL,
            filename VARCHAR NOT NULL,
            sha256 VARCHAR NOT NULL,
            size BIGINT NOT NULL,
            passage_size INTEGER NOT NULL,
            status VARCHAR NOT NULL DEFAULT 'queued',
            label VARCHAR,
            stage VARCHAR,
            done BIGINT NOT NULL DEFAULT 0,
            total BIGINT NOT NULL DEFAULT 0,
            cancel_requested BOOLEAN NOT NULL DEFAULT false,
            password_wrong BOOLEAN NOT NULL DEFAULT false,
            document_id BIGINT,
            pages INTEGER NOT NULL DEFAULT 0,
            passages INTEGER NOT NULL DEFAULT 0,
            chars BIGINT NOT NULL DEFAULT 0,
            warnings VARCHAR[] NOT NULL DEFAULT [],
            error VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            finished_at TIMESTAMP
        )
        """
    )


def m012_searched_rewrites(db: duckdb.DuckDBPyConnection) -> None:
    # A follow-up is searched as asked and as the model rewrote it; the rewrite is kept with the
    # answer so a reload still says what was searched.
    db.execute("ALTER TABLE messages ADD COLUMN searched VARCHAR")


def m013_notes(db: duckdb.DuckDBPyConnection) -> None:
    # Notes: a person's own Markdown, or an answer kept with copies of its passages and support
    # spans (so deleting the chat keeps the note; its citations are re-checked like a chat's).
    db.execute("CREATE SEQUENCE note_ids START 1")
    db.execute(
        """
        CREATE TABLE notes (
            id BIGINT PRIMARY KEY DEFAULT nextval('note_ids'),
            notebook_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            body VARCHAR NOT NULL,
            question VARCHAR,
            model VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE note_passages (
            note_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            passage_id BIGINT,
            document_id BIGINT NOT NULL,
            passage_index INTEGER NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            page_start INTEGER,
            page_end INTEGER,
            title VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            cited BOOLEAN NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE note_supports (
            note_id BIGINT NOT NULL,
            sentence INTEGER NOT NULL,
            sentence_start INTEGER NOT NULL,
            sentence_end INTEGER NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            score DOUBLE NOT NULL,
            suggested BOOLEAN NOT NULL,
            weak BOOLEAN NOT NULL
        )
        """
    )


def m014_document_split(db: duckdb.DuckDBPyConnection) -> None:
    # The passage size and overlap a document was split with (the settings can change between
    # imports); unknown (NULL) for documents imported before.
    db.execute("ALTER TABLE documents ADD COLUMN passage_size INTEGER")
    db.execute("ALTER TABLE documents ADD COLUMN passage_overlap INTEGER")


def m015_document_overviews(db: duckdb.DuckDBPyConnection) -> None:
    # A model's overview of a document: a summary whose [n] marks point at the passages it was
    # given (their positions in the document, in order), and three questions a reader could ask.
    db.execute(
        """
        CREATE TABLE document_overviews (
            document_id BIGINT PRIMARY KEY,
            model VARCHAR NOT NULL,
            summary VARCHAR NOT NULL,
            questions VARCHAR[] NOT NULL,
            passage_indexes INTEGER[] NOT NULL,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )


def m016_headings_and_sections(db: duckdb.DuckDBPyConnection) -> None:
    # A document's headings as ranges of its text (text[start:end] is the heading), and each
    # passage's section path at its start ("3 Method › 3.2 Training"; '' before any heading).
    db.execute(
        """
        CREATE TABLE headings (
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            level INTEGER NOT NULL
        )
        """
    )
    db.execute("ALTER TABLE passages ADD COLUMN section VARCHAR DEFAULT ''")


def m018_how_documents_are_indexed(db: duckdb.DuckDBPyConnection) -> None:
    # How a document's vectors and keyword terms were made: 'text' (the passage alone) or
    # 'title+section' (the document title and section path, then the passage); 'words' (plain
    # words) or 'stem:<language>' (stemmed, without stop words, with a title-and-section field).
    # Documents imported before keep the old ways until the background re-index redoes them.
    # Import jobs get a kind: 'import' (a file) or 'reindex' (a notebook's old documents).
    db.execute("ALTER TABLE documents ADD COLUMN embedded_as VARCHAR DEFAULT 'text'")
    db.execute("ALTER TABLE documents ADD COLUMN terms_as VARCHAR DEFAULT 'words'")
    db.execute("ALTER TABLE import_jobs ADD COLUMN kind VARCHAR DEFAULT 'import'")


def m020_sorted_terms(db: duckdb.DuckDBPyConnection) -> None:
    # How many rows of passage_terms were last rewritten in term order (by
    # Store.sort_terms_when_due): a keyword search reads only the row groups whose min/max
    # term key can hold its terms, so rows added since (the unsorted tail) are all read.
    # The rows stored before are sorted here (~8 s for 13.8M rows, once).
    db.execute("CREATE TABLE sorted_terms (sorted_rows BIGINT NOT NULL)")
    (last,) = db.execute("SELECT max(rowid) FROM passage_terms").fetchone()
    if last is not None:
        db.execute("INSERT INTO passage_terms SELECT * FROM passage_terms ORDER BY term_key")
        db.execute("DELETE FROM passage_terms WHERE rowid <= ?", [last])
    db.execute("INSERT INTO sorted_terms SELECT count(*) FROM passage_terms")


def m021_term_rows_carry_passage_length(db: duckdb.DuckDBPyConnection) -> None:
    # Each keyword row carries its passage's length in terms (passages.n_terms), so BM25 needs
    # no join with passages: at a million passages that join was most of a keyword search.
    # An UPDATE keeps the rows where they are, so m020's term order stays.
    db.execute("ALTER TABLE passage_terms ADD COLUMN n_terms INTEGER")
    db.execute(
        "UPDATE passage_terms SET n_terms = p.n_terms FROM passages p "
        "WHERE p.id = passage_terms.passage_id"
    )


def m022_document_languages(db: duckdb.DuckDBPyConnection) -> None:
    # The languages a document is written in (ISO 639-1 codes, the main one first), read at
    # import. NULL for documents imported before: the import worker reads theirs in the
    # background (knownote.pipeline.languages), as `knownote reindex` does.
    db.execute("ALTER TABLE documents ADD COLUMN languages VARCHAR[]")


def m023_reembeds(db: duckdb.DuckDBPyConnection) -> None:
    # A notebook being re-embedded with another model (knownote.store.reembed): its new vectors
    # wait in staged_vectors_<dim> (made on first use) until every passage has one.
    db.execute(
        """
        CREATE TABLE reembeds (
            notebook_id BIGINT PRIMARY KEY,
            model VARCHAR NOT NULL,
            dim INTEGER NOT NULL,
            started_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )


def m024_web_pages_and_recordings(db: duckdb.DuckDBPyConnection) -> None:
    # A page imported by its address: the address asked for, where its redirects ended, when it
    # was fetched, and its version among the notebook's imports of the same address (the
    # fetched bytes are the kept file, as for an upload).
    db.execute(
        """
        CREATE TABLE web_pages (
            document_id BIGINT PRIMARY KEY,
            address VARCHAR NOT NULL,
            final_address VARCHAR NOT NULL,
            fetched_at TIMESTAMP NOT NULL,
            version INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX web_pages_address ON web_pages (address)")
    # A recording's transcript: for each word, its range of the text and when it was said, as
    # `pages` holds each page's range; a passage's time range comes from the words it holds.
    db.execute(
        """
        CREATE TABLE spoken (
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            seconds_start DOUBLE NOT NULL,
            seconds_end DOUBLE NOT NULL
        )
        """
    )


def m025_study_cards(db: duckdb.DuckDBPyConnection) -> None:
    # Study cards (knownote.study): each made from a range of its document's stored text,
    # `text[start:end]` (a cloze card's sentence, a written card's support span). `answer` is
    # the blanked term or the written answer; a cloze term's own range is answer_start/end.
    # `made_by` is 'sentences' (no model) or the model's name; `supported` and `score` are the
    # support check of a written answer (a cloze card is its sentence: supported, no score).
    db.execute("CREATE SEQUENCE card_ids START 1")
    db.execute(
        """
        CREATE TABLE cards (
            id BIGINT PRIMARY KEY DEFAULT nextval('card_ids'),
            notebook_id BIGINT NOT NULL,
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            kind VARCHAR NOT NULL,
            front VARCHAR NOT NULL,
            back VARCHAR NOT NULL,
            answer VARCHAR NOT NULL,
            answer_start INTEGER,
            answer_end INTEGER,
            answer_kind VARCHAR NOT NULL,
            language VARCHAR NOT NULL,
            made_by VARCHAR NOT NULL,
            supported BOOLEAN NOT NULL,
            score DOUBLE,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    # Which documents cards were made for, by whom, and how many a model wrote and how many the
    # support check kept: cards are made again on demand for the documents without a row only.
    db.execute(
        """
        CREATE TABLE card_sources (
            document_id BIGINT NOT NULL,
            made_by VARCHAR NOT NULL,
            written INTEGER NOT NULL,
            kept INTEGER NOT NULL,
            made_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (document_id, made_by)
        )
        """
    )
    # The FSRS state of each card reviewed at least once (times in UTC), and every review.
    db.execute(
        """
        CREATE TABLE card_schedule (
            card_id BIGINT PRIMARY KEY,
            state INTEGER NOT NULL,
            step INTEGER,
            stability DOUBLE,
            difficulty DOUBLE,
            due TIMESTAMP NOT NULL,
            last_review TIMESTAMP
        )
        """
    )
    db.execute(
        """
        CREATE TABLE card_reviews (
            card_id BIGINT NOT NULL,
            rating INTEGER NOT NULL,
            reviewed_at TIMESTAMP NOT NULL
        )
        """
    )


def m026_mind_maps(db: duckdb.DuckDBPyConnection) -> None:
    # A notebook's mind map written by a model (knownote.study.mindmap): its nodes in a tree,
    # its cross-links, and the passages each node and link cites, copied with their ranges so a
    # citation of a deleted source still says where it pointed (and shows as stale). A map made
    # from the headings is not kept: it is read from `headings` whenever it is drawn.
    db.execute("CREATE SEQUENCE mind_map_ids START 1")
    db.execute(
        """
        CREATE TABLE mind_maps (
            id BIGINT PRIMARY KEY DEFAULT nextval('mind_map_ids'),
            notebook_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            dropped INTEGER NOT NULL,
            made_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE mind_map_nodes (
            map_id BIGINT NOT NULL,
            node INTEGER NOT NULL,
            parent INTEGER,
            label VARCHAR NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE mind_map_links (
            map_id BIGINT NOT NULL,
            link INTEGER NOT NULL,
            source INTEGER NOT NULL,
            target INTEGER NOT NULL,
            label VARCHAR NOT NULL
        )
        """
    )
    # `item` is a node's number, or a link's when `of_link`.
    db.execute(
        """
        CREATE TABLE mind_map_cites (
            map_id BIGINT NOT NULL,
            of_link BOOLEAN NOT NULL,
            item INTEGER NOT NULL,
            n INTEGER NOT NULL,
            passage_id BIGINT,
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL
        )
        """
    )


def m027_passage_languages(db: duckdb.DuckDBPyConnection) -> None:
    # The language of each passage, read at import (index.language.passage_languages): a search
    # in a notebook of several languages removes each language's mean vector from its passages
    # (knownote.search.centring). Passages imported before take their document's main language
    # (NULL until the background reading of languages gets to an older document).
    db.execute("ALTER TABLE passages ADD COLUMN language VARCHAR")
    db.execute(
        "UPDATE passages SET language = d.languages[1] FROM documents d "
        "WHERE d.id = passages.document_id AND len(d.languages) > 0"
    )


def m028_roles(db: duckdb.DuckDBPyConnection) -> None:
    # What each part of a document is, as ranges of its text (knownote.read.roles): text no row
    # covers is body text. `roles_read` is the version of the rules a document's roles were read
    # with; NULL for documents imported before, until the background reading gets to them.
    db.execute(
        """
        CREATE TABLE roles (
            document_id BIGINT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            role VARCHAR NOT NULL
        )
        """
    )
    db.execute("ALTER TABLE documents ADD COLUMN roles_read INTEGER")
    # The share of each passage's characters in minor parts (knownote.read.roles.MINOR):
    # references, front matter and page furniture, which a hybrid search weighs down.
    db.execute("ALTER TABLE passages ADD COLUMN minor REAL DEFAULT 0")


def m029_reports(db: duckdb.DuckDBPyConnection) -> None:
    # A notebook's reports (knownote.study.reports): a timeline, a glossary, or one written by a
    # model. A notebook keeps many. Each citation keeps its range, its source's title and the
    # quote, so a citation of a deleted or changed source still says where it pointed (stale).
    db.execute("CREATE SEQUENCE report_ids START 1")
    db.execute(
        """
        CREATE TABLE reports (
            id BIGINT PRIMARY KEY DEFAULT nextval('report_ids'),
            notebook_id BIGINT NOT NULL,
            kind VARCHAR NOT NULL,
            title VARCHAR NOT NULL,
            model VARCHAR,
            instructions VARCHAR NOT NULL,
            written INTEGER NOT NULL,
            kept INTEGER NOT NULL,
            marked INTEGER NOT NULL,
            made_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE report_lines (
            report_id BIGINT NOT NULL,
            line INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            style VARCHAR NOT NULL,
            cites INTEGER[] NOT NULL,
            label VARCHAR,
            date VARCHAR,
            unsupported BOOLEAN NOT NULL,
            continues BOOLEAN NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE report_cites (
            report_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            quote VARCHAR NOT NULL,
            page INTEGER,
            seconds_start DOUBLE,
            seconds_end DOUBLE,
            span_start INTEGER,
            span_end INTEGER
        )
        """
    )
    # The sources a report was made of, when chosen (none: the whole notebook).
    db.execute(
        """
        CREATE TABLE report_sources (
            report_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL
        )
        """
    )


def m030_library(db: duckdb.DuckDBPyConnection) -> None:
    # Questions across notebooks (knownote.search.library): a notebook can be left out of the
    # library that "All notebooks" searches (NULL, as for notebooks made before, is in it). A
    # chat asked of the library belongs to no notebook: its notebook_id is NULL.
    db.execute("ALTER TABLE notebooks ADD COLUMN in_library BOOLEAN DEFAULT true")
    db.execute("ALTER TABLE chats ALTER COLUMN notebook_id DROP NOT NULL")


def m031_audio_overviews(db: duckdb.DuckDBPyConnection) -> None:
    # A notebook's audio overviews (knownote.study.audio_overviews): spoken lines, each with its
    # time range in the audio and its `[n]` marks; citations as reports keep them (range, title,
    # quote: a citation of a deleted or changed source still says where it pointed). The audio
    # (Ogg/Opus) is a kept file beside the imported originals, named by its sha256.
    db.execute("CREATE SEQUENCE audio_overview_ids START 1")
    db.execute(
        """
        CREATE TABLE audio_overviews (
            id BIGINT PRIMARY KEY DEFAULT nextval('audio_overview_ids'),
            notebook_id BIGINT NOT NULL,
            format VARCHAR NOT NULL,
            title VARCHAR NOT NULL,
            language VARCHAR NOT NULL,
            voices VARCHAR[] NOT NULL,
            model VARCHAR,
            focus VARCHAR NOT NULL,
            length VARCHAR NOT NULL,
            dropped INTEGER NOT NULL,
            audio_sha256 VARCHAR,
            seconds DOUBLE NOT NULL,
            made_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    db.execute(
        """
        CREATE TABLE audio_lines (
            overview_id BIGINT NOT NULL,
            ordinal INTEGER NOT NULL,
            speaker INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            cites INTEGER[] NOT NULL,
            spoken VARCHAR NOT NULL,
            start_s DOUBLE,
            end_s DOUBLE
        )
        """
    )
    db.execute(
        """
        CREATE TABLE audio_cites (
            overview_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL,
            title VARCHAR NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            quote VARCHAR NOT NULL,
            page INTEGER,
            seconds_start DOUBLE,
            seconds_end DOUBLE,
            span_start INTEGER,
            span_end INTEGER
        )
        """
    )
    # The sources it was made from, when chosen (none: the whole notebook).
    db.execute(
        """
        CREATE TABLE audio_sources (
            overview_id BIGINT NOT NULL,
            n INTEGER NOT NULL,
            document_id BIGINT NOT NULL
        )
        """
    )


def m032_term_rows_without_passage_length(db: duckdb.DuckDBPyConnection) -> None:
    # m021's copy of the passage's length on each keyword row: keyword search reads the length
    # from passages (knownote.search.postings) and nothing read the copy. Dropping a column
    # keeps the rows in place, so m020's term order stays.
    db.execute("ALTER TABLE passage_terms DROP COLUMN n_terms")


MIGRATIONS: list[Migration] = [
    m001_documents_and_passages,
    m002_chats,
    m003_passage_codes,
    m004_document_passage_counts,
    m005_signed_passage_codes,
    m006_ocr_pages,
    m008_support_spans,
    m009_answer_notices,
    m010_passage_term_keys,
    m011_import_jobs,
    m012_searched_rewrites,
    m013_notes,
    m014_document_split,
    m015_document_overviews,
    m016_headings_and_sections,
    m018_how_documents_are_indexed,
    m020_sorted_terms,
    m021_term_rows_carry_passage_length,
    m022_document_languages,
    m023_reembeds,
    m024_web_pages_and_recordings,
    m025_study_cards,
    m026_mind_maps,
    m027_passage_languages,
    m028_roles,
    m029_reports,
    m030_library,
    m031_audio_overviews,
    m032_term_rows_without_passage_length,
]


def migration_version(migration: Migration) -> int:
    """The number in the migration's name (m011_import_jobs -> 11), recorded once it is applied.

    Numbers, not list positions: a migration keeps its version however the list grows.
    """
    return version_named(migration.__name__)


def version_named(name: str) -> int:
    """The number in a migration's name: m011_import_jobs -> 11."""
    return int(name[1:4])


# Told before each migration of an existing database runs (a new one is not "upgraded"): its
# place among those to run, how many there are, its name.
Progress = Callable[[int, int, str], None]


def renumber_by_name(db: duckdb.DuckDBPyConnection) -> None:
    """Record each applied migration under the number in its name.

    Until main's a0bc3c2 (1 December 2026) the version recorded was the migration's place in the
    list, and the list had gaps: m008_support_spans was recorded as 6 before m006 existed, so
    the number alone would call m006 applied and run m008 a second time.
    """
    rows = db.execute("SELECT version, name, applied_at FROM _migrations").fetchall()
    misplaced = [row for row in rows if row[0] != version_named(row[1])]
    if not misplaced:
        return
    db.execute("BEGIN TRANSACTION")
    try:
        db.executemany("DELETE FROM _migrations WHERE version = ?", [[v] for v, _, _ in misplaced])
        db.executemany(
            "INSERT INTO _migrations (version, name, applied_at) VALUES (?, ?, ?)",
            [[version_named(name), name, applied_at] for _, name, applied_at in misplaced],
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def migrate(db: duckdb.DuckDBPyConnection, progress: Progress | None = None) -> list[str]:
    """Apply every migration not yet recorded; return the names applied."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS _migrations (
            version INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL,
            applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        )
        """
    )
    renumber_by_name(db)
    done = {row[0] for row in db.execute("SELECT version FROM _migrations").fetchall()}
    pending = [m for m in MIGRATIONS if migration_version(m) not in done]
    applied = []
    for place, migration in enumerate(pending, start=1):
        if progress is not None and done:
            progress(place, len(pending), migration.__name__)
        db.execute("BEGIN TRANSACTION")
        try:
            migration(db)
            db.execute(
                "INSERT INTO _migrations (version, name) VALUES (?, ?)",
                [migration_version(migration), migration.__name__],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(migration.__name__)
    return applied
