"""Notice when a streaming answer starts to repeat itself, so it can be cut there.

Small models loop: the same sentence again and again until the token limit, or a short phrase
over and over without punctuation. A whole sentence said a second time, or a phrase looping four
times, ends the answer before the repetition.
"""

from __future__ import annotations

import re

from knownote.answer.cite import strip_marks

MIN_SENTENCE = 20  # characters; shorter sentences ("Yes.", "See [2].") may repeat honestly
LOOP_TIMES = 4
LOOP_MIN_CHARS = 60
LOOP_MAX_PERIOD = 80
# A sentence ends with its punctuation (and any marks after it) or a line break.
_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+(?:\s*\[[^\]\n]{1,12}\])*|\n)")


def _key(sentence: str) -> str:
    return " ".join(strip_marks(sentence).casefold().split()).rstrip(".!?。！？ ")


class RepetitionCut:
    """Feed it the growing answer; `repeated` turns True once, and `text` is what to keep."""

    def __init__(self) -> None:
        self.text = ""

    def repeated(self, answer: str) -> bool:
        seen: set[str] = set()
        for match in _SENTENCE.finditer(answer):
            key = _key(match.group())
            if len(key) < MIN_SENTENCE:
                continue
            if key in seen:
                self.text = answer[: match.start()].rstrip()
                return True
            seen.add(key)
        return self._loop(answer)

    def _loop(self, answer: str) -> bool:
        tail = answer[-LOOP_MAX_PERIOD * LOOP_TIMES :]
        for period in range(1, LOOP_MAX_PERIOD + 1):
            span = period * LOOP_TIMES
            if span > len(tail):
                break
            if span < LOOP_MIN_CHARS:
                continue
            chunk = tail[-period:]
            if not any(c.isalpha() for c in chunk):
                continue  # rules, table borders
            if tail[-span:] == chunk * LOOP_TIMES:
                self.text = answer[: len(answer) - span + period].rstrip()
                return True
        return False
