"""Offset invariants every list of passages must satisfy, shared by the splitter, importer and
corpus tests.

``assert_spans_valid`` holds for any correct split of ``text``. ``assert_overlap_rule`` adds the
overlap guarantee that ``knownote.split.split`` documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from knownote.split import Span


def _pairs(spans: Sequence[tuple[int, int]] | Sequence[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) if isinstance(s, Span) else (s[0], s[1]) for s in spans]


def assert_spans_valid(
    text: str, spans: Sequence[tuple[int, int]] | Sequence[Span], size: int
) -> None:
    """Spans are in order, at most ``size`` long, trimmed, and cover every non-whitespace
    character of ``text`` (so the tail is never dropped)."""
    pairs = _pairs(spans)
    if not text.strip():
        assert pairs == [], f"whitespace-only text must give no passages, got {pairs[:3]}"
        return
    assert pairs, "text with non-whitespace characters must give passages"
    for i, (start, end) in enumerate(pairs):
        where = f"passage {i} [{start}, {end})"
        assert isinstance(start, int) and isinstance(end, int), f"{where}: offsets must be ints"
        assert 0 <= start < end <= len(text), f"{where}: outside the text of {len(text)} chars"
        assert end - start <= size, f"{where}: {end - start} characters, more than {size}"
        assert not text[start].isspace(), f"{where}: starts on whitespace {text[start]!r}"
        assert not text[end - 1].isspace(), f"{where}: ends on whitespace {text[end - 1]!r}"
    for i, ((start, end), (next_start, next_end)) in enumerate(pairwise(pairs)):
        where = f"passages {i} [{start}, {end}) and {i + 1} [{next_start}, {next_end})"
        assert start < next_start, f"{where}: starts not strictly increasing"
        assert end < next_end, f"{where}: ends not strictly increasing"
        gap = text[end:next_start]
        assert not gap.strip(), f"{where}: text between them is dropped: {gap[:80]!r}"
    before, after = text[: pairs[0][0]], text[pairs[-1][1] :]
    assert not before.strip(), f"text before the first passage is dropped: {before[-80:]!r}"
    assert not after.strip(), f"the tail is dropped: {after[:80]!r}"


def assert_overlap_rule(
    text: str, spans: Sequence[tuple[int, int]] | Sequence[Span], size: int, overlap: int
) -> None:
    """Consecutive passages overlap by at most ``overlap`` characters, and fail to overlap only in
    the cases ``knownote.split`` documents."""
    room = max(1, (size - overlap) // 2)
    pairs = _pairs(spans)
    for i, ((start, end), (next_start, _)) in enumerate(pairwise(pairs)):
        where = f"passages {i} [{start}, {end}) and {i + 1} starting at {next_start}"
        if next_start < end:
            assert end - next_start <= overlap, f"{where}: overlap above {overlap}"
            continue
        assert not text[end:next_start].strip(), f"{where}: a gap that is not whitespace"
        too_far = next_start + room - size > end - 1
        assert overlap == 0 or end - start == 1 or too_far, f"{where}: no overlap"
