"""Keyword tokens: lower-cased words for alphabetic scripts, character bigrams for CJK runs."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# Han, Hiragana, Katakana (incl. half-width), Hangul syllables and jamo, CJK compatibility.
_CJK = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0002fa1f"
)
_TOKEN = re.compile(rf"([{_CJK}]+)|((?:(?![{_CJK}])[^\W_])+)")


def tokenize(text: str) -> list[str]:
    """Split text into search terms. A CJK run of one character stays a unigram."""
    text = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    for cjk, word in _TOKEN.findall(text):
        if word:
            tokens.append(word)
        elif len(cjk) == 1:
            tokens.append(cjk)
        else:
            tokens.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
    return tokens


def term_counts(text: str) -> dict[str, int]:
    return dict(Counter(tokenize(text)))


_CJK_CHAR = re.compile(rf"[{_CJK}]")


def mostly_cjk(text: str) -> bool:
    """Whether at least half of a text's letters are CJK characters."""
    cjk = len(_CJK_CHAR.findall(text))
    return cjk > 0 and cjk >= sum(ch.isalpha() for ch in text) - cjk
