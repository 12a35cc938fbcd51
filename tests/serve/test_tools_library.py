"""The MCP tools asked of several notebooks: `notebook: "all"` or names separated by commas."""

from __future__ import annotations

import pytest

from knownote.errors import KnowNoteError
from knownote.serve import tools
from knownote.store.library import set_in_library
from tests.search.test_library import FSDP, two_notebooks


@pytest.fixture
def two(store):
    return two_notebooks(store)


def test_search_all_names_each_hits_notebook_and_links_to_it(store, settings, two):
    found = tools.search(store, settings, "all", FSDP, k=4)
    assert [n["name"] for n in found["notebooks"]] == ["Hills", "训练"]
    top = found["hits"][0]
    assert top["notebook"] == {"id": two.chinese.id, "name": "训练"}
    assert f"notebook={two.chinese.id}&source={two.training}" in top["link"]
    assert top["uri"].startswith(f"knownote://{two.chinese.id}/{two.training}#")


def test_ask_all_quoted_names_each_citations_notebook(store, settings, two):
    answer = tools.ask(store, settings, "all", FSDP, quoted=True, k=4)
    cited = answer["citations"][0]
    assert cited["notebook"] == {"id": two.chinese.id, "name": "训练"}
    assert f"notebook={two.chinese.id}&" in cited["link"]


def test_names_separated_by_commas_ask_those_and_left_out_ones_are_not_asked_by_all(
    store, settings, two
):
    found = tools.search(store, settings, "Hills, 训练", "gravity hill", k=2)
    assert len(found["notebooks"]) == 2
    set_in_library(store, two.chinese.id, False)
    assert [n["name"] for n in tools.search(store, settings, "all", FSDP)["notebooks"]] == ["Hills"]
    listed = {n["name"]: n["in_library"] for n in tools.list_notebooks(store)["notebooks"]}
    assert listed == {"Hills": True, "训练": False}


def test_sources_cannot_narrow_several_notebooks(store, settings, two):
    with pytest.raises(KnowNoteError, match="leave it out when asking several notebooks"):
        tools.search(store, settings, "all", FSDP, sources=[two.training])
