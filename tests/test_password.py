"""With KNOWNOTE_PASSWORD set, nothing of a notebook reaches a visitor without the password:
checked in a real browser (the page and every websocket frame it receives) and by plain HTTP
requests to the server's endpoints.

The data folder is filled through `knownote` before the server starts, so the secrets exist from
the first request on.
"""

from __future__ import annotations

import http.client
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from knownote.ingest import import_file
from knownote.settings import Settings
from knownote.store import Store
from tests.browser import Server, chromium, shot, streamlit_server

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
    store.close()
    with (
        chromium() as browser,
        streamlit_server(tmp, KNOWNOTE_PASSWORD=PASSWORD) as server,
    ):
        yield Running(server, browser)


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


def test_a_download_link_is_a_secret_url_that_lives_with_the_session(running: Running):
    """Streamlit serves /media/<id> to whoever holds the URL. A download's id is a 128-bit
    fingerprint of the file's content and name, told only to the signed-in session that clicked,
    and Streamlit drops the file after the next two script runs on the server."""
    from playwright.sync_api import expect

    member = visit(running.browser, running.server.url)
    page = member.page
    sign_in(page, PASSWORD)
    expect(page.get_by_role("heading", name=NOTEBOOK)).to_be_visible(timeout=60_000)
    page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
    box = page.get_by_placeholder("Ask a question about this notebook's sources")
    box.fill("When does Bluebird launch?")
    box.press("Enter")
    page.locator(".kn-card").first.wait_for(timeout=TIMEOUT)
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download Markdown").click()
    link = download.value.url
    assert "/media/" in link
    status, body = request(link)  # another client, no cookie, no session
    print(f"{status}  GET {link.split('/media/')[0]}/media/<id> from another client, signed-in")
    assert re.fullmatch(r".*/media/[0-9a-f]{32}\.md", link), link
    page.context.close()  # the member leaves
    stranger = visit(running.browser, running.server.url)
    for _ in range(2):  # two script runs on the server: Streamlit sweeps unreferenced files
        sign_in(stranger.page, "wrong guess")
        expect(stranger.page.get_by_text("That password is not right.")).to_be_visible()
        stranger.page.wait_for_timeout(1500)
    status_after, _ = request(link)
    print(f"{status_after}  the same GET after two more script runs on the server")
    assert status == 200 and b"Bluebird" in body
    assert status_after == 404
