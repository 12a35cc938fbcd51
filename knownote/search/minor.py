"""Which passages' minor parts (references, front matter, page furniture) a question names.

Hybrid search weighs minor parts down (`Tuning.minor_weight`), so that a question about a paper's
method finds its text before the titles it cites. A question that names a cited title, an author
list or a running title is asking for that part: the passages whose minor parts hold the
question's words close together keep their score.
"""

from __future__ import annotations

from collections.abc import Sequence

from knownote.index.tokenize import tokenize
from knownote.read.roles import MINOR
from knownote.store.db import Store

# A minor part names the question when this share of the question's distinct words stands in it
# within a window of WINDOW times as many words as the question has. With benchmarks/roles_search.py
# 0.8 ranked the same but let more reference entries into the top 5 of section questions, whose
# words a cited title may share; none (above 1) lowered the reference questions' MRR@10.
NAMED_SHARE = 1.0
WINDOW = 2


def minor_texts(store: Store, passage_ids: Sequence[int]) -> dict[int, str]:
    """The text of each passage's minor parts, joined by line breaks (passages with none left
    out)."""
    if not passage_ids:
        return {}
    with store.lock:
        rows = store.db.execute(
            "SELECT p.id, substring(p.text, greatest(r.start - p.start, 0) + 1, "
            'least(r."end", p."end") - greatest(r.start, p.start)) FROM passages p '
            'JOIN roles r ON r.document_id = p.document_id AND r.start < p."end" '
            'AND p.start < r."end" WHERE p.id IN (SELECT unnest(?::BIGINT[])) '
            "AND list_contains(?, r.role) ORDER BY p.id, r.start",
            [list(passage_ids), sorted(MINOR)],
        ).fetchall()
    texts: dict[int, list[str]] = {}
    for pid, part in rows:
        texts.setdefault(int(pid), []).append(part)
    return {pid: "\n".join(parts) for pid, parts in texts.items()}


def named_share(question: str, text: str) -> float:
    """The largest share of the question's distinct words found within one window of `text`
    (WINDOW times the question's length in words)."""
    wanted = set(tokenize(question))
    if not wanted:
        return 0.0
    words = tokenize(text)
    width = WINDOW * max(len(wanted), 1)
    held: dict[str, int] = {}
    best = 0
    for i, word in enumerate(words):
        if word in wanted:
            held[word] = held.get(word, 0) + 1
        if i >= width and words[i - width] in wanted:
            gone = words[i - width]
            held[gone] -= 1
            if not held[gone]:
                del held[gone]
        best = max(best, len(held))
    return best / len(wanted)


def named(
    store: Store, question: str, passage_ids: Sequence[int], share: float = NAMED_SHARE
) -> set[int]:
    """Those of the passages whose minor parts name the question: `share` of its words (see
    `named_share`)."""
    return {
        pid
        for pid, text in minor_texts(store, passage_ids).items()
        if named_share(question, text) >= share
    }
