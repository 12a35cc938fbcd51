"""How many uploaded bytes the app's memory may hold, and for whom. No Streamlit here.

Streamlit keeps every file a browser PUTs to `/_stcore/upload_file/<session>/<file>` in memory
until the session ends, and accepts it from any open session. The budget decides, before a
request's body is read and again when its file would be kept, whether a session may hold it:
only sessions admitted by the app (signed in, or every session when no password is set), each up
to `session_bytes`, all together up to `total_bytes`. `knownote.ui.uploads` applies it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class Refusal:
    """Why an upload is refused, as an HTTP status and a sentence for the person uploading."""

    status: int
    reason: str


class UploadBudget:
    """Admitted sessions and the bounds on the uploaded bytes they hold. Thread-safe."""

    def __init__(self, session_bytes: int, total_bytes: int, most_sessions: int = 10_000) -> None:
        self.session_bytes, self.total_bytes = session_bytes, total_bytes
        self.most_sessions = most_sessions
        self.lock = threading.RLock()  # held from the check until the file is kept
        self.admitted: dict[str, None] = {}  # insertion-ordered: the oldest are forgotten first

    def admit(self, session_id: str) -> None:
        """Let a session hold uploads (the app calls this on each run of a signed-in session)."""
        with self.lock:
            self.admitted.pop(session_id, None)
            self.admitted[session_id] = None
            while len(self.admitted) > self.most_sessions:  # re-admitted on their next run
                del self.admitted[next(iter(self.admitted))]

    def forget(self, session_id: str) -> None:
        with self.lock:
            self.admitted.pop(session_id, None)

    def refusal(
        self, session_id: str, held: Mapping[str, int], incoming: int = 0
    ) -> Refusal | None:
        """Why `session_id` may not keep `incoming` more bytes, or None when it may.

        `held` is what each session holds now. With `incoming` 0 (before a body is read) a
        session is refused once it has no room left at all.
        """
        with self.lock:
            if session_id not in self.admitted:
                return Refusal(403, "Sign in before uploading files.")
        mine = held.get(session_id, 0)
        total = sum(held.values())
        if mine + incoming > self.session_bytes or (incoming == 0 and mine >= self.session_bytes):
            return Refusal(
                413,
                f"This browser session already holds {mine / MB:,.0f} MB of uploads, and may "
                f"hold at most {self.session_bytes // MB:,} MB (KNOWNOTE_MAX_UPLOAD_SESSION_MB). "
                "Wait for the files to be imported, or reload the page.",
            )
        if total + incoming > self.total_bytes or (incoming == 0 and total >= self.total_bytes):
            return Refusal(
                413,
                f"The app already holds {total / MB:,.0f} MB of uploads from all browsers, and "
                f"may hold at most {self.total_bytes // MB:,} MB "
                "(KNOWNOTE_MAX_UPLOAD_TOTAL_MB). Try again when other uploads are imported.",
            )
        return None
