"""The optional password: where it comes from and how it is compared."""

from __future__ import annotations

from knownote.access import expected_password, password_matches


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
