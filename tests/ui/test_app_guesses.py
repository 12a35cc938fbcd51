"""Password guesses are slowed per client address: a new session does not start afresh."""

from __future__ import annotations

import re
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from knownote.access import GuessThrottle
from tests.ui.test_app import APP, TIMEOUT, home

__all__ = ["home"]  # the fixture, shared with test_app


def guess(password: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)  # a new session, the same address
    at.run()
    at.text_input(key="password").set_value(password)
    at.button[0].click().run()
    return at


def test_new_sessions_after_many_wrong_guesses_still_have_to_wait(home: Path, monkeypatch):
    monkeypatch.setenv("KNOWNOTE_PASSWORD", "right one")
    free = GuessThrottle().free
    said = [guess("wrong").error[0].value for _ in range(free)]
    assert said == ["That password is not right."] * free
    # Each further wrong guess doubles the wait; a guess during the wait is not even checked,
    # so the test waits each one out (1 + 2 + 4 s) to reach a wait of 8 s.
    for _ in range(30):
        said.append(guess("wrong").error[0].value)
        wait = re.search(r"try again in (\d+) s", said[-1])
        if wait and int(wait.group(1)) >= 8:
            break
        if wait:
            time.sleep(int(wait.group(1)) + 0.2)
    else:
        raise AssertionError(said)
    fresh = guess("right one")  # even the right password waits its turn
    assert "Too many wrong passwords from your address" in fresh.error[0].value
    assert "signed_in" not in fresh.session_state
