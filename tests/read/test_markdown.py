"""Markdown headings: ATX ("## x") and setext (underlined) outside code fences."""

from __future__ import annotations

from knownote.read.extract import extract
from knownote.read.markdown import markdown_headings
from knownote.read.sections import Heading
from tests.conftest import corpus_file


def spans(text: str) -> list[tuple[str, int]]:
    return [(text[h.start : h.end], h.level) for h in markdown_headings(text)]


def test_atx_headings_and_their_closing_hashes():
    assert spans("# One\n\n## Two ##\n\ntext #3\n") == [("One", 1), ("Two", 2)]


def test_setext_headings():
    assert spans("Title\n=====\n\nbody\n\nPart\n---\n") == [("Title", 1), ("Part", 2)]


def test_a_rule_under_a_paragraph_or_a_list_is_not_a_setext_heading():
    assert spans("two lines\nof text\n---\n\n- item\n---\n\n> quote\n===\n") == []


def test_nothing_inside_code_fences():
    assert spans("```\n# not\nnot\n===\n```\n# yes\n") == [("yes", 1)]


def test_a_real_markdown_file():
    path = corpus_file("docs/web_text/md_codeblocks.md")
    extracted = extract(path.read_bytes(), path.name)
    assert extracted.headings == (Heading(3, 15, 2), Heading(305, 316, 2))
