"""How close a transcript is to the text that was spoken: the word and character error rates."""

from __future__ import annotations

import re
from collections.abc import Sequence

_NOT_WORD = re.compile(r"[^\w']+")


def words(text: str) -> list[str]:
    """Lower-case words without punctuation ("anti-gravity" is two words, as spoken)."""
    return [w.strip("'") for w in _NOT_WORD.split(text.lower()) if w.strip("'")]


def edits(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Substitutions, deletions and insertions that turn `reference` into `hypothesis`."""
    previous = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        current = [i]
        for j, h in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / words of the reference, by edit distance."""
    ref, hyp = words(reference), words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    return edits(ref, hyp) / len(ref)


def character_error_rate(reference: str, hypothesis: str) -> float:
    """Edits / characters of the reference, letters and digits only (no spaces, punctuation):
    for languages written without spaces, such as Japanese."""
    ref = [c for c in reference if c.isalnum()]
    hyp = [c for c in hypothesis if c.isalnum()]
    return edits(ref, hyp) / max(1, len(ref))
