"""How close a transcript is to the text that was spoken: the word error rate."""

from __future__ import annotations

import re

_NOT_WORD = re.compile(r"[^\w']+")


def words(text: str) -> list[str]:
    """Lower-case words without punctuation ("anti-gravity" is two words, as spoken)."""
    return [w.strip("'") for w in _NOT_WORD.split(text.lower()) if w.strip("'")]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / words of the reference, by edit distance."""
    ref, hyp = words(reference), words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / len(ref)
