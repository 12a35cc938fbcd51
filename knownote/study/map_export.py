"""A mind map written out: SVG (a tree laid out left to right), OPML, a Markdown outline, and DOT
for the page's graphviz chart. Labels are document text, so every output escapes them for its
own syntax (XML, Markdown, DOT), and characters XML cannot hold at all are left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from knownote.answer.cite import chars_label, page_label
from knownote.answer.ranges import SpanLinks
from knownote.show.excerpt import escape_markdown
from knownote.study.maps import Cite, MindMap, Node

SHOWN_CHARS = 40  # of a label, in drawings; the whole label is the node's tooltip
# XML 1.0 cannot hold these at all, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# The SVG's measures, in pixels.
CHAR_WIDTH = 7.0
ROW = 30
BOX_HEIGHT = 22
PAD = 8
GAP = 40
MARGIN = 10


def where(cite: Cite) -> str:
    """'book.pdf · p. 3 · chars 1,200–4,500' (and 'stale' for a range that no longer holds)."""
    parts = [
        cite.title,
        page_label(cite.page_start, cite.page_end),
        chars_label(cite.start, cite.end),
    ]
    return " · ".join(p for p in parts if p) + (" · stale" if cite.stale else "")


def shown(label: str, limit: int = SHOWN_CHARS) -> str:
    """A label on one line, cut to `limit` characters."""
    label = one_line(label)
    return label if len(label) <= limit else label[: limit - 1].rstrip() + "…"


def one_line(text: str) -> str:
    """The text on one line, white space collapsed and characters XML cannot hold left out."""
    return " ".join(_NOT_XML.sub(" ", text).split())


def xml_text(text: str) -> str:
    return escape(_NOT_XML.sub("", text))


def xml_attr(text: str) -> str:
    return quoteattr(one_line(text))


def _link(links: SpanLinks | None, node: Node) -> str | None:
    live = [c for c in node.cites if not c.stale]
    if links is None or not live:
        return None
    return links.link(live[0].document_id, live[0].start, live[0].end)


# --- DOT (the page's graphviz chart) ----------------------------------------------------------


def dot_string(text: str) -> str:
    """A DOT quoted string: backslashes and quotes escaped, one line, no control characters."""
    text = one_line(text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(mind_map: MindMap, max_depth: int | None = None) -> str:
    lines = [
        "digraph mindmap {",
        '  rankdir=LR; bgcolor="transparent";',
        '  node [shape=box, style="rounded,filled", fillcolor="#f4f4f8", color="#8888aa", '
        'fontname="sans-serif", fontsize=11];',
        '  edge [color="#9999aa", arrowsize=0.6];',
        f'  root [label={dot_string(shown(mind_map.title))}, fillcolor="#dde4ff"];',
    ]
    visible: set[int] = set()
    for _, node in mind_map.walk(max_depth):
        visible.add(node.id)
        tip = "; ".join(where(c) for c in node.cites)
        lines.append(
            f"  n{node.id} [label={dot_string(shown(node.label))}, "
            f"tooltip={dot_string(node.label + (' — ' + tip if tip else ''))}];"
        )
        parent = "root" if node.parent is None else f"n{node.parent}"
        lines.append(f"  {parent} -> n{node.id};")
    for link in mind_map.links:
        if link.source in visible and link.target in visible:
            lines.append(
                f"  n{link.source} -> n{link.target} [style=dashed, constraint=false, "
                f'color="#cc7733", label={dot_string(shown(link.label, 24))}];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- SVG ----------------------------------------------------------------------------------------


def to_svg(mind_map: MindMap, links: SpanLinks | None = None, max_depth: int | None = None) -> str:
    """The map as a standalone SVG: the title at the left, each level a column to its right;
    each node a link to its range in the app when `links` is given."""
    placed = list(mind_map.walk(max_depth))
    below: dict[int | None, list[int]] = {}
    for _, node in placed:
        below.setdefault(node.parent, []).append(node.id)
    depth_of = {node.id: depth for depth, node in placed}
    by_id = {node.id: node for _, node in placed}
    columns = max([0, *depth_of.values()]) + 1
    widths = [len(shown(mind_map.title))] + [0] * (columns - 1)
    for node_id, depth in depth_of.items():
        widths[depth] = max(widths[depth], len(shown(by_id[node_id].label)))
    width_px = [w * CHAR_WIDTH + 2 * PAD for w in widths]
    x_of = [MARGIN + sum(width_px[:i]) + GAP * i for i in range(columns)]

    rows: dict[int | None, float] = {}  # node id (None: the title) -> y of its centre
    next_row = 0

    def place(node_id: int | None) -> float:
        nonlocal next_row
        children = below.get(node_id, [])
        if not children:
            y = MARGIN + next_row * ROW + BOX_HEIGHT / 2
            next_row += 1
        else:
            ys = [place(child) for child in children]
            y = (ys[0] + ys[-1]) / 2
        rows[node_id] = y
        return y

    place(None)
    height = MARGIN * 2 + max(next_row, 1) * ROW
    total_width = x_of[-1] + width_px[-1] + MARGIN

    def box(node_id: int | None) -> tuple[float, float, float]:
        depth = 0 if node_id is None else depth_of[node_id]
        return x_of[depth], rows[node_id], width_px[depth]

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {total_width:.0f} {height:.0f}" '
        'font-family="sans-serif" font-size="12">',
        f"<title>{xml_text(mind_map.title)}</title>",
    ]
    for node_id, (x, y, _) in ((n.id, box(n.id)) for _, n in placed):
        px, py, pw = box(by_id[node_id].parent)
        out.append(
            f'<path d="M{px + pw:.1f},{py:.1f} C{(px + pw + x) / 2:.1f},{py:.1f} '
            f'{(px + pw + x) / 2:.1f},{y:.1f} {x:.1f},{y:.1f}" fill="none" stroke="#9999aa"/>'
        )
    for link in mind_map.links:
        if link.source in by_id and link.target in by_id:
            (sx, sy, sw), (tx, ty, _) = box(link.source), box(link.target)
            out.append(
                f'<line x1="{sx + sw / 2:.1f}" y1="{sy:.1f}" x2="{tx + 4:.1f}" y2="{ty:.1f}" '
                'stroke="#cc7733" stroke-dasharray="4 3">'
                f"<title>{xml_text(link.label)}</title></line>"
            )
    x, y, w = box(None)
    out.append(_svg_box(x, y, w, mind_map.title, mind_map.title, None, "#dde4ff"))
    for _, node in placed:
        x, y, w = box(node.id)
        tip = node.label + "".join(f"\n{where(c)}" for c in node.cites)
        out.append(_svg_box(x, y, w, node.label, tip, _link(links, node), "#f4f4f8", node.id))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_box(
    x: float,
    y: float,
    w: float,
    label: str,
    tip: str,
    href: str | None,
    fill: str,
    node_id: int | None = None,
) -> str:
    data = "" if node_id is None else f' data-node="{node_id}"'
    group = (
        f"<g{data}><title>{xml_text(tip)}</title>"
        f'<rect x="{x:.1f}" y="{y - BOX_HEIGHT / 2:.1f}" width="{w:.1f}" height="{BOX_HEIGHT}" '
        f'rx="6" fill="{fill}" stroke="#8888aa"/>'
        f'<text x="{x + PAD:.1f}" y="{y + 4:.1f}">{xml_text(shown(label))}</text></g>'
    )
    return group if href is None else f"<a href={xml_attr(href)}>{group}</a>"


# --- OPML and Markdown ----------------------------------------------------------------------------


def to_opml(mind_map: MindMap, links: SpanLinks | None = None) -> str:
    """OPML 2.0: one outline element per node, nested; each with the ranges it cites in `_note`
    (and `document`, `start`, `end` of its first), and a link to it in the app as `url`."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<opml version="2.0">',
        f"<head><title>{xml_text(mind_map.title)}</title></head>",
        "<body>",
    ]
    depth = 0
    for level, node in mind_map.walk():
        while depth >= level:
            out.append("  " * depth + "</outline>")
            depth -= 1
        attrs = [f"text={xml_attr(node.label)}"]
        if node.cites:
            first = node.cites[0]
            attrs.append(f"_note={xml_attr('; '.join(where(c) for c in node.cites))}")
            attrs.append(f'document="{first.document_id}" start="{first.start}" end="{first.end}"')
        href = _link(links, node)
        if href:
            attrs.append(f'type="link" url={xml_attr(href)}')
        out.append("  " * level + f"<outline {' '.join(attrs)}>")
        depth = level
    while depth >= 1:
        out.append("  " * depth + "</outline>")
        depth -= 1
    if mind_map.links:
        names = {n.id: n.label for n in mind_map.nodes}
        out.append('  <outline text="Links">')
        for link in mind_map.links:
            text = f"{names[link.source]} → {names[link.target]}: {link.label}".rstrip(": ")
            note = "; ".join(where(c) for c in link.cites)
            out.append(f"    <outline text={xml_attr(text)} _note={xml_attr(note)}/>")
        out.append("  </outline>")
    out += ["</body>", "</opml>"]
    return "\n".join(out) + "\n"


def to_markdown(mind_map: MindMap, links: SpanLinks | None = None) -> str:
    """A nested Markdown list, each node linked to its range in the app (when `links`), with
    where it points."""
    out = [f"# {escape_markdown(mind_map.title)}", ""]
    if mind_map.model:
        out += [
            f"Written by {escape_markdown(mind_map.model)} from the passages each line cites: "
            "the material it had, not proof.",
            "",
        ]
    for level, node in mind_map.walk():
        label = escape_markdown(node.label)
        href = _link(links, node)
        item = f"[{label}]({href})" if href else label
        cited = _cited(node.cites)
        out.append("  " * (level - 1) + f"- {item}" + (f" ({cited})" if cited else ""))
    if mind_map.links:
        names = {n.id: n.label for n in mind_map.nodes}
        out += ["", "## Links", ""]
        for link in mind_map.links:
            text = escape_markdown(f"{names[link.source]} → {names[link.target]}")
            how = f": {escape_markdown(link.label)}" if link.label else ""
            out.append(f"- {text}{how} ({_cited(link.cites)})")
    return "\n".join(out) + "\n"


def _cited(cites: Sequence[Cite]) -> str:
    return "; ".join(escape_markdown(where(c)) for c in cites)
