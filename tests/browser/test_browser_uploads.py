"""Strangers cannot fill the app's memory through Streamlit's upload endpoint.

A real `streamlit run app.py` with a password and small upload bounds (40 MB a session, 60 MB in
all). Sessions are opened in Chromium; their ids are read from the websocket's first message,
as any visitor could, and files are PUT to `/_stcore/upload_file/<session>/<file>` with plain
HTTP from Python, with a valid XSRF token. The server process's resident memory (VmRSS) is read
before and after.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from knownote.store.db import Store
from tests.browser.harness import Server, chromium, shot, streamlit_server

pytestmark = pytest.mark.browser

PASSWORD = "upload bounds"
NOTEBOOK = "Uploads"
SESSION_MB, TOTAL_MB = 40, 60
MB = 1024 * 1024


@dataclass
class Tab:
    """A browser page and the Streamlit session id its websocket was given."""

    page: object
    frames: list[bytes] = field(default_factory=list)

    def session_id(self) -> str:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        for frame in self.frames:
            message = ForwardMsg.FromString(frame)
            if message.WhichOneof("type") == "new_session":
                return message.new_session.initialize.session_id
        raise AssertionError("no session started on this page's websocket")

    def xsrf(self) -> str:
        cookies = {c["name"]: c["value"] for c in self.page.context.cookies()}
        return cookies["_streamlit_xsrf"]


def open_tab(browser, url: str) -> Tab:
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
    tab = Tab(page)
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived", lambda p: tab.frames.append(p) if isinstance(p, bytes) else None
        ),
    )
    page.goto(url)
    expect(page.get_by_label("Password", exact=True)).to_be_visible(timeout=60_000)
    return tab


def sign_in(tab: Tab) -> None:
    from playwright.sync_api import expect

    tab.page.get_by_label("Password", exact=True).fill(PASSWORD)
    tab.page.get_by_role("button", name="Open").click()
    expect(tab.page.get_by_role("heading", name=NOTEBOOK)).to_be_visible(timeout=60_000)


@dataclass(frozen=True)
class Visitor:
    """What a script needs to PUT as a browser session: its id and its XSRF cookie."""

    session_id: str
    xsrf: str


def visitor(tab: Tab) -> Visitor:
    return Visitor(tab.session_id(), tab.xsrf())


def put(
    server: Server, who: Visitor, size: int, *, session: str | None = None, expect: bool = False
) -> tuple[int | str, bytes]:
    """PUT one file of `size` bytes to the upload endpoint, as a script would.

    With `expect`, ask "Expect: 100-continue" and send the body only if the server wants it, so
    a refusal before the body is read shows as a final status without any body sent.
    Returns the status (or "reset" when the server closed the connection first) and the body.
    """
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="UploadedFile"; '
            f'filename="fill.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + b"\0" * size
        + f"\r\n--{boundary}--\r\n".encode()
    )
    token = who.xsrf
    host, port = server.url.removeprefix("http://").split(":")
    path = f"/_stcore/upload_file/{session or who.session_id}/{uuid.uuid4()}"
    head = (
        f"PUT {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {len(body)}\r\nX-Xsrftoken: {token}\r\n"
        f"Cookie: _streamlit_xsrf={token}\r\nConnection: close\r\n"
        + ("Expect: 100-continue\r\n" if expect else "")
        + "\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        reader = sock.makefile("rb")
        try:
            sock.sendall(head)
            if expect:
                status = int(reader.readline().split()[1])
                if status != 100:
                    return status, read_rest(reader)
                reader.readline()  # the blank line after "100 Continue"
            sock.sendall(body)
            status = int(reader.readline().split()[1])
            return status, read_rest(reader)
        except (BrokenPipeError, ConnectionResetError, IndexError):
            return "reset", b""


def read_rest(reader) -> bytes:
    while reader.readline() not in (b"\r\n", b""):
        pass
    try:
        return reader.read()
    except ConnectionResetError:
        return b""


def rss_mb(server: Server) -> float:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@dataclass
class Running:
    server: Server
    browser: object


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("uploads")
    store = Store.open(tmp / "home" / "knownote.duckdb")
    store.create_notebook(NOTEBOOK, embedder.name, embedder.dim)
    store.close()
    with (
        chromium() as browser,
        streamlit_server(
            tmp,
            KNOWNOTE_PASSWORD=PASSWORD,
            KNOWNOTE_MAX_UPLOAD_SESSION_MB=str(SESSION_MB),
            KNOWNOTE_MAX_UPLOAD_TOTAL_MB=str(TOTAL_MB),
        ) as server,
    ):
        yield Running(server, browser)


def test_a_stranger_can_upload_nothing_and_memory_stays_flat(running: Running):
    server = running.server
    stranger = visitor(open_tab(running.browser, server.url))
    before = rss_mb(server)
    status, reason = put(server, stranger, 25 * MB, expect=True)
    assert status == 403 and b"Sign in" in reason  # refused before a byte of the body was sent
    assert put(server, stranger, 10, session="not-a-session")[0] == 400
    with ThreadPoolExecutor(6) as pool:  # 24 files of 25 MB, six at a time, body sent blindly
        results = list(pool.map(lambda _: put(server, stranger, 25 * MB)[0], range(24)))
    after = rss_mb(server)
    print(f"stranger: 24 × 25 MB PUT → {sorted(set(map(str, results)))}; "
          f"server RSS {before:.0f} → {after:.0f} MB")  # fmt: skip
    # Refused unread: the server answered 403 and closed while the body was still coming.
    assert set(results) <= {403, "reset"}
    assert put(server, stranger, 25 * MB, expect=True)[0] == 403  # and it still answers
    assert after - before < 40


def test_signed_in_uploads_work_within_the_session_and_total_bounds(running: Running, tmp_path):
    from playwright.sync_api import expect

    server = running.server
    member = open_tab(running.browser, server.url)
    sign_in(member)
    member.page.locator('[data-testid="stRadio"] label').filter(has_text="Sources").click()
    note = tmp_path / "upload-notes.md"
    note.write_text("# Upload notes\n\nThe normal upload still imports a source.\n")
    member.page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(note))
    expect(member.page.get_by_text("Upload notes").first).to_be_visible(timeout=300_000)
    shot(member.page, "uploads-signed-in")
    before = rss_mb(server)
    member = visitor(member)

    # The file queued above was dropped from memory, so the whole 40 MB are free again.
    assert put(server, member, SESSION_MB * MB)[0] == 204
    status, reason = put(server, member, 1, expect=True)
    assert status == 413 and b"KNOWNOTE_MAX_UPLOAD_SESSION_MB" in reason  # full: body unread

    tab = open_tab(running.browser, server.url)
    sign_in(tab)
    other = visitor(tab)
    with ThreadPoolExecutor(8) as pool:  # 8 × 15 MB at once: only one fits under the total
        results = list(pool.map(lambda _: put(server, other, 15 * MB)[0], range(8)))
    assert sorted(map(str, results)) == ["204"] + ["413"] * 7, results
    assert put(server, other, 5 * MB)[0] == 204  # exactly the 60 MB total
    status, reason = put(server, other, 1, expect=True)
    assert status == 413 and b"KNOWNOTE_MAX_UPLOAD_TOTAL_MB" in reason
    with ThreadPoolExecutor(8) as pool:  # 16 × 25 MB more from both: refused, body unread
        results = list(
            pool.map(lambda i: put(server, (member, other)[i % 2], 25 * MB)[0], range(16))
        )
    assert set(results) <= {413, "reset"}
    after = rss_mb(server)
    sent = SESSION_MB + 8 * 15 + 5 + 16 * 25
    print(f"members: {sent} MB sent, {TOTAL_MB} MB kept; server RSS {before:.0f} → {after:.0f} MB")
    # What is held (60 MB) plus, at most, the eight 15 MB files read at once and then refused.
    assert after - before < TOTAL_MB + 8 * 15 + 40
