"""Study: cards made from a notebook's sources, each tied to the range of the stored text it was
made from; FSRS review; multiple-choice quizzes; Anki and CSV export.

Cards without a model are cloze cards of each source's central sentences (`cloze`); with a
model, question-and-answer cards whose answer is checked against its passage (`written`).
`make` makes them for the sources that have none; `cards` owns their tables.

Imports read, index, store, search and answer; the pipeline, the UI and the command line import
it.
"""
