"""A notebook's mind map without a model: each source, and under it the tree of its headings.

Headings are already ranges of the stored text (migration m016); a section runs from its
heading to the line of the next heading of the same or a higher level, so each node opens the
text it stands for: `text[start:end]` of its document. Nothing is written by a model.
"""

from __future__ import annotations

from knownote.read.extracted import page_of
from knownote.read.sections import heading_text
from knownote.store.db import Document, Store
from knownote.study.maps import Cite, MindMap, Node


def outline_map(store: Store, notebook_id: int, title: str) -> MindMap:
    """The map of the notebook's sources in use and their sections, in reading order."""
    nodes: list[Node] = []
    for document in store.documents(notebook_id):
        if document.enabled:
            nodes.extend(source_nodes(store, document, first_id=len(nodes)))
    return MindMap(title=title, nodes=tuple(nodes))


def source_nodes(store: Store, document: Document, first_id: int = 0) -> list[Node]:
    """The source's node (its whole text) and one node per heading, nested by level."""
    text = store.document_text(document.id)
    pages = store.pages(document.id)
    starts = [p.start for p in pages]

    def cite(start: int, end: int) -> Cite:
        return Cite(
            document.id,
            start,
            end,
            document.title,
            page_of(starts, pages, start),
            page_of(starts, pages, max(start, end - 1)),
        )

    source = Node(first_id, None, document.title, (cite(0, len(text)),), "source")
    nodes = [source]
    headings = sorted(store.headings(document.id), key=lambda h: (h.start, h.level))
    stack: list[tuple[int, int]] = []  # (level, node id) of the headings in force
    for i, heading in enumerate(headings):
        label = heading_text(text, heading)
        if not label:
            continue
        following = next(
            (
                h.start
                for h in headings[i + 1 :]
                if h.level <= heading.level and h.start > heading.start
            ),
            len(text),
        )
        # Up to the line the next heading is on, so its marker ("## ") is not in this one.
        end = following
        if following < len(text):
            end = text.rfind("\n", heading.end, following) + 1 or following
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        parent = stack[-1][1] if stack else source.id
        node = Node(first_id + len(nodes), parent, label, (cite(heading.start, end),), "section")
        nodes.append(node)
        stack.append((heading.level, node.id))
    return nodes
