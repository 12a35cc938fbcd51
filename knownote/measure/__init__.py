"""Measuring: the eval commands over question sets.

`retrieval` (recall@k and MRR of search), `library` (the same across notebooks), `answers`
(answers from a server, scored), `support` (support spans against annotated evidence).

May import: read, index, store, search, answer.
"""
