"""`knownote mcp` over stdio, driven by the official MCP client as a desktop client drives it.

Each test starts the server as a child process on its own copy of a data folder holding a real
PDF and a Markdown page, and checks every range it returns against the stored text.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from knownote.answer.chats import load_chat
from knownote.store.db import Store
from tests.mcp_library import (
    APP_URL,
    NOTEBOOK,
    ROOT,
    Library,
    assert_resolves,
    mcp_command,
    server_env,
)

READ_TOOLS = {"list_notebooks", "list_sources", "search", "ask", "read"}


def stdio(db: Path, *options: str, **env: str) -> Client:
    command, *args = mcp_command(db, *options)
    return Client(
        StdioServerParameters(command=command, args=args, env=server_env(**env), cwd=str(ROOT)),
        read_timeout_seconds=120,
    )


def test_tools_have_descriptions_and_schemas_and_writes_need_the_flag(library, tmp_path):
    db = library.copy(tmp_path)

    async def listed(*options: str) -> dict:
        async with stdio(db, *options) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = anyio.run(listed)
    assert set(tools) == READ_TOOLS
    for tool in tools.values():
        assert len(tool.description) > 40 and tool.input_schema["type"] == "object"
    search = tools["search"].input_schema
    assert search["required"] == ["notebook", "question"]
    assert {"k", "mode", "sources"} <= set(search["properties"])
    assert all(p.get("description") for p in search["properties"].values())
    writes = {"add_source", "save_note", "make_audio_overview"}
    assert set(anyio.run(listed, "--allow-writes")) == READ_TOOLS | writes


def test_search_and_read_return_ranges_that_resolve_with_links_to_them(library: Library, tmp_path):
    db = library.copy(tmp_path)

    async def session():
        async with stdio(db) as client:
            found = await client.call_tool(
                "search", {"notebook": NOTEBOOK, "question": "unrestricted relation discovery"}
            )
            hit = found.structured_content["hits"][0]
            read = await client.call_tool(
                "read",
                {
                    "notebook": NOTEBOOK,
                    "source": hit["document_id"],
                    "start": max(0, hit["start"] - 200),
                    "end": hit["end"] + 200,
                },
            )
            resource = await client.read_resource(hit["uri"])
            return found.structured_content, read.structured_content, resource

    found, read, resource = anyio.run(session)
    assert len(found["hits"]) == 8
    for hit in found["hits"]:
        assert_resolves(hit, library.texts)
        link = urlsplit(hit["link"])
        assert f"{link.scheme}://{link.netloc}" == APP_URL
        assert parse_qs(link.query) == {
            "notebook": [str(library.notebook_id)],
            "source": [str(hit["document_id"])],
            "start": [str(hit["start"])],
            "end": [str(hit["end"])],
        }
    top = found["hits"][0]
    assert top["document_id"] == library.pdf_id and top["page_start"] >= 1
    assert_resolves(read, library.texts)
    assert top["text"] in read["text"] and read["length"] == len(library.texts[library.pdf_id])
    assert resource.contents[0].text == top["text"]


def test_quoted_answer_citations_and_support_spans_resolve_as_stored(library, tmp_path):
    db = library.copy(tmp_path)

    async def session():
        async with stdio(db) as client:
            result = await client.call_tool(
                "ask",
                {"notebook": NOTEBOOK, "question": "What is preemptive IE?", "quoted": True},
            )
            return result.structured_content

    answer = anyio.run(session)
    assert answer["extractive"] and answer["citations"] and answer["supports"]
    # Quoted because it was asked so, not because no model answers.
    assert answer["notice"].startswith("Quoted, as asked") and "Ollama" not in answer["notice"]
    for record in answer["citations"] + answer["passages"] + answer["supports"]:
        assert_resolves(record, library.texts)
        assert record["link"].startswith(APP_URL) and record["uri"].startswith("knownote://")
    store = Store.open(db)
    try:
        [saved] = load_chat(store, answer["chat_id"])
    finally:
        store.close()
    stored = [(p.document_id, p.start, p.end) for p in saved.citations]
    assert stored == [(c["document_id"], c["start"], c["end"]) for c in answer["citations"]]
    assert [(s.start, s.end) for s in saved.supports] == [
        (s["start"], s["end"]) for s in answer["supports"]
    ]


def test_bad_requests_get_errors_in_words_and_the_server_keeps_serving(library, tmp_path):
    db = library.copy(tmp_path)
    pdf = library.pdf_id
    length = len(library.texts[pdf])

    async def session():
        async with stdio(db) as client:
            calls = [
                ("search", {"notebook": "Nope", "question": "x"}),
                ("read", {"notebook": NOTEBOOK, "source": pdf, "start": 0, "end": length + 1}),
                ("read", {"notebook": NOTEBOOK, "source": pdf, "start": 0, "end": 25_000}),
                ("read", {"notebook": NOTEBOOK, "source": 999, "start": 0, "end": 5}),
                ("ask", {"notebook": NOTEBOOK, "question": "   ", "quoted": True}),
                ("search", {"notebook": NOTEBOOK, "question": ""}),
            ]
            errors = []
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                assert result.is_error, tool
                errors.append(result.content[0].text)
            try:
                await client.read_resource(f"knownote://{NOTEBOOK}/{pdf}#0-{length + 5}")
            except MCPError as e:
                errors.append(e.error.message)
            still = await client.call_tool("list_notebooks", {})
            return errors, still.structured_content

    errors, still = anyio.run(session)
    assert "There is no notebook called “Nope”" in errors[0]
    assert f"runs past the end of the text, which has {length:,} characters" in errors[1]
    assert "one read returns at most 20,000" in errors[2]
    assert "has no source 999" in errors[3]
    assert "The question is empty" in errors[4]
    assert "The search query is empty" in errors[5]
    assert "runs past the end of the text" in errors[6]
    assert not any("Traceback" in e for e in errors)
    assert [n["name"] for n in still["notebooks"]] == [NOTEBOOK]


def test_writes_add_a_file_and_save_a_note_but_refuse_an_address(library, tmp_path):
    db = library.copy(tmp_path)
    page = tmp_path / "field-notes.md"
    page.write_text("# Field notes\n\nThe heron nests by the eastern reed bed.\n")

    async def session():
        async with stdio(db, "--allow-writes") as client:
            added = await client.call_tool("add_source", {"notebook": NOTEBOOK, "path": str(page)})
            address = await client.call_tool(
                "add_source", {"notebook": NOTEBOOK, "path": "https://example.com/page"}
            )
            note = await client.call_tool(
                "save_note", {"notebook": NOTEBOOK, "title": "Herons", "body": "Reed bed."}
            )
            found = await client.call_tool(
                "search", {"notebook": NOTEBOOK, "question": "where does the heron nest", "k": 1}
            )
            return added, address, note, found

    added, address, note, found = anyio.run(session)
    assert added.structured_content["status"] == "imported"
    assert (
        address.is_error and "web page by its address is not supported" in address.content[0].text
    )
    assert note.structured_content["note_id"] >= 1
    [hit] = found.structured_content["hits"]
    assert hit["document_id"] == added.structured_content["document_id"]
    assert "heron nests" in hit["text"]


@pytest.mark.engine
def test_a_written_answer_from_the_real_engine_cites_ranges_that_resolve(
    library, tmp_path, llama_server
):
    from tests.llama_server import CHAT_MODEL, CONTEXT

    db = library.copy(tmp_path)
    engine = {
        "KNOWNOTE_OPENAI_BASE_URL": llama_server.url,
        "KNOWNOTE_OPENAI_CONTEXT": str(CONTEXT),
        "KNOWNOTE_MAX_ANSWER_TOKENS": "48",
        "KNOWNOTE_TRANSLATE_QUESTIONS": "0",
    }

    async def session():
        async with stdio(db, **engine) as client:
            result = await client.call_tool(
                "ask",
                {"notebook": NOTEBOOK, "question": "What is preemptive IE?", "k": 3},
            )
            return result

    result = anyio.run(session)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["model"] == f"openai:{CHAT_MODEL}" and not answer["extractive"]
    assert answer["answer"].strip()
    assert len(answer["passages"]) == 3
    for record in answer["citations"] + answer["passages"] + answer["supports"]:
        assert_resolves(record, library.texts)
