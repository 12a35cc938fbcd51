"""Downloads that never get a URL: the bytes go to the session that asked, over its websocket.

`st.download_button` keeps a file in Streamlit's media store and serves it at `/media/<id>` to
anyone who has the address, until two later script runs (of any session) sweep it away. Here a
button's callback calls `prepare`; the same run's `deliver` hands the bytes to a small component
in that session's page only, whose script saves them from a `blob:` URL that lives in that page.
Nothing is kept on the server after the run: a stranger has no address to fetch.
"""

from __future__ import annotations

import json
import secrets
import struct

import streamlit as st

from knownote.errors import FileTooLarge

# The payload is raw bytes (a component's data may be bytes at its top level): a 4-byte length,
# a JSON header (name, type, a nonce so that one payload is saved once), then the file itself.
_JS = """
export default function(component) {
  const { data } = component;
  if (!(data instanceof ArrayBuffer || ArrayBuffer.isView(data))) return;
  const bytes = data instanceof ArrayBuffer
    ? new Uint8Array(data)
    : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const size = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + size)));
  const saved = (window.__knownoteSaved = window.__knownoteSaved || new Set());
  if (saved.has(head.nonce)) return;
  saved.add(head.nonce);
  const url = URL.createObjectURL(new Blob([bytes.subarray(4 + size)], { type: head.mime }));
  const link = document.createElement("a");
  link.href = url;
  link.download = head.name;
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
"""

_saver = st.components.v2.component("knownote.save_file", js=_JS)
_PENDING = "download_pending"


def limit_bytes() -> int:
    """The most one websocket message may carry (`server.maxMessageSize`), less headroom."""
    return int(st.get_option("server.maxMessageSize")) * 1024 * 1024 - 64 * 1024


def check_fits(size: int, what: str) -> None:
    """Raise FileTooLarge when `size` bytes cannot travel over the websocket."""
    if size > limit_bytes():
        raise FileTooLarge(
            f"{what} is {size / 1024 / 1024:,.0f} MB, more than the "
            f"{limit_bytes() // 1024 // 1024:,} MB the browser connection carries "
            "(server.maxMessageSize in .streamlit/config.toml). Use the command line instead."
        )


def prepare(name: str, mime: str, data: bytes, *, what: str) -> None:
    """Keep a file for this session's run that follows (call it from a button's callback).

    Raises FileTooLarge when it cannot travel over the websocket; `what` names it for the user.
    """
    check_fits(len(data), what)
    head = json.dumps({"name": name, "mime": mime, "nonce": secrets.token_hex(16)}).encode()
    st.session_state[_PENDING] = struct.pack(">I", len(head)) + head + data


def unpack(payload: bytes) -> tuple[dict[str, str], bytes]:
    """The header (name, mime, nonce) and the file of a payload, as the page's script reads them."""
    (size,) = struct.unpack(">I", payload[:4])
    return json.loads(payload[4 : 4 + size]), payload[4 + size :]


def deliver() -> None:
    """Send a prepared file to this session's page, once; the browser saves it."""
    payload = st.session_state.pop(_PENDING, None)
    if payload is not None:
        _saver(data=payload, key="save_file", width="content", height="content")
