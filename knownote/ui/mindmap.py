"""The Mind map view: the notebook drawn as a tree, from its sources' headings (no model) or of
its main ideas as a model wrote them, each node opening the range of the text it stands for.

The picture is Streamlit's graphviz chart; below it each top-level branch folds in an expander,
and each node is a button that opens its range highlighted (the link mechanism of
knownote.ui.opened). SVG, OPML and Markdown downloads go to this session's page only.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from knownote.answer.ranges import SpanLinks
from knownote.answer.servers import AnswerServers
from knownote.errors import KnowNoteError
from knownote.pipeline.worker import ImportWorker
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Notebook, Store
from knownote.store.jobs import FAILED, MINDMAP, QUEUED, RUNNING
from knownote.study.map_export import to_dot, to_markdown, to_opml, to_svg, where
from knownote.study.maps import Cite, MindMap, Node
from knownote.study.mindmap import load_mind_map
from knownote.study.outline import outline_map
from knownote.ui.common import running_job
from knownote.ui.download import prepare

HEADINGS = "From the headings"
IDEAS = "Main ideas, by a model"
HEADINGS_LABEL = (
    "Each source with its titles and sections as they stand in its text; nothing here is "
    "written by a model. A node opens the text it stands for."
)
IDEAS_LABEL = (
    "Written by {model} from the passages each idea cites: the material it had, not proof. "
    "A node opens the first passage it cites."
)
REFRESH_SECONDS = 1.0


@st.cache_resource(max_entries=16, show_spinner=False)
def headings_map(
    db: str, notebook_id: int, title: str, sources: tuple[tuple[int, bool], ...], _store: Store
) -> MindMap:
    """Made again when the sources in use change (a document's text and headings never do,
    except when a re-index fills them in: that changes no id, so it shows after a restart)."""
    return outline_map(_store, notebook_id, title)


def mind_map_view(
    store: Store,
    notebook: Notebook,
    llm: AnswerServers | None,
    model: str | None,
    worker: ImportWorker,
    app_url: str,
) -> None:
    sources = tuple((d.id, d.enabled) for d in store.documents(notebook.id))
    if not any(enabled for _, enabled in sources):
        st.caption("No sources in use yet: add some under Sources, or switch them on there.")
        return
    kind = st.radio(
        "Map", [HEADINGS, IDEAS], key="mind_map_kind", horizontal=True, label_visibility="collapsed"
    )
    if kind == HEADINGS:
        mind_map = headings_map(str(store.path), notebook.id, notebook.name, sources, store)
        st.caption(HEADINGS_LABEL)
    else:
        mind_map = ideas(store, notebook, llm, model, worker)
        if mind_map is None:
            return
    if not mind_map.nodes:
        st.caption("Nothing to draw.")
        return
    links = SpanLinks(app_url, notebook.id)
    deepest = max(depth for depth, _ in mind_map.walk())
    depth = (
        st.slider("Levels shown", 1, deepest, min(3, deepest), key=f"mind_map_depth_{kind}")
        if deepest > 1
        else 1
    )
    with st.container(key="mind_map_chart"):
        st.graphviz_chart(to_dot(mind_map, depth), width="stretch")
    downloads(mind_map, links, notebook.id, depth)
    branches(mind_map, notebook.id, depth, kind)


def ideas(
    store: Store,
    notebook: Notebook,
    llm: AnswerServers | None,
    model: str | None,
    worker: ImportWorker,
) -> MindMap | None:
    """The kept map of main ideas with what its making is doing; None when there is none."""
    running = [
        job
        for job in worker.queue.jobs(notebook.id)
        if job.kind == MINDMAP and job.status in (QUEUED, RUNNING)
    ]
    kept = load_mind_map(store, notebook.id)
    if running:
        job = running[-1]
        fraction = min(job.done / job.total, 1.0) if job.total else 0.0
        st.progress(fraction, text=escape_markdown(f"{job.filename}: {job.label or 'waiting'}"))
        rerun_when_made(worker, notebook.id)
    elif llm is not None and model:
        label = "Make it again" if kept is not None else "Make a mind map"
        st.button(
            f"{label} with {escape_markdown(model)}",
            key="make_mind_map",
            on_click=make,
            args=(worker, notebook.id, llm, model),
            help="In the background: the model reads the passages nearest each source's centre "
            "and every idea it writes must cite them.",
        )
    else:
        st.caption("Connect an answer model (see the sidebar) to make a map of main ideas.")
    failed = [j for j in worker.queue.jobs(notebook.id) if j.kind == MINDMAP and j.status == FAILED]
    if failed and not running:
        st.caption(escape_markdown(f"The last mind map was not made: {failed[-1].error}"))
    if kept is None:
        if not running:
            st.caption("No map of main ideas has been made for this notebook yet.")
        return None
    note = IDEAS_LABEL.format(model=kept.model)
    if kept.dropped:
        note += f" Left out: {kept.dropped} ideas or links whose citations did not resolve."
    st.caption(escape_markdown(note))
    return kept


def make(worker: ImportWorker, notebook_id: int, llm: AnswerServers, model: str) -> None:
    worker.queue_mind_map(notebook_id, llm, model)


@st.fragment(run_every=REFRESH_SECONDS)
def rerun_when_made(worker: ImportWorker, notebook_id: int) -> None:
    if running_job(worker, notebook_id, MINDMAP) is None:
        st.rerun(scope="app")


def downloads(mind_map: MindMap, links: SpanLinks, notebook_id: int, depth: int) -> None:
    formats = (
        ("SVG", "svg", "image/svg+xml", lambda: to_svg(mind_map, links, depth)),
        ("OPML", "opml", "text/x-opml", lambda: to_opml(mind_map, links)),
        ("Markdown", "md", "text/markdown", lambda: to_markdown(mind_map, links)),
    )
    columns = st.columns(len(formats) + 2)
    for column, (name, suffix, mime, render) in zip(columns, formats, strict=False):
        column.button(
            f"Download {name}",
            key=f"mind_map_{suffix}",
            on_click=download,
            args=(f"knownote-mind-map-{notebook_id}.{suffix}", mime, render),
        )


def download(name: str, mime: str, render: Callable[[], str]) -> None:
    try:
        prepare(name, mime, render().encode(), what="This mind map")
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))


def branches(mind_map: MindMap, notebook_id: int, depth: int, kind: str) -> None:
    """Each top-level branch folds; each node down to `depth` opens its range."""
    for top in mind_map.children(None):
        with st.expander(escape_markdown(top.label), expanded=False):
            node_row(top, 1, notebook_id, kind)
            for level, node in subtree(mind_map, top, depth):
                node_row(node, level, notebook_id, kind)


def subtree(mind_map: MindMap, top: Node, depth: int) -> list[tuple[int, Node]]:
    found: list[tuple[int, Node]] = []

    def visit(parent: Node, level: int) -> None:
        if level > depth:
            return
        for child in mind_map.children(parent.id):
            found.append((level, child))
            visit(child, level + 1)

    visit(top, 2)
    return found


def node_row(node: Node, level: int, notebook_id: int, kind: str) -> None:
    live = [c for c in node.cites if not c.stale]
    _, body = st.columns([max(level - 1, 0) + 0.01, max(24 - level, 4)])
    with body:
        st.button(
            escape_markdown(node.label),
            key=f"mind_map_node_{'h' if kind == HEADINGS else 'i'}_{node.id}",
            on_click=open_cite,
            args=(notebook_id, live[0]) if live else (notebook_id, None),
            disabled=not live,
            type="tertiary",
        )
        st.caption(escape_markdown("; ".join(where(c) for c in node.cites)))


def open_cite(notebook_id: int, cite: Cite | None) -> None:
    """Open the range as a link would (knownote.ui.opened.follow_link reads it next run)."""
    if cite is None:
        return
    st.query_params.from_dict(
        {"notebook": notebook_id, "source": cite.document_id, "start": cite.start, "end": cite.end}
    )
