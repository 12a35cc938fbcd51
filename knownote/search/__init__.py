"""Searching: a question in, ranked passages (`retrieve.Hit`, carrying their offsets) out.

`retrieve` runs vector, BM25F keyword and hybrid search in SQL; `followup` searches a question
with its rewrite and fuses the rankings; `library` searches several notebooks, each with its own
embedding model, and merges their rankings.

May import: read, index, store.
"""
