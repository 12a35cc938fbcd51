"""The optional password in front of the app. No Streamlit here: the app passes its secrets in.

The password comes from the environment variable KNOWNOTE_PASSWORD, or else from the key of the
same name in Streamlit secrets (`.streamlit/secrets.toml`). Without either the app is open.
Programs outside the app (`knownote mcp --http`) read the same secrets files themselves.
"""

from __future__ import annotations

import hmac
import threading
import time
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from knownote.errors import KnowNoteError

PASSWORD_KEY = "KNOWNOTE_PASSWORD"


def expected_password(
    environ: Mapping[str, str], secrets: Mapping[str, object] | None = None
) -> str | None:
    """The password the app asks for, or None when it is open. The environment wins."""
    value = environ.get(PASSWORD_KEY)
    if not value and secrets:
        value = secrets.get(PASSWORD_KEY)
    return str(value) if value else None


CHECKOUT = Path(__file__).resolve().parents[1]  # where app.py is, and scripts/start runs it


def secrets_files(*folders: Path) -> list[Path]:
    """Where Streamlit looks for secrets when the app runs from one of `folders`: the user's,
    then each folder's (a later one wins)."""
    home = Path.home() / ".streamlit" / "secrets.toml"
    return [home, *dict.fromkeys(f / ".streamlit" / "secrets.toml" for f in folders)]


def password_outside_app(environ: Mapping[str, str]) -> str | None:
    """The app's password as a program started elsewhere finds it: the environment, else the
    secrets of the user, of the app's folder and of the current folder."""
    return expected_password(environ, file_secrets(secrets_files(CHECKOUT, Path.cwd())))


def file_secrets(paths: Sequence[Path]) -> dict[str, object]:
    """The secrets of these TOML files, a later file's keys over an earlier one's; missing
    files are skipped."""
    found: dict[str, object] = {}
    for path in paths:
        try:
            with path.open("rb") as f:
                found.update(tomllib.load(f))
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise KnowNoteError(f"The secrets file {path} could not be read: {e}.") from None
    return found


def password_matches(given: str, expected: str) -> bool:
    """Compare in constant time, so the time taken says nothing about the password."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


class GuessThrottle:
    """Wrong passwords slow down guessing per client address, not per browser session.

    After `free` wrong guesses from an address (typos), each further wrong guess makes that
    address wait before its next guess is even checked: `base` seconds, doubling up to `cap`. A
    right password clears the address. More sessions (or tabs) from the same address do not help.
    """

    def __init__(
        self, base: float = 1.0, cap: float = 60.0, free: int = 5, clock=time.monotonic
    ) -> None:
        self.base, self.cap, self.free, self.clock = base, cap, free, clock
        self.lock = threading.Lock()
        self.failures: dict[str, tuple[int, float]] = {}  # address -> (count, next allowed)

    def wait(self, address: str) -> float:
        """Seconds this address must still wait before its next guess is checked (0: none)."""
        with self.lock:
            _, allowed = self.failures.get(address, (0, 0.0))
            return max(0.0, allowed - self.clock())

    def failed(self, address: str) -> float:
        """Record a wrong guess; return the wait it earned."""
        with self.lock:
            count, _ = self.failures.get(address, (0, 0.0))
            count += 1
            over = count - self.free
            delay = 0.0 if over <= 0 else min(self.cap, self.base * 2 ** (over - 1))
            self.failures[address] = (count, self.clock() + delay)
            if len(self.failures) > 10_000:  # bounded: forget the oldest addresses
                for stale in list(self.failures)[:1000]:
                    del self.failures[stale]
            return delay

    def succeeded(self, address: str) -> None:
        with self.lock:
            self.failures.pop(address, None)


# One per server process (modules are imported once; the app's script reruns).
GUESSES = GuessThrottle()
