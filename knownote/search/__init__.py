"""Searching: a question in, ranked passages (`retrieve.Hit`, carrying their offsets) out.

`retrieve` runs vector, BM25F keyword and hybrid search in SQL; `followup` searches a question
with its rewrite and fuses the rankings.

May import: read, index, store.
"""
