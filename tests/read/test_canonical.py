"""Headings located in the cleaned text: `canonical.locate_headings`."""

from __future__ import annotations

from knownote.read.canonical import locate_headings
from knownote.read.sections import Heading


def test_a_heading_is_found_where_a_line_begins_not_inside_a_paragraph_before_it():
    text = "Intro\n\nThe Results here.\n\nResults\nbody"
    assert locate_headings(text, [("Intro", 1), ("Results", 2)]) == [
        Heading(0, 5, 1),
        Heading(26, 33, 2),
    ]


def test_words_are_cleaned_like_the_text_and_missing_ones_left_out():
    text = "Title\n\nbody\n\nTwo\n\nlines"
    found = [("Title  ", 1), ("not there", 2), ("Two   \n\n\nlines", 2)]
    assert locate_headings(text, found) == [Heading(0, 5, 1), Heading(13, 23, 2)]


def test_only_inside_the_given_range():
    text = "Page one\n\nPage two"
    assert locate_headings(text, [("Page", 1)], 10, len(text)) == [Heading(10, 14, 1)]
