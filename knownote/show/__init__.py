"""Showing: offsets in, what a person sees out, with every document character escaped.

`excerpt` makes highlighted excerpts and answer cards; `pdf_page` maps offsets to glyph boxes and
draws highlighted page images.

May import: read, index, store, search, answer.
"""
