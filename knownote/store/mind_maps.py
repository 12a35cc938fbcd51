"""Kept mind maps: a notebook's latest map written by a model, its nodes, links and citations.

This module owns `mind_maps`, `mind_map_nodes`, `mind_map_links` and `mind_map_cites`
(migration m026). A notebook keeps one such map; making another replaces it in one
transaction. Each citation keeps its passage's range, so it still says where it pointed after
its source is re-indexed (the text, and so the range, never changes) or deleted (stale).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb

from knownote.errors import NotFound
from knownote.store.db import Store

ITEM_TABLES = ("mind_map_nodes", "mind_map_links", "mind_map_cites")


@dataclass(frozen=True)
class KeptCite:
    of_link: bool
    item: int  # the node's number, or the link's
    n: int  # its order among the item's citations
    passage_id: int | None
    document_id: int
    start: int
    end: int


@dataclass(frozen=True)
class KeptMap:
    id: int
    notebook_id: int
    title: str
    model: str
    dropped: int
    made_at: datetime
    nodes: tuple[tuple[int, int | None, str], ...]  # (node, parent, label), in order
    links: tuple[tuple[int, int, int, str], ...]  # (link, source, target, label)
    cites: tuple[KeptCite, ...]


def save_mind_map(
    store: Store,
    notebook_id: int,
    title: str,
    model: str,
    dropped: int,
    nodes: Sequence[tuple[int, int | None, str]],
    links: Sequence[tuple[int, int, int, str]],
    cites: Sequence[KeptCite],
) -> int:
    """Keep the notebook's map (replacing the one before); its id. NotFound when the notebook
    was deleted meanwhile."""
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM notebooks WHERE id = ?", [notebook_id]).fetchall():
            raise NotFound("That notebook was deleted meanwhile; its mind map was not kept.")
        delete_notebook_mind_maps(db, notebook_id)
        ((map_id,),) = db.execute(
            "INSERT INTO mind_maps (notebook_id, title, model, dropped) VALUES (?, ?, ?, ?) "
            "RETURNING id",
            [notebook_id, title, model, dropped],
        ).fetchall()
        if nodes:
            db.executemany(
                "INSERT INTO mind_map_nodes VALUES (?, ?, ?, ?)",
                [[map_id, *node] for node in nodes],
            )
        if links:
            db.executemany(
                "INSERT INTO mind_map_links VALUES (?, ?, ?, ?, ?)",
                [[map_id, *link] for link in links],
            )
        if cites:
            db.executemany(
                "INSERT INTO mind_map_cites VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [map_id, c.of_link, c.item, c.n, c.passage_id, c.document_id, c.start, c.end]
                    for c in cites
                ],
            )
    return map_id


def kept_mind_map(store: Store, notebook_id: int) -> KeptMap | None:
    """The notebook's kept map, or None."""
    with store.lock:
        db = store.db
        head = db.execute(
            "SELECT id, notebook_id, title, model, dropped, made_at FROM mind_maps "
            "WHERE notebook_id = ? ORDER BY id DESC LIMIT 1",
            [notebook_id],
        ).fetchall()
        if not head:
            return None
        map_id = head[0][0]
        nodes = db.execute(
            "SELECT node, parent, label FROM mind_map_nodes WHERE map_id = ? ORDER BY node",
            [map_id],
        ).fetchall()
        links = db.execute(
            "SELECT link, source, target, label FROM mind_map_links WHERE map_id = ? ORDER BY link",
            [map_id],
        ).fetchall()
        cites = db.execute(
            'SELECT of_link, item, n, passage_id, document_id, start, "end" FROM mind_map_cites '
            "WHERE map_id = ? ORDER BY of_link, item, n",
            [map_id],
        ).fetchall()
    return KeptMap(
        *head[0],
        nodes=tuple(nodes),
        links=tuple(links),
        cites=tuple(KeptCite(*row) for row in cites),
    )


def delete_notebook_mind_maps(db: duckdb.DuckDBPyConnection, notebook_id: int) -> None:
    """Inside the caller's transaction (see knownote.notebooks.delete_notebook)."""
    scope = "map_id IN (SELECT id FROM mind_maps WHERE notebook_id = ?)"
    for table in ITEM_TABLES:
        db.execute(f"DELETE FROM {table} WHERE {scope}", [notebook_id])
    db.execute("DELETE FROM mind_maps WHERE notebook_id = ?", [notebook_id])
