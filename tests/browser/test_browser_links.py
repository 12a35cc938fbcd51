"""In a real Chromium: follow the link of a search hit that `knownote mcp` returned, and find its
range highlighted in the source's text and on the PDF page.

The hit comes from the MCP server over stdio (the official client); the server is closed before
the app starts, since one process at a time holds the database.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio
import pytest

from tests.browser.harness import chromium, settle, shot, streamlit_server
from tests.browser.test_browser_page import yellow_pixels
from tests.mcp_library import NOTEBOOK, Library
from tests.serve.test_server import stdio

pytestmark = pytest.mark.browser


def search_hit(db, question: str) -> dict:
    async def session():
        async with stdio(db) as client:
            found = await client.call_tool("search", {"notebook": NOTEBOOK, "question": question})
            return found.structured_content["hits"][0]

    return anyio.run(session)


def test_a_search_hit_link_opens_its_range_highlighted_in_text_and_on_the_page(
    library: Library, tmp_path
):
    from playwright.sync_api import expect

    db = library.copy(tmp_path)
    hit = search_hit(db, "unrestricted relation discovery")
    assert hit["document_id"] == library.pdf_id
    query = urlsplit(hit["link"]).query
    with chromium() as browser, streamlit_server(tmp_path) as server:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(f"{server.url}/?{query}")
        opened = page.locator(".st-key-opened_range")
        card = opened.locator(".kn-card")
        expect(card).to_be_visible(timeout=120_000)
        assert card.get_attribute("data-start") == str(hit["start"])
        assert card.get_attribute("data-end") == str(hit["end"])
        # Exactly the range is marked: the mark's text is text[start:end] (wraps reflowed).
        marked = card.locator(".kn-excerpt > mark").text_content()
        assert " ".join(marked.split()) == " ".join(hit["text"].split())
        expect(page.get_by_role("heading", name=NOTEBOOK)).to_be_visible()
        picture = opened.locator('[data-testid="stImage"] img').first
        expect(picture).to_be_visible(timeout=60_000)
        settle(page)
        expect(opened.locator('[data-testid="stImage"]').first).to_contain_text(
            f"p. {hit['page_start']} of the PDF"
        )
        picture.scroll_into_view_if_needed()
        shot(page, "links-01-opened-range")
        assert yellow_pixels(picture.screenshot()) > 500, "the page shows no highlight"
