"""Fetching a web page by its address: the bytes kept as the snapshot every offset points into.

The server fetches on a visitor's behalf and the app may be shared on a LAN, so by default an
address of this machine, of a private, link-local or shared (CGNAT) range is refused, and a cloud
metadata address always (it holds the machine's credentials; no test or person needs it). Every
address the host resolves to is checked, at every redirect, and the connection goes to the
address that was checked (the name is kept for the Host header and TLS), so a name that resolves
differently a second time (DNS rebinding) cannot slip through.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from knownote.errors import AddressRefused, FetchFailed

if TYPE_CHECKING:  # loaded with the first fetch: a file's import need not wait for it
    import httpx

MAX_REDIRECTS = 5
USER_AGENT = "KnowNote (a local notebook; fetches one page a person asked for)"
_METADATA = (
    ipaddress.ip_network("169.254.169.254/32"),  # AWS, GCP, Azure, OpenStack
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS over IPv6
    ipaddress.ip_network("100.100.100.200/32"),  # Alibaba Cloud
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
METADATA = "a cloud metadata address"

Resolver = Callable[[str, int], list[str]]


@dataclass(frozen=True)
class Fetched:
    """A page as fetched: its bytes, the address asked for, where redirects ended, and when."""

    address: str
    final_address: str
    fetched_at: datetime  # UTC
    content_type: str
    data: bytes


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (the system resolver; tests replace this function)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise FetchFailed(
            f"The name {host} could not be found ({e.strerror}). Check the address, "
            "or this machine's network connection."
        ) from None
    return list(dict.fromkeys(info[4][0] for info in infos))


def why_refused(ip: str) -> str | None:
    """In words, why an address is not fetched by default; None when it is a public one."""
    address = ipaddress.ip_address(ip.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in net for net in _METADATA if net.version == address.version):
        return METADATA
    if address.is_loopback or address.is_unspecified:
        return "an address of this machine"
    if address.is_link_local:
        return "a link-local address"
    if address.version == 4 and address in _CGNAT:
        return "a shared (carrier-grade NAT) address"
    if address.is_private:
        return "a private network address"
    if address.is_multicast or address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


def check_address(url: str, allow_local: bool, resolver: Resolver) -> tuple[str, str, int, str]:
    """The URL's scheme, host, port and the checked IP to connect to; AddressRefused if refused."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchFailed(
            f"{url} is not a web address: only http:// and https:// addresses can be imported."
        )
    host = parts.hostname
    if not host:
        raise FetchFailed(f"{url} has no host name. Paste the whole address, with http(s)://.")
    if parts.username or parts.password:
        raise FetchFailed(f"{host}: addresses with a user name or password are not fetched.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise FetchFailed(f"{url} has a port that is not a number from 1 to 65535.") from None
    try:
        ips = [str(ipaddress.ip_address(host))]
    except ValueError:
        ips = resolver(host, port)
    if not ips:
        raise FetchFailed(f"The name {host} resolves to no address. Check the address.")
    for ip in ips:
        reason = why_refused(ip)
        if reason is None or (allow_local and reason != METADATA):
            continue
        via = "" if ip == host else f" (the name {host} resolves to {ip})"
        if reason == METADATA:
            raise AddressRefused(
                f"{url} was not fetched: it is {reason}{via}, which holds this machine's cloud "
                "credentials. KnowNote never fetches it, whatever the settings."
            )
        raise AddressRefused(
            f"{url} was not fetched: it is {reason}{via}. The server does not fetch "
            "addresses of this machine or of private networks on a visitor's behalf. "
            "To allow it on a machine only you use, set allow_local_addresses "
            "(KNOWNOTE_ALLOW_LOCAL_ADDRESSES=1)."
        )
    return parts.scheme, host, port, ips[0]


def _on_ip(url: str, ip: str) -> str:
    """`url` with its host replaced by `ip` (the connection goes where the check looked)."""
    parts = urlsplit(url)
    host = f"[{ip}]" if ":" in ip else ip
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def fetch(
    url: str,
    *,
    allow_local: bool = False,
    max_bytes: int = 200 * 1024 * 1024,
    timeout: float = 30.0,
    max_redirects: int = MAX_REDIRECTS,
    resolver: Resolver | None = None,
) -> Fetched:
    """Fetch one address, following at most `max_redirects` redirects (each hop checked).

    Raises AddressRefused for addresses refused by default, FetchFailed for anything else a
    person can fix (a name not found, an error page, too large, too slow).
    """
    import httpx

    url = url.strip()
    resolver = resolver or resolve
    deadline = time.monotonic() + 4 * timeout  # a server that trickles bytes forever
    current = url
    with httpx.Client(
        timeout=httpx.Timeout(timeout), follow_redirects=False, trust_env=False
    ) as client:
        for _ in range(max_redirects + 1):
            scheme, host, port, ip = check_address(current, allow_local, resolver)
            default_port = port == (443 if scheme == "https" else 80)
            headers = {
                "Host": host if default_port else f"{host}:{port}",
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml,application/pdf,*/*;q=0.5",
            }
            request = client.build_request(
                "GET",
                _on_ip(current, ip),
                headers=headers,
                extensions={"sni_hostname": host} if scheme == "https" else {},
            )
            try:
                response = client.send(request, stream=True)
            except httpx.TimeoutException:
                raise FetchFailed(
                    f"{host} did not answer within {timeout:g} seconds. Try again later."
                ) from None
            except httpx.HTTPError as e:
                raise FetchFailed(
                    f"{current} could not be fetched ({e}). Check the address."
                ) from None
            try:
                if response.is_redirect:
                    location = response.headers.get("location", "")
                    current = urljoin(current, location)
                    continue
                if response.status_code >= 400:
                    raise FetchFailed(
                        f"{current} answered {response.status_code} "
                        f"{response.reason_phrase or ''}".rstrip()
                        + ": there is no page to import there. Check the address."
                    )
                data = _read_bounded(response, current, max_bytes, deadline)
            finally:
                response.close()
            return Fetched(
                address=url,
                final_address=current,
                fetched_at=datetime.now(UTC).replace(microsecond=0),
                content_type=response.headers.get("content-type", ""),
                data=data,
            )
    raise FetchFailed(
        f"{url} redirected more than {max_redirects} times, so it was not fetched. "
        "Open it in a browser and paste the address where it ends."
    )


def _read_bounded(response: httpx.Response, url: str, max_bytes: int, deadline: float) -> bytes:
    import httpx

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchFailed(_too_large(url, max_bytes))
    chunks, size = [], 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise FetchFailed(_too_large(url, max_bytes))
            if time.monotonic() > deadline:
                raise FetchFailed(f"{url} took too long to send, so it was not imported.")
            chunks.append(chunk)
    except httpx.TimeoutException:
        raise FetchFailed(f"{url} stopped sending before the page was whole. Try again.") from None
    except httpx.HTTPError as e:
        raise FetchFailed(f"{url} could not be read whole ({e}). Try again.") from None
    return b"".join(chunks)


def _too_large(url: str, max_bytes: int) -> str:
    return (
        f"{url} is larger than {max_bytes / 1024 / 1024:.0f} MB, the limit (setting "
        "max_file_mb), so it was not imported."
    )


def looks_like_address(text: str) -> bool:
    """Whether a command-line argument or pasted line is a web address rather than a file."""
    return text.strip().lower().startswith(("http://", "https://"))
