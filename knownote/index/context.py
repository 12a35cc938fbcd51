"""What the index is given for a passage: its text in context, and its keyword terms.

The stored passage is always the exact slice `text[start:end]`; only the embedding model's input
and the keyword index see where the passage sits (its document's title and section path).
Queries are embedded as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knownote.index.analyze import WORDS, analyzer_for, passage_terms
from knownote.read.sections import SEPARATOR


@dataclass(frozen=True)
class NewPassage:
    """A passage ready to store: its offsets, pages, keyword counts and normalised vector."""

    start: int
    end: int
    page_start: int | None
    page_end: int | None
    terms: dict[str, int]
    section: str = ""  # the section path at the passage's start (see sections.section_paths)
    n_terms: int | None = None  # the length BM25 normalises by; None: every term counts


MAX_HEADING = 200
# The formats KnowNote imports (a title that is the file name ends with one of them).
_FILE_NAME = re.compile(
    r"(.+)\.(?:pdf|docx|pptx|epub|html?|md|markdown|txt|text|png|jpe?g|tiff?|webp|bmp|gif)",
    re.IGNORECASE,
)
PLAIN = "text"  # documents.embedded_as: the passage alone (documents imported before)
IN_CONTEXT = "title+section"  # the title and section path, a blank line, then the passage


@dataclass(frozen=True)
class IndexRecipe:
    """How a document's vectors and terms are made (recorded with it in `documents`)."""

    embedded_as: str = IN_CONTEXT
    terms_as: str | None = None  # None: chosen from the document's text (`analyzer_for`)

    def analyzer(self, text: str) -> str:
        return self.terms_as if self.terms_as is not None else analyzer_for(text)


CURRENT = IndexRecipe()
BEFORE = IndexRecipe(PLAIN, WORDS)  # how documents were indexed before titles and sections


def heading(title: str, section: str, *, for_model: bool = False) -> str:
    """The document title and the section path on one line ("paper › 3 Method › 3.2 Training").

    A title that is only a file name loses its extension and its underscores ("paper_dpr.pdf"
    reads "paper dpr" among the keywords); the embedding model (`for_model`) is not given it at
    all: it says little and costs tokens (+8.5% on a paper titled "paper_dpr_2004.04906_2col",
    where the import may grow by at most 5%). At most MAX_HEADING characters are kept, the end
    of the path (its innermost sections) first.
    """
    name = _FILE_NAME.fullmatch(title.strip())
    if name:
        title = "" if for_model else name.group(1).replace("_", " ")
    line = SEPARATOR.join(part for part in (title.strip(), section.strip()) if part)
    return line if len(line) <= MAX_HEADING else "…" + line[-MAX_HEADING:].lstrip()


def embedding_text(title: str, section: str, text: str, embedded_as: str = IN_CONTEXT) -> str:
    """The text the embedding model is given for a passage."""
    if embedded_as == PLAIN:
        return text
    head = heading(title, section, for_model=True)
    return f"{head}\n\n{text}" if head else text


def index_passages(
    text: str,
    title: str,
    spans: Sequence[tuple[int, int]],
    sections: Sequence[str],
    pages: Sequence[tuple[int | None, int | None]],
    analyzer: str,
) -> list[NewPassage]:
    """Passages ready to store: offsets, pages, section and keyword terms (text and heading)."""
    passages = []
    for (start, end), section, (page_start, page_end) in zip(spans, sections, pages, strict=True):
        terms, n_terms = passage_terms(text[start:end], heading(title, section), analyzer)
        passages.append(
            NewPassage(start, end, page_start, page_end, terms, section=section, n_terms=n_terms)
        )
    return passages


def embedding_texts(
    text: str, title: str, passages: Sequence[NewPassage], embedded_as: str
) -> list[str]:
    return [embedding_text(title, p.section, text[p.start : p.end], embedded_as) for p in passages]
