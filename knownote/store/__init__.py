"""Storage: the DuckDB database and every statement that writes it.

`db` holds the connection and the tables of notebooks, documents, pages, passages, vectors and
keyword rows; `migrations` are numbered and import nothing of the package; `jobs` is the import
queue; `library` says which notebooks "All notebooks" asks; `archive`, `backup` and `check`
move, copy and verify a database. Receives the records of reading and indexing; returns stored
rows as frozen dataclasses.

May import: read, index (their records and pure functions).
"""
