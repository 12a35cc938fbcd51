"""A mind map as plain records: nodes in a tree, cross-links, and the ranges each one cites.

Every node and link carries `Cite`s: a document and `[start, end)` of its stored text, so a node
opens its range like any citation. A map made from the headings has one cite per node (the
section's range); a model's map cites the passages it was given (their ids and ranges).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Cite:
    """A range of a document's stored text; `passage_id` when it is a passage."""

    document_id: int
    start: int
    end: int
    title: str = ""
    page_start: int | None = None
    page_end: int | None = None
    passage_id: int | None = None
    stale: bool = False  # the passage is gone or its text no longer matches the document

    def as_dict(self) -> dict[str, object]:
        return {
            "document_id": self.document_id,
            "start": self.start,
            "end": self.end,
            "title": self.title,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "passage_id": self.passage_id,
            "stale": self.stale,
        }


@dataclass(frozen=True)
class Node:
    """One idea or section; `parent` is None at the top level. The edge from its parent to it
    cites the same ranges as the node: the line that put it there cited them."""

    id: int
    parent: int | None
    label: str
    cites: tuple[Cite, ...]
    kind: str = "idea"  # 'source', 'section' (a map of headings) or 'idea' (a model's map)


@dataclass(frozen=True)
class Link:
    """A labelled relation between two nodes outside the tree, with the ranges it cites."""

    source: int
    target: int
    label: str
    cites: tuple[Cite, ...]


@dataclass(frozen=True)
class MindMap:
    """Nodes in reading order, every parent before its children."""

    title: str
    nodes: tuple[Node, ...]
    links: tuple[Link, ...] = ()
    model: str | None = None  # None: made from the headings, without a model
    dropped: int = 0  # nodes and links left out because their citations did not resolve

    def children(self, parent: int | None) -> list[Node]:
        return [n for n in self.nodes if n.parent == parent]

    def depth_of(self, node: Node) -> int:
        """1 for a top-level node."""
        by_id = {n.id: n for n in self.nodes}
        depth = 1
        while node.parent is not None:
            node = by_id[node.parent]
            depth += 1
        return depth

    def walk(self, max_depth: int | None = None) -> Iterator[tuple[int, Node]]:
        """(depth, node) in outline order, down to `max_depth` (None: all)."""
        below: dict[int | None, list[Node]] = {}
        for node in self.nodes:
            below.setdefault(node.parent, []).append(node)

        def visit(parent: int | None, depth: int) -> Iterator[tuple[int, Node]]:
            if max_depth is not None and depth > max_depth:
                return
            for node in below.get(parent, []):
                yield depth, node
                yield from visit(node.id, depth + 1)

        return visit(None, 1)

    def as_dict(self) -> dict[str, object]:
        return {
            "title": self.title,
            "model": self.model,
            "dropped": self.dropped,
            "nodes": [
                {
                    "id": n.id,
                    "parent": n.parent,
                    "label": n.label,
                    "kind": n.kind,
                    "cites": [c.as_dict() for c in n.cites],
                }
                for n in self.nodes
            ],
            "links": [
                {
                    "source": link.source,
                    "target": link.target,
                    "label": link.label,
                    "cites": [c.as_dict() for c in link.cites],
                }
                for link in self.links
            ],
        }
