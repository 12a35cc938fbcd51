"""A map written out as SVG, OPML, Markdown and DOT: well-formed whatever its labels hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from knownote.answer.ranges import SpanLinks
from knownote.study.map_export import dot_string, shown, to_dot, to_markdown, to_opml, to_svg
from knownote.study.maps import Cite, Link, MindMap, Node

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = [
    'Tom & Jerry <script>alert("x")</script>',
    "a ]]> b",
    "quotes ' and \"",
    "control \x00\x01\x0b\x1f chars",
    "back\\slash \\n \\l",
    "[link](javascript:alert(1)) *bold* _under_ # head",
    "line\nbreak\r\ttab",
    "ünïcödé 重力 \u202e",
]
LINKS = SpanLinks("http://localhost:8501", 7)


def hostile_map() -> MindMap:
    nodes = [Node(0, None, "Top & <root>", (Cite(1, 0, 10, "a<b>.pdf", 1, 2),), "source")]
    for i, label in enumerate(HOSTILE, start=1):
        nodes.append(Node(i, i - 1 if i % 2 else 0, label, (Cite(1, i, i + 5, 'x"y.pdf'),)))
    stale = Node(len(nodes), 0, "gone", (Cite(2, 0, 5, stale=True),))
    links = (Link(1, 2, 'relates & "is"', (Cite(1, 0, 3),)),)
    return MindMap('Notebook <"&">', (*nodes, stale), links, "m<1>")


def visible_text(label: str) -> str:
    """What XML can hold of a label: its characters outside XML 1.0 dropped, on one line."""
    return " ".join("".join(ch if ch >= " " or ch in "\t\n\r" else " " for ch in label).split())


def test_the_svg_is_well_formed_with_every_label_and_link():
    mind_map = hostile_map()
    root = ET.fromstring(to_svg(mind_map, LINKS).encode())
    assert root.tag == f"{SVG}svg"
    groups = root.findall(f".//{SVG}g[@data-node]")
    assert len(groups) == len(mind_map.nodes)
    texts = [g.find(f"{SVG}text").text for g in groups]
    assert texts == [visible_text(shown(n.label)) for n in mind_map.nodes]
    hrefs = [a.get("href") for a in root.findall(f".//{SVG}a")]
    assert hrefs[0] == LINKS.link(1, 0, 10)
    assert len(hrefs) == len(mind_map.nodes) - 1  # the stale node opens nothing
    assert "<script>" not in to_svg(mind_map, LINKS).replace("&lt;script&gt;", "")


def test_the_svg_keeps_only_the_levels_asked_for():
    root = ET.fromstring(to_svg(hostile_map(), None, max_depth=1).encode())
    assert len(root.findall(f".//{SVG}g[@data-node]")) == 1
    assert root.findall(f".//{SVG}a") == []


def test_the_opml_reads_back_as_the_same_tree():
    mind_map = hostile_map()
    root = ET.fromstring(to_opml(mind_map, LINKS).encode())
    assert root.get("version") == "2.0"
    assert root.find("head/title").text == 'Notebook <"&">'
    body = root.find("body")

    def tree(element) -> list:
        return [(o.get("text"), tree(o)) for o in element.findall("outline")]

    def expected(parent) -> list:
        return [(visible_text(n.label), expected(n.id)) for n in mind_map.children(parent)]

    assert tree(body)[:-1] == expected(None)
    top = body.find("outline")
    assert (top.get("document"), top.get("start"), top.get("end")) == ("1", "0", "10")
    assert top.get("url") == LINKS.link(1, 0, 10)
    links = body.findall("outline")[-1]
    assert links.get("text") == "Links"
    assert links.find("outline").get("text").startswith(visible_text(HOSTILE[0]))


def test_the_markdown_escapes_labels_and_links_each_node():
    text = to_markdown(hostile_map(), LINKS)
    assert text.startswith("# Notebook")
    assert "[link](javascript" not in text
    assert "<script>" not in text
    assert f"]({LINKS.link(1, 0, 10)})" in text
    lines = [line for line in text.splitlines() if line.lstrip().startswith("- ")]
    assert len(lines) == len(hostile_map().nodes) + 1  # and one link
    assert "m\\<1\\>" in text or "m<1>" not in text


@pytest.mark.parametrize("label", HOSTILE)
def test_a_dot_string_is_one_quoted_token(label):
    quoted = dot_string(label)
    inner = quoted[1:-1]
    assert quoted.startswith('"') and quoted.endswith('"') and "\n" not in quoted
    # Every quote inside is escaped, every backslash doubled.
    assert inner.replace("\\\\", "").replace('\\"', "").count('"') == 0
    assert inner.replace("\\\\", "").count("\\") == inner.replace("\\\\", "").count('\\"')


def test_the_dot_has_a_node_per_shown_node_and_the_links():
    dot = to_dot(hostile_map(), max_depth=None)
    assert dot.count(" [label=") == len(hostile_map().nodes) + 1  # and the title
    assert "style=dashed" in dot
    assert to_dot(hostile_map(), max_depth=1).count(" [label=") == 2
