"""Study tools made from a notebook's sources, each item tied to ranges of the stored text:
cards (FSRS review, multiple-choice quizzes, Anki and CSV export) and mind maps.

Cards without a model are cloze cards of each source's central sentences (`cloze`); with a
model, question-and-answer cards whose answer is checked against its passage (`written`).
`make` makes them for the sources that have none; `cards` owns their tables. Mind maps come from
the sources' headings (`outline`) or from a model whose every node cites passages (`mindmap`).

Imports read, index, store, search, answer and show; the pipeline, the UI and the command line
import it.
"""
