"""The MCP tools as plain functions over an open store (what the server wraps)."""

from __future__ import annotations

import pytest

from knownote.errors import KnowNoteError, ModelNotInstalled
from knownote.serve import tools
from knownote.settings import Settings
from knownote.store.db import Store
from tests.mcp_library import NOTEBOOK, Library
from tests.ollama_standin import free_port


@pytest.fixture
def opened(library: Library, tmp_path) -> Store:
    store = Store.open(library.copy(tmp_path))
    yield store
    store.close()


def test_sources_list_kind_pages_languages_and_passages(opened, library):
    listed = tools.list_sources(opened, NOTEBOOK)
    pdf, page = listed["sources"]
    assert (pdf["id"], pdf["kind"], pdf["pages"]) == (library.pdf_id, "pdf", 8)
    assert pdf["languages"][0] == {"code": "en", "name": "English"}
    assert pdf["passages"] > 10 and pdf["characters"] == len(library.texts[library.pdf_id])
    assert (page["id"], page["kind"], page["pages"]) == (library.page_id, "md", 0)


def test_a_notebook_is_found_by_its_number_too(opened, library):
    assert tools.list_sources(opened, str(library.notebook_id))["notebook"]["name"] == NOTEBOOK


def test_search_refuses_a_source_of_no_such_id_and_k_out_of_bounds(opened, library):
    settings = Settings()
    with pytest.raises(KnowNoteError, match="has no source 999"):
        tools.search(opened, settings, NOTEBOOK, "relation", sources=[999])
    with pytest.raises(KnowNoteError, match="between 1 and 50"):
        tools.search(opened, settings, NOTEBOOK, "relation", k=0)


def test_search_within_one_source_finds_only_it(opened, library):
    found = tools.search(opened, Settings(), NOTEBOOK, "relation", k=3, sources=[library.page_id])
    assert {hit["document_id"] for hit in found["hits"]} == {library.page_id}


def test_asking_for_a_model_no_server_lists_says_which_are_listed(opened):
    settings = Settings().with_(ollama_host=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ModelNotInstalled, match="No answer server lists the model “nope”"):
        tools.ask(opened, settings, NOTEBOOK, "What is IE?", model="nope")
