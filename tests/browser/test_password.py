"""With KNOWNOTE_PASSWORD set, nothing of a notebook reaches a visitor without the password:
checked in a real browser (the page and every websocket frame it receives) and by plain HTTP
requests to the server's endpoints.

The data folder is filled through `knownote` before the server starts, so the secrets exist from
the first request on.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from knownote.answer.ranges import SpanLinks
from knownote.pipeline.ingest import import_file
from knownote.settings import Settings
from knownote.store.db import Store
from tests.browser.harness import Server, chromium, shot, streamlit_server

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
NOTEBOOK = "Confidential Notebook QX"
DOCUMENT = (
    "# SecretTitleXYZ\n\nThe plan codenamed Bluebird launches on Tuesday from the north pier.\n"
)
SECRETS = (NOTEBOOK, "SecretTitleXYZ", "Bluebird", "secret-plans.md")
TIMEOUT = 120_000


@dataclass
class Visit:
    """A browser page and every websocket frame it received, as text."""

    page: object
    frames: list[str] = field(default_factory=list)

    def seen(self) -> str:
        return self.page.content() + "\n".join(self.frames)


def visit(browser, url: str) -> Visit:
    page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    found = Visit(page)

    def on_socket(ws) -> None:
        def keep(payload: str | bytes) -> None:
            if isinstance(payload, bytes):
                payload = payload.decode("utf-8", errors="replace")
            found.frames.append(payload)

        ws.on("framereceived", keep)

    page.on("websocket", on_socket)
    page.goto(url)
    return found


@dataclass
class Running:
    server: Server
    browser: object
    link: str = ""  # the query of a link to a range of the document: "notebook=…&source=…"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("password")
    store = Store.open(tmp / "home" / "knownote.duckdb")
    notebook = store.create_notebook(NOTEBOOK, embedder.name, embedder.dim)
    settings = Settings().with_(home=tmp / "home")
    result = import_file(
        store, notebook, "secret-plans.md", DOCUMENT.encode(), settings=settings, embedder=embedder
    )
    assert result.status == "imported"
    start = store.document_text(result.document_id).index("Bluebird launches")
    link = SpanLinks("", notebook.id).link(result.document_id, start, start + 17)
    store.close()
    with (
        chromium() as browser,
        streamlit_server(tmp, KNOWNOTE_PASSWORD=PASSWORD) as server,
    ):
        yield Running(server, browser, link.removeprefix("/?"))


def sign_in(page, password: str) -> None:
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Open").click()


def test_without_the_password_no_notebook_reaches_the_browser(running: Running):
    from playwright.sync_api import expect

    stranger = visit(running.browser, running.server.url)
    page = stranger.page
    expect(page.get_by_label("Password", exact=True)).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1000)  # let any late message arrive
    sign_in(page, "wrong guess")
    expect(page.get_by_text("That password is not right.")).to_be_visible(timeout=30_000)
    shot(page, "password-refused")
    seen = stranger.seen()
    for secret in SECRETS:
        assert secret not in seen
    assert len(stranger.frames) > 0  # the websocket did talk: the gate answered it
    assert page.locator('[data-testid="stFileUploader"]').count() == 0
    assert page.locator('[data-testid="stChatInput"]').count() == 0
    assert page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').count() == 0


def test_the_right_password_lets_in_and_others_still_see_nothing(running: Running):
    from playwright.sync_api import expect

    member = visit(running.browser, running.server.url)
    page = member.page
    sign_in(page, PASSWORD)
    expect(page.get_by_role("heading", name=NOTEBOOK)).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()
    expect(page.get_by_text("SecretTitleXYZ")).to_be_visible(timeout=60_000)
    shot(page, "password-accepted")
    # A second visitor at the same time, without the password, still gets nothing.
    stranger = visit(running.browser, running.server.url)
    expect(stranger.page.get_by_label("Password", exact=True)).to_be_visible(timeout=60_000)
    stranger.page.wait_for_timeout(1000)
    for secret in SECRETS:
        assert secret not in stranger.seen()


def request(
    url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None
) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_plain_requests_reach_nothing_of_a_notebook(running: Running):
    url = running.server.url
    statuses = {}
    for path in (
        "/",
        "/_stcore/health",
        "/_stcore/host-config",
        "/app/static/knownote.duckdb",
        "/media/0123456789abcdef0123456789abcdef0123456789abcdef01234567.md",
        "/knownote.duckdb",
        "/../home/knownote.duckdb",
    ):
        status, body = request(url + path)
        statuses[f"GET {path}"] = status
        assert not any(secret.encode() in body for secret in SECRETS), path
    assert statuses["GET /_stcore/health"] == 200
    # Unknown paths get the app's empty HTML shell (or 404), never a file from the data folder.
    shell = request(url + "/")[1]
    for path in ("/app/static/knownote.duckdb", "/knownote.duckdb", "/../home/knownote.duckdb"):
        status, body = request(url + path)
        assert status in (400, 404) or body == shell, path
    assert statuses["GET /media/0123456789abcdef0123456789abcdef0123456789abcdef01234567.md"] == 404

    upload = "/_stcore/upload_file/not-a-session/file-1"
    status, _ = request(url + upload, "PUT", b"--x--", {"Content-Type": "multipart/form-data"})
    statuses[f"PUT {upload} (no XSRF token)"] = status
    assert status == 403
    # A token is free for the asking (it guards against other sites, not strangers)...
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", "/_stcore/health")
    response = conn.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie") or ""
    token = re.search(r"_streamlit_xsrf=([^;]+)", cookie)
    assert token, cookie
    # ...but an upload only lands in a live session, and a session without the password never
    # reaches the file uploader, so nothing is imported.
    status, _ = request(
        url + upload,
        "PUT",
        b"--x--",
        {
            "Content-Type": "multipart/form-data; boundary=x",
            "X-Xsrftoken": token.group(1),
            "Cookie": f"_streamlit_xsrf={token.group(1)}",
        },
    )
    statuses[f"PUT {upload} (XSRF token, no session)"] = status
    assert status == 400
    for line, status in statuses.items():
        print(f"{status}  {line}")


def test_a_download_goes_only_to_the_signed_in_page_and_has_no_url(running: Running):
    """The chat's Markdown and the notebook's archive travel over the signed-in session's own
    websocket and are saved from a `blob:` URL inside that page: the server serves no URL for
    them (no /media/ request at all), and another browser cannot open the blob."""
    from playwright.sync_api import expect

    member = visit(running.browser, running.server.url)
    page = member.page
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    sign_in(page, PASSWORD)
    expect(page.get_by_role("heading", name=NOTEBOOK)).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
    box = page.get_by_placeholder("Ask a question about this notebook's sources")
    box.fill("When does Bluebird launch?")
    box.press("Enter")
    page.locator(".kn-card").first.wait_for(timeout=TIMEOUT)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download Markdown").click()
    chat = download.value
    markdown = Path(chat.path()).read_text(encoding="utf-8")
    assert re.fullmatch(r"knownote-chat-\d+\.md", chat.suggested_filename)
    assert "When does Bluebird launch?" in markdown and "north pier" in markdown
    assert chat.url.startswith(f"blob:{running.server.url}/"), chat.url

    page.get_by_text("Move or back up").click()
    with page.expect_download(timeout=TIMEOUT) as download:
        page.get_by_role("button", name="Download this notebook").click()
    archive = download.value
    assert archive.suggested_filename == f"{NOTEBOOK}.knownote"
    assert archive.url.startswith("blob:"), archive.url
    with zipfile.ZipFile(archive.path()) as zf:
        assert json.loads(zf.read("manifest.json"))["notebook"]["name"] == NOTEBOOK
    media = [u for u in requests if "/media/" in u and "/static/media/" not in u]
    assert media == []  # nothing was ever served by address

    stranger = visit(running.browser, running.server.url)
    expect(stranger.page.get_by_label("Password", exact=True)).to_be_visible(timeout=60_000)
    for link in (chat.url, archive.url):
        fetched = stranger.page.evaluate(
            "url => fetch(url).then(r => r.text()).catch(e => 'refused: ' + e.name)", link
        )
        print(f"a stranger's page fetching {link.split('/')[0]}//…: {fetched[:40]!r}")
        assert fetched.startswith("refused"), fetched
    assert not any(secret in stranger.seen() for secret in SECRETS)
    page.context.close()


def test_a_link_asks_for_the_password_first_then_opens_its_range(running: Running):
    from playwright.sync_api import expect

    member = visit(running.browser, f"{running.server.url}/?{running.link}")
    page = member.page
    expect(page.get_by_label("Password", exact=True)).to_be_visible(timeout=60_000)
    assert "Bluebird" not in member.seen()
    sign_in(page, PASSWORD)
    mark = page.locator(".st-key-opened_range .kn-excerpt > mark")
    expect(mark).to_have_text("Bluebird launches", timeout=60_000)
