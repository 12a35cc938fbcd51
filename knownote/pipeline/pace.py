"""How fast imports go: passages embedded a second, the time a file and the queue have left.

A file's time left is its passages still to embed at the rate measured since its embedding
started (the embedding is most of an import). Files still waiting have not been read, so their
passages are unknown: the queue's time left counts their bytes at the seconds a byte that this
process's imports took (the running import's, projected to its end, until one has finished).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Pace:
    """One import's progress in passages, with when its embedding started and was last heard."""

    started: float  # clock seconds (time.monotonic) when its embedding started
    done: int = 0
    total: int = 0
    at: float = 0.0  # when `done` was reported

    def rate(self) -> float | None:
        """Passages a second since the embedding started; None before any is done."""
        elapsed = self.at - self.started
        return self.done / elapsed if self.done > 0 and elapsed > 0 else None

    def seconds_left(self, now: float | None = None) -> float | None:
        """Seconds until the last passage is embedded, as of `now` (default: the clock)."""
        rate = self.rate()
        if rate is None:
            return None
        since = (time.monotonic() if now is None else now) - self.at
        return max((self.total - self.done) / rate - since, 0.0)


@dataclass
class ImportPaces:
    """The paces of running imports and what finished imports took, for one worker."""

    paces: dict[int, Pace] = field(default_factory=dict)
    claimed: dict[int, tuple[float, int]] = field(default_factory=dict)  # job -> (clock, bytes)
    seconds_per_byte: float | None = None  # of the last finished import

    def begin(self, job_id: int, size: int, now: float) -> None:
        self.claimed[job_id] = (now, size)

    def report(self, job_id: int, stage: str, done: int, total: int, now: float) -> None:
        """A progress report; only the embedding's count passages."""
        if stage != "embed":
            return
        pace = self.paces.get(job_id)
        if pace is None or done == 0:
            pace = self.paces[job_id] = Pace(started=now)
        pace.done, pace.total, pace.at = done, total, now

    def end(self, job_id: int, imported: bool, now: float) -> None:
        """Forget a job; an import that embedded sets the seconds a byte of those waiting."""
        started, size = self.claimed.pop(job_id, (now, 0))
        pace = self.paces.pop(job_id, None)
        if imported and pace is not None and size > 0:
            self.seconds_per_byte = (now - started) / size

    def pace(self, job_id: int) -> Pace | None:
        return self.paces.get(job_id)

    def queue_seconds_left(self, running: int, waiting_bytes: int, now: float) -> float | None:
        """Seconds until the running import `running` and files of `waiting_bytes` are done;
        None while nothing is known to estimate them by."""
        pace = self.paces.get(running)
        left = pace.seconds_left(now) if pace is not None else None
        if left is None:
            return None
        per_byte = self.seconds_per_byte
        if per_byte is None:
            started, size = self.claimed.get(running, (now, 0))
            per_byte = (now - started + left) / size if size > 0 else None
        if per_byte is None:
            return None
        return left + waiting_bytes * per_byte


def duration_text(seconds: float) -> str:
    """A time left in words: "under 5 s", "about 40 s", "about 3 min", "about 1 h 5 min"."""
    if seconds < 5:
        return "under 5 s"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def rate_text(rate: float) -> str:
    return f"{rate:.1f} passages/s" if rate < 10 else f"{rate:.0f} passages/s"


def pace_text(pace: Pace, now: float | None = None) -> str | None:
    """ "38 passages/s, about 40 s left" for one file; None until its rate is known."""
    rate, left = pace.rate(), pace.seconds_left(now)
    if rate is None or left is None:
        return None
    return f"{rate_text(rate)}, {duration_text(left)} left"
