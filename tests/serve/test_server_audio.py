"""`knownote mcp`'s audio overview tool (behind --allow-writes) through the official MCP client:
a read-aloud brief of a chosen source, its lines' times and citations resolving to the stored
text, its audio written where asked; and `read` giving a recording's range its time (a Japanese
recording's transcript)."""

from __future__ import annotations

from pathlib import Path

import anyio

from knownote.store.db import Store
from knownote.voice.encode import duration
from tests.mcp_library import NOTEBOOK, Library
from tests.serve.test_server import stdio
from tests.test_cli_audio import add_recording


def test_an_audio_overview_is_made_kept_and_written_and_a_recordings_range_has_its_time(
    library: Library, tmp_path: Path
):
    db = library.copy(tmp_path)
    store = Store.open(db)
    try:
        notebook = store.notebook(library.notebook_id)
        recording = add_recording(store, notebook.id, notebook.embedding_dim)
    finally:
        store.close()
    out = tmp_path / "overview.ogg"

    async def session():
        async with stdio(db, "--allow-writes") as client:
            made = await client.call_tool(
                "make_audio_overview",
                {"notebook": NOTEBOOK, "sources": [library.page_id], "length": "short",
                 "out": str(out)},
            )  # fmt: skip
            wrong = await client.call_tool(
                "make_audio_overview", {"notebook": NOTEBOOK, "out": str(tmp_path / "a.flac")}
            )
            read = await client.call_tool(
                "read", {"notebook": NOTEBOOK, "source": recording, "start": 0, "end": 5}
            )
            page = await client.call_tool(
                "read", {"notebook": NOTEBOOK, "source": library.page_id, "start": 0, "end": 9}
            )
            return made, wrong, read, page

    made, wrong, read, page = anyio.run(session)
    assert not made.is_error, made.content
    overview = made.structured_content
    assert overview["format"] == "read-aloud" and overview["audio"] == str(out)
    assert any("read-aloud brief" in note for note in overview["notes"])
    cited = [c for line in overview["lines"] for c in line["cites"]]
    assert cited and {c["document_id"] for c in cited} == {library.page_id}
    for c in cited:
        assert library.texts[c["document_id"]][c["start"] : c["end"]] == c["quote"]
        assert (
            c["uri"]
            == f"knownote://{library.notebook_id}/{library.page_id}#{c['start']}-{c['end']}"
        )
    assert all(line["start_s"] < line["end_s"] for line in overview["lines"])
    assert abs(duration(out.read_bytes()) - overview["seconds"]) < 0.2
    assert wrong.is_error and "does not end in .ogg, .opus, .mp3 or .wav" in wrong.content[0].text
    assert read.structured_content["text"] == "重力の丘は"
    assert read.structured_content["seconds"] == [1.0, 1.8]
    assert page.structured_content["seconds"] is None
