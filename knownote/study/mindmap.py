"""A notebook's mind map written by a model, every node and link citing the passages it came from.

The passages nearest each source's centre are numbered `[1]`…`[k]` like an answer's; the model
replies with an indented list whose every line ends in the numbers of its passages, and
optionally a `LINKS:` section of relations between ideas. The reply is parsed forgivingly
(bullets, numbers, headings, tabs, full-width marks, a thinking block, a code fence), then held
to one rule: a node or link whose citations do not resolve to a passage it was given is dropped,
and with a node its branch. The map is kept (knownote.store.mind_maps) with each citation's range.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knownote.answer.cite import SourcePassage, parse_citations, strip_marks
from knownote.answer.ollama_chat import num_ctx_for
from knownote.answer.overview import by_centrality, prose_first
from knownote.answer.prompts import Chat, passage_header, without_thinking
from knownote.errors import ModelError
from knownote.read.extracted import page_of
from knownote.read.roles import Roles
from knownote.store.db import Store
from knownote.store.mind_maps import KeptCite, kept_mind_map, save_mind_map
from knownote.study.maps import Cite, Link, MindMap, Node

MAP_PASSAGES = 12  # passages the model is given, shared out among the sources in use
MAX_NODES = 80
MAX_LABEL = 120  # characters of a node's label; longer ones are cut at a word
MAX_IDEA = 240  # a longer line is a paragraph, not an idea: it cites nothing and is dropped
ANSWER_TOKENS = 1024
MAP_PROMPT = """\
You draw a mind map of the main ideas in numbered passages from a notebook's sources.
Reply with an indented list and nothing else, in the language of the passages:
- a main idea [1]
  - an idea under it [2]
    - a detail of that idea [2][3]
- another main idea [4]
End every line with the numbers of the passages it comes from, in square brackets.
Keep each line short (a few words). At most five main ideas, at most four ideas under each.
If ideas in different branches are related, add at the end:
LINKS:
- an idea -> another idea: how they relate [3]"""

Progress = Callable[[str, int, int], None]  # (what is being done, steps done, steps in all)

_BULLET = re.compile(
    r"^(?:[-*+•·‣▪◦–—>]+|\d+(?:[.．]\d+)+[.)．]?|\(?\d+[.)．、]|\(?[a-zA-Z][.)])\s+"
)
_DOTTED = re.compile(r"^(\d+(?:[.．]\d+)+)[.)．]?\s")
_HEADING = re.compile(r"^(#{1,6})\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINKS_HEADER = re.compile(
    r"^[\W_]*(links?|relations?|relationships?|connections?|cross[- ]links?)[\W_]*$", re.I
)
_SKIPPED_HEADER = re.compile(r"^[\W_]*(mind ?map|map|main ideas|ideas|outline)[\W_]*$", re.I)
# "[passage 2]", "[P2]", "(passages 1, 3)", "(source 2)": written as the plain marks cite.py reads.
_WORDY_MARK = re.compile(
    r"[\[(（【]\s*(?:passages?|sources?|refs?|p)\.?\s*(\d+(?:\s*[-–,，、;]\s*\d+)*)\s*[\])）】]",
    re.I,
)
_ARROW = re.compile(r"\s*(?:-{1,2}>|—>|–>|=>|→|⟶|➔|⇒)\s*")
_NAMED_ARROW = re.compile(r"^(.+?)\s+-{1,2}\s*(.+?)\s*-{1,2}>\s*(.+)$")
_EMPHASIS = re.compile(r"(\*\*|__|`|\*)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ParsedNode:
    depth: int  # 0 at the top level
    label: str
    numbers: tuple[int, ...]  # cited passages, 1..k, in order of first appearance


@dataclass(frozen=True)
class ParsedLink:
    source: str
    target: str
    label: str
    numbers: tuple[int, ...]


@dataclass(frozen=True)
class ParsedMap:
    nodes: tuple[ParsedNode, ...]
    links: tuple[ParsedLink, ...]
    outside: int  # marks citing numbers outside 1..k


def parse_map(reply: str, k: int) -> ParsedMap:
    """The nodes (with their depth) and links of a model's reply; pure, never raises."""
    nodes: list[ParsedNode] = []
    links: list[ParsedLink] = []
    outside = 0
    keys: list[float] = []  # the nesting keys of the lines in force, outermost first
    in_links = False
    for raw in without_thinking(reply).splitlines():
        if _FENCE.match(raw):
            continue
        line = raw.expandtabs(4).rstrip()
        body = line.strip()
        if not body:
            continue
        if _LINKS_HEADER.match(body):
            in_links = True
            continue
        if _SKIPPED_HEADER.match(body):
            continue
        key = _nesting_key(line)
        body = _WORDY_MARK.sub(lambda m: f"[{m.group(1)}]", _without_bullet(body))
        numbers, dropped = parse_citations(body, k)
        outside += dropped
        text = strip_marks(body)
        link = _link(text, tuple(numbers))
        if link is not None:
            links.append(link)
            continue
        if in_links:
            continue  # a line of the links section that names no relation
        if len(text.strip()) > MAX_IDEA:
            numbers = []
        label = clean_label(text)
        if not label:
            if numbers and nodes:  # a line of marks alone: they belong to the line above
                last = nodes[-1]
                merged = tuple(dict.fromkeys((*last.numbers, *numbers)))
                nodes[-1] = ParsedNode(last.depth, last.label, merged)
            continue
        while keys and keys[-1] >= key:
            keys.pop()
        nodes.append(ParsedNode(len(keys), label, tuple(numbers)))
        keys.append(key)
    return ParsedMap(tuple(nodes), tuple(links), outside)


def _nesting_key(line: str) -> float:
    """Deeper lines have larger keys: headings by their #s (above any list), list lines by their
    indent, dotted numbers ("1.2.3") by their parts."""
    body = line.lstrip()
    heading = _HEADING.match(body)
    if heading:
        return len(heading.group(1)) - 7
    indent = len(line) - len(body)
    dotted = _DOTTED.match(body)
    parts = len(re.split(r"[.．]", dotted.group(1))) - 1 if dotted else 0
    return indent + 100 * parts


def _without_bullet(body: str) -> str:
    body = _HEADING.sub("", body)
    return _BULLET.sub("", body, count=1)


def clean_label(text: str) -> str:
    """A node's label on one line: emphasis, a trailing colon or dash and extra space removed,
    at most MAX_LABEL characters (cut at a word)."""
    text = _SPACE.sub(" ", _EMPHASIS.sub("", text)).strip(" \t:：-–—|")
    if len(text) > MAX_LABEL:
        cut = text[:MAX_LABEL].rsplit(" ", 1)[0]
        text = cut + "…"
    return text


def _link(text: str, numbers: tuple[int, ...]) -> ParsedLink | None:
    """'A -> B: how', 'A → B (how)' or 'A --how--> B'; None for a line that is no relation."""
    named = _NAMED_ARROW.match(text)
    if named:
        source, label, target = named.groups()
    else:
        parts = _ARROW.split(text, maxsplit=1)
        if len(parts) != 2:
            return None
        source, rest = parts
        how = re.match(r"^(.+?)\s*(?::|：|\(|（| - | — )\s*(.*?)[)）]?\s*$", rest)
        target, label = (how.group(1), how.group(2)) if how else (rest, "")
    source, target = clean_label(source), clean_label(target)
    if not source or not target:
        return None
    return ParsedLink(source, target, clean_label(label), numbers)


def label_key(label: str) -> str:
    """How a link's end is matched to a node: letters and digits, case folded."""
    folded = unicodedata.normalize("NFKC", label).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def resolve_map(
    parsed: ParsedMap, passages: Sequence[SourcePassage], title: str, model: str
) -> MindMap:
    """The map of what resolves: a node needs a citation of a given passage and a kept parent
    (else it and its branch are dropped); a link needs a citation and two kept ends."""

    def cites(numbers: Sequence[int]) -> tuple[Cite, ...]:
        return tuple(_cite(passages[n - 1]) for n in numbers if 1 <= n <= len(passages))

    nodes: list[Node] = []
    dropped = 0
    kept_at: list[int | None] = []  # by depth: the kept node in force there, None if dropped
    for parsed_node in parsed.nodes:
        del kept_at[parsed_node.depth :]
        parent = kept_at[-1] if kept_at else None
        found = cites(parsed_node.numbers)
        if (kept_at and parent is None) or not found or len(nodes) >= MAX_NODES:
            dropped += 1
            kept_at.append(None)
            continue
        node = Node(len(nodes), parent, parsed_node.label, found)
        nodes.append(node)
        kept_at.append(node.id)
    by_key: dict[str, int] = {}
    for node in nodes:
        by_key.setdefault(label_key(node.label), node.id)
    links: list[Link] = []
    seen: set[tuple[int, int]] = set()
    for parsed_link in parsed.links:
        source = by_key.get(label_key(parsed_link.source))
        target = by_key.get(label_key(parsed_link.target))
        found = cites(parsed_link.numbers)
        if source is None or target is None or source == target or not found:
            dropped += 1
            continue
        if (source, target) in seen:
            continue
        seen.add((source, target))
        links.append(Link(source, target, parsed_link.label, found))
    return MindMap(title, tuple(nodes), tuple(links), model, dropped)


def _cite(p: SourcePassage) -> Cite:
    return Cite(p.document_id, p.start, p.end, p.title, p.page_start, p.page_end, p.passage_id)


def map_passages(store: Store, notebook_id: int, k: int = MAP_PASSAGES) -> list[SourcePassage]:
    """About `k` passages, the nearest to each source's centre, shared out among the sources in
    use (each gets its turn, the most central first), numbered in reading order by source. The
    ideas come from body text: passages that are mostly prose go first (`prose_first`)."""
    documents = [d for d in store.documents(notebook_id) if d.enabled and d.passages]
    if not documents:
        return []
    share = max(1, math.ceil(k / len(documents)))
    picked: list[tuple[int, list[int]]] = []
    rest: list[list[int]] = []  # each source's passages beyond its share, the most central first
    for document in documents[:k]:
        vectors = store.vectors(document.id)
        passages = store.passages(document.id)
        if vectors.shape[0] and vectors.shape[0] == len(passages):
            order = prose_first(
                by_centrality(vectors)[1], passages, Roles(store.roles(document.id))
            )
            picked.append((document.id, order[:share]))
            rest.append(order[share:])
    # Trim the shares (the least central of each first) to k in all; or, where a source has
    # fewer passages of body text than its share, fill up from the others in turn.
    while sum(len(indexes) for _, indexes in picked) > k:
        longest = max(picked, key=lambda entry: len(entry[1]))
        longest[1].pop()
    while sum(len(indexes) for _, indexes in picked) < k and any(rest):
        for (_, indexes), more in zip(picked, rest, strict=True):
            if more and sum(len(i) for _, i in picked) < k:
                indexes.append(more.pop(0))
    result: list[SourcePassage] = []
    titles = {d.id: d.title for d in documents}
    for document_id, indexes in picked:
        passages = store.passages(document_id)
        for i in sorted(indexes):
            p = passages[i]
            result.append(
                SourcePassage(
                    len(result) + 1, p.id, document_id, titles[document_id], p.idx, p.start,
                    p.end, p.page_start, p.page_end, p.text, True, section=p.section,
                )
            )  # fmt: skip
    return result


def map_messages(passages: Sequence[SourcePassage]) -> list[dict]:
    blocks = [f"{passage_header(p.n, p)}\n{p.text.strip()}" for p in passages]
    return [
        {"role": "system", "content": MAP_PROMPT},
        {"role": "user", "content": "Passages:\n\n" + "\n\n".join(blocks)},
    ]


def make_mind_map(
    store: Store,
    llm: Chat,
    model: str,
    notebook_id: int,
    progress: Progress | None = None,
) -> MindMap:
    """Ask the model for the notebook's map, keep what resolves, and return it as kept.
    Raises ModelError when the model fails or no node of its reply cites a given passage."""
    report = progress or (lambda what, done, total: None)
    notebook = store.notebook(notebook_id)
    report("Choosing passages", 0, 3)
    passages = map_passages(store, notebook_id)
    if not passages:
        raise ModelError("This notebook has no passages in use to make a mind map from.")
    report(f"Waiting for {model}", 1, 3)
    messages = map_messages(passages)
    reply = llm.complete(model, messages, num_ctx_for(messages, answer_tokens=ANSWER_TOKENS))
    report("Checking the citations", 2, 3)
    made = resolve_map(parse_map(reply, len(passages)), passages, notebook.name, model)
    if not made.nodes:
        raise ModelError(
            f"{model} wrote no idea that cites the passages it was given, so no map was kept. "
            "Try again, or a larger model."
        )
    save_mind_map(
        store,
        notebook_id,
        made.title,
        model,
        made.dropped,
        [(n.id, n.parent, n.label) for n in made.nodes],
        [(i, link.source, link.target, link.label) for i, link in enumerate(made.links)],
        [
            KeptCite(False, node.id, j, c.passage_id, c.document_id, c.start, c.end)
            for node in made.nodes
            for j, c in enumerate(node.cites)
        ]
        + [
            KeptCite(True, i, j, c.passage_id, c.document_id, c.start, c.end)
            for i, link in enumerate(made.links)
            for j, c in enumerate(link.cites)
        ],
    )
    report("Kept", 3, 3)
    kept = load_mind_map(store, notebook_id)
    assert kept is not None  # just saved, under the notebook's id
    return kept


def load_mind_map(store: Store, notebook_id: int) -> MindMap | None:
    """The notebook's kept map; a citation whose source is gone or whose range no longer fits
    its text is marked stale (it is never highlighted)."""
    kept = kept_mind_map(store, notebook_id)
    if kept is None:
        return None
    documents = {d.id: d for d in store.documents(notebook_id)}
    lengths: dict[int, int] = {}
    pages = {}
    for document_id in {c.document_id for c in kept.cites} & documents.keys():
        lengths[document_id] = len(store.document_text(document_id))
        pages[document_id] = store.pages(document_id)

    def cite(c: KeptCite) -> Cite:
        document = documents.get(c.document_id)
        if document is None:
            return Cite(c.document_id, c.start, c.end, "", None, None, c.passage_id, stale=True)
        stale = not 0 <= c.start <= c.end <= lengths[c.document_id]
        listed = pages[c.document_id]
        starts = [p.start for p in listed]
        return Cite(
            c.document_id, c.start, c.end, document.title, page_of(starts, listed, c.start),
            page_of(starts, listed, max(c.start, c.end - 1)), c.passage_id, stale,
        )  # fmt: skip

    of_nodes: dict[int, list[Cite]] = {}
    of_links: dict[int, list[Cite]] = {}
    for c in kept.cites:
        (of_links if c.of_link else of_nodes).setdefault(c.item, []).append(cite(c))
    nodes = tuple(
        Node(node, parent, label, tuple(of_nodes.get(node, ())))
        for node, parent, label in kept.nodes
    )
    links = tuple(
        Link(source, target, label, tuple(of_links.get(link, ())))
        for link, source, target, label in kept.links
    )
    return MindMap(kept.title, nodes, links, kept.model, kept.dropped)
