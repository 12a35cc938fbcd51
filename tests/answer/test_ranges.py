from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from knownote.answer.ranges import (
    READ_LIMIT,
    LinkedRange,
    RangeError,
    SpanLinks,
    check_range,
    parse_link,
    read_range,
)
from knownote.index.context import NewPassage
from knownote.read.extracted import Page

LINKS = SpanLinks("http://192.168.1.20:8501/", 3)


def test_a_link_names_the_notebook_source_and_range_and_parses_back():
    link = LINKS.link(12, 100, 220)
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "192.168.1.20:8501", "/")
    params = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert params == {"notebook": "3", "source": "12", "start": "100", "end": "220"}
    assert parse_link(params) == LinkedRange(3, 12, 100, 220)


def test_the_uri_of_a_range():
    assert LINKS.uri(12, 100, 220) == "knownote://3/12#100-220"


def test_an_address_without_link_parameters_opens_nothing():
    assert parse_link({}) is None
    assert parse_link({"other": "1"}) is None


@pytest.mark.parametrize(
    "params",
    [{"notebook": "3", "source": "12", "start": "100"}, {"notebook": "x", "source": "1"}],
)
def test_a_partial_or_garbled_link_is_refused_in_words(params):
    with pytest.raises(RangeError, match="needs notebook, source, start and end"):
        parse_link(params)


def test_a_range_past_the_end_says_how_long_the_text_is():
    with pytest.raises(RangeError, match="runs past the end of the text, which has 1,000"):
        check_range(1000, 900, 1001)


def test_a_range_longer_than_one_read_says_where_to_start():
    with pytest.raises(RangeError, match=f"at most {READ_LIMIT:,}"):
        check_range(10**6, 0, READ_LIMIT + 1)
    check_range(10**6, 0, READ_LIMIT + 1, limit=None)


@pytest.mark.parametrize(("start", "end"), [(-1, 5), (6, 5)])
def test_a_backwards_or_negative_range_is_refused(start, end):
    with pytest.raises(RangeError, match="is not a range"):
        check_range(100, start, end)


def test_read_range_gives_exactly_the_text_and_its_pages(store, notebook):
    text = "first page text\nsecond page text\n"
    document_id = store.add_document(
        notebook_id=notebook.id,
        title="two pages",
        filename="two.pdf",
        kind="pdf",
        sha256="2",
        text=text,
        pages=[Page(1, 0, 16), Page(2, 16, 33)],
        vectors=np.zeros((1, notebook.embedding_dim), dtype=np.float32),
        passages=[NewPassage(0, 33, 1, 2, {"x": 1})],
    )
    found = read_range(store, store.document(document_id), 6, 22)
    assert found.text == text[6:22] and (found.page_start, found.page_end) == (1, 2)
    assert found.length == len(text)
