"""HTML and EPUB headings: visible h1-h6, found in the cleaned text."""

from __future__ import annotations

from knownote.read.extract import extract
from knownote.read.sections import Heading
from tests.conftest import corpus_file


def test_html_headings_with_their_levels():
    path = corpus_file("docs/web_text/html_wikipedia_tardigrades.html")
    extracted = extract(path.read_bytes(), path.name)
    assert extracted.headings[:3] == (
        Heading(63, 73, 1),
        Heading(3372, 3378, 2),
        Heading(3791, 3802, 2),
    )
    assert (
        extracted.text[3372:3384] == "Naming[edit]"
    )  # the link stays in the text, not the heading
    assert max(h.level for h in extracted.headings) == 3


def test_hidden_and_nested_headings_and_their_white_space():
    html = (
        b"<html><body><h1>  Big\n  <em>title</em> </h1><p>Text.</p>"
        b"<h2 hidden>Gone</h2><div style='display:none'><h2>Also gone</h2></div>"
        b"<section><h3>Deep<br>two lines</h3><p>More.</p></section></body></html>"
    )
    extracted = extract(html, "page.html")
    assert extracted.text == "Big title\n\nText.\n\nDeep\ntwo lines\n\nMore."
    assert extracted.headings == (Heading(0, 9, 1), Heading(18, 32, 3))


def test_epub_chapter_headings_are_found_in_their_chapters():
    path = corpus_file("docs/office/epub_winter_sports.epub")
    extracted = extract(path.read_bytes(), path.name)
    text = extracted.text
    assert (text[1247:1275], Heading(1247, 1275, 1) in extracted.headings) == (
        "WINTER SPORTS\nIN SWITZERLAND",
        True,
    )
    assert Heading(4229, 4253, 2) in extracted.headings  # "CHAPTER I\nTHE SUN-SEEKER"
    for heading in extracted.headings:
        page = next(p for p in extracted.pages if p.start <= heading.start < p.end)
        assert heading.end <= page.end
