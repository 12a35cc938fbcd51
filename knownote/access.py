"""The optional password in front of the app. No Streamlit here: the app passes its secrets in.

The password comes from the environment variable KNOWNOTE_PASSWORD, or else from the key of the
same name in Streamlit secrets (`.streamlit/secrets.toml`). Without either the app is open.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

PASSWORD_KEY = "KNOWNOTE_PASSWORD"


def expected_password(
    environ: Mapping[str, str], secrets: Mapping[str, object] | None = None
) -> str | None:
    """The password the app asks for, or None when it is open. The environment wins."""
    value = environ.get(PASSWORD_KEY)
    if not value and secrets:
        value = secrets.get(PASSWORD_KEY)
    return str(value) if value else None


def password_matches(given: str, expected: str) -> bool:
    """Compare in constant time, so the time taken says nothing about the password."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
