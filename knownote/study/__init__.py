"""Study tools made from a notebook's sources: mind maps (and cards), each item tied to ranges.

Receives stored documents, headings and passages (and an answer server); returns maps whose
every node carries exact ranges of the stored text. May import read, index, store, search,
answer and show.
"""
