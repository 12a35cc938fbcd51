"""Fetching web addresses: what is refused by default, redirects, limits, and what is kept."""

from __future__ import annotations

import pytest

from knownote.errors import AddressRefused, FetchFailed
from knownote.read.fetch import fetch, looks_like_address, why_refused
from tests.web_server import serve


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("127.0.0.1", "this machine"),
        ("::1", "this machine"),
        ("0.0.0.0", "this machine"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("172.16.5.4", "private"),
        ("fd12::1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.1.1", "carrier-grade NAT"),
        ("::ffff:10.0.0.1", "private"),
        ("224.0.0.1", "reserved"),
    ],
)
def test_addresses_refused_by_default_say_why(ip, reason):
    assert reason in why_refused(ip)


@pytest.mark.parametrize("ip", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_public_addresses_are_fetched(ip):
    assert why_refused(ip) is None


def test_this_machine_is_refused_without_the_setting():
    with serve() as site:
        url = site.page("/a.html", b"<html><body><p>hello</p></body></html>")
        with pytest.raises(AddressRefused, match="address of this machine") as refused:
            fetch(url)
    assert "KNOWNOTE_ALLOW_LOCAL_ADDRESSES=1" in str(refused.value)
    assert site.hits == []  # refused before connecting


@pytest.mark.parametrize("allow_local", [False, True])
def test_cloud_metadata_address_is_refused_whatever_the_setting(allow_local):
    with pytest.raises(AddressRefused, match="cloud metadata"):
        fetch("http://169.254.169.254/latest/meta-data/", allow_local=allow_local)


def test_a_name_resolving_to_a_private_address_is_refused():
    def resolver(host: str, port: int) -> list[str]:
        return {"intranet.example": ["10.0.0.7"]}[host]

    with pytest.raises(AddressRefused, match=r"intranet.example resolves to 10\.0\.0\.7"):
        fetch("http://intranet.example/wiki", resolver=resolver)


def test_localhost_by_name_is_refused():
    with pytest.raises(AddressRefused, match="localhost resolves to"):
        fetch("http://localhost:9/")


def test_a_redirect_into_a_private_range_is_refused(monkeypatch):
    # The first hop is a "public" name that the resolver sends to the test server (so it is
    # reached); its redirect points into 192.168/16, which is refused before any connection.
    with serve() as site:
        port = site.base.rsplit(":", 1)[1]
        site.redirect("/go", "http://192.168.1.1/admin")

        def resolver(host: str, port_: int) -> list[str]:
            return {"public.example": ["127.0.0.1"]}[host]

        from knownote.read import fetch as fetch_module

        checked = []
        real = fetch_module.why_refused

        def public_test_server(ip: str) -> str | None:
            checked.append(ip)
            return None if ip == "127.0.0.1" else real(ip)

        monkeypatch.setattr(fetch_module, "why_refused", public_test_server)
        with pytest.raises(
            AddressRefused, match=r"192\.168\.1\.1/admin was not fetched: it is a priv"
        ):
            fetch(f"http://public.example:{port}/go", resolver=resolver)
    assert site.hits == ["/go"] and checked == ["127.0.0.1", "192.168.1.1"]


def test_redirects_are_followed_and_the_final_address_kept():
    with serve() as site:
        final = site.page("/page.html", b"<html><body><p>here</p></body></html>")
        start = site.redirect("/old", "/page.html", 301)
        fetched = fetch(start, allow_local=True)
    assert fetched.address == start and fetched.final_address == final
    assert fetched.data.startswith(b"<html>") and fetched.content_type == "text/html"
    assert fetched.fetched_at.tzinfo is not None


def test_too_many_redirects_stop():
    with serve() as site:
        for i in range(10):
            site.redirect(f"/r{i}", f"/r{i + 1}")
        with pytest.raises(FetchFailed, match="redirected more than 3 times"):
            fetch(site.base + "/r0", allow_local=True, max_redirects=3)


def test_a_page_over_the_size_limit_is_not_kept():
    with serve() as site:
        url = site.page("/big", b"x" * 5000, "text/plain")
        with pytest.raises(FetchFailed, match="larger than"):
            fetch(url, allow_local=True, max_bytes=1000)


def test_an_error_page_is_not_imported():
    with serve() as site, pytest.raises(FetchFailed, match="answered 404"):
        fetch(site.base + "/missing", allow_local=True)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/"])
def test_only_web_addresses_are_fetched(url):
    with pytest.raises(FetchFailed, match="only http:// and https://"):
        fetch(url)


def test_addresses_are_told_from_files():
    assert looks_like_address("https://en.wikipedia.org/wiki/Tardigrade")
    assert not looks_like_address("notes/http.pdf")


def test_the_connection_goes_to_the_address_checked_with_the_name_kept():
    # The name resolves once, to the checked address; the request goes there with its Host
    # header, so a name that resolves elsewhere a moment later (DNS rebinding) is not asked again.
    asked = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    with serve() as site:
        port = site.base.rsplit(":", 1)[1]
        site.page("/p", b"<html><body><p>x</p></body></html>")
        fetched = fetch(f"http://pages.test:{port}/p", allow_local=True, resolver=resolver)
    assert asked == ["pages.test"] and site.hosts == [f"pages.test:{port}"]
    assert fetched.final_address == f"http://pages.test:{port}/p"
