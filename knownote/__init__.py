"""KnowNote: a local notebook whose answers cite the exact passages they came from.

The package is one folder per stage of the pipeline, each importing only the stages below it
(tests/test_layers.py states the order and fails on an import against it):

    read      bytes -> canonical text, pages, headings, OCR boxes     imports no other stage
    index     canonical text -> passages with offsets, terms, vectors  read
    store     DuckDB: every table, migrations, archives, the queue    read, index
    search    a question -> ranked passages (vector, keyword, hybrid)  read, index, store
    answer    passages -> an answer with citations and support spans  ... search
    show      escaped, highlighted excerpts; page images with boxes   ... answer
    measure   the eval commands over question sets                    ... answer
    pipeline  the import and re-index that drive read -> index -> store, and the queue's worker
    ui        the Streamlit views (with app.py the only importers of streamlit)

At the top: `errors` (what a user can cause, in words for them) and `settings`, which every stage
may import; `access` (the optional password), `notebooks` (deleting a notebook across every
table's owner) and `cli` (the command line).
"""
