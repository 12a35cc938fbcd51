"""The optional password: where it comes from and how it is compared."""

from __future__ import annotations

import pytest

from knownote.access import GuessThrottle, expected_password, password_matches


def test_no_password_means_open():
    assert expected_password({}, None) is None


def test_empty_password_means_open():
    assert expected_password({"KNOWNOTE_PASSWORD": ""}, {}) is None


def test_password_from_environment():
    assert expected_password({"KNOWNOTE_PASSWORD": "s3cret"}) == "s3cret"


def test_password_from_secrets():
    assert expected_password({}, {"KNOWNOTE_PASSWORD": "from-secrets"}) == "from-secrets"


def test_environment_wins_over_secrets():
    assert expected_password({"KNOWNOTE_PASSWORD": "env"}, {"KNOWNOTE_PASSWORD": "file"}) == "env"


def test_matching_password():
    assert password_matches("s3cret", "s3cret")


def test_wrong_password():
    assert not password_matches("s3cre", "s3cret")


def test_non_ascii_password():
    assert password_matches("pässwörd·密码", "pässwörd·密码")
    assert not password_matches("passwort", "pässwörd")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_wrong_guesses_from_one_address_wait_longer_each_time():
    clock = Clock()
    throttle = GuessThrottle(base=1, cap=8, free=2, clock=clock)
    assert throttle.wait("10.0.0.5") == 0
    assert [throttle.failed("10.0.0.5") for _ in range(7)] == [0, 0, 1, 2, 4, 8, 8]
    assert throttle.wait("10.0.0.5") == 8
    assert throttle.wait("10.0.0.6") == 0  # another address is not slowed
    clock.now += 8
    assert throttle.wait("10.0.0.5") == 0


def test_a_right_password_clears_the_address():
    throttle = GuessThrottle(base=1, cap=8, free=0, clock=Clock())
    throttle.failed("10.0.0.5")
    throttle.succeeded("10.0.0.5")
    assert throttle.wait("10.0.0.5") == 0


def test_the_folder_secrets_file_wins_and_a_missing_one_is_skipped(tmp_path):
    from knownote.access import file_secrets

    user, folder = tmp_path / "user.toml", tmp_path / "folder.toml"
    user.write_text('KNOWNOTE_PASSWORD = "from home"\nOTHER = 1\n')
    folder.write_text('KNOWNOTE_PASSWORD = "from the folder"\n')
    found = file_secrets([user, tmp_path / "absent.toml", folder])
    assert found == {"KNOWNOTE_PASSWORD": "from the folder", "OTHER": 1}


def test_a_damaged_secrets_file_is_named(tmp_path):
    from knownote.access import file_secrets
    from knownote.errors import KnowNoteError

    broken = tmp_path / "secrets.toml"
    broken.write_text("KNOWNOTE_PASSWORD = \n")
    with pytest.raises(KnowNoteError, match=r"secrets\.toml could not be read"):
        file_secrets([broken])
