"""The pipeline: the work that drives read -> index -> store.

`ingest` imports one file in one transaction, `reindex` redoes documents indexed the old way
(with `headings` for documents imported before headings were kept), and `worker` runs the import
queue's jobs (imports, re-indexes, overviews) on one thread.

May import: read, index, store, search, answer.
"""
