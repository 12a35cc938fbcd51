"""The upload budget: who may hold uploaded bytes in the app's memory, and how many."""

from __future__ import annotations

from pathlib import Path

from knownote.ui.upload_budget import MB, UploadBudget


def budget() -> UploadBudget:
    b = UploadBudget(session_bytes=10 * MB, total_bytes=15 * MB)
    b.admit("member")
    b.admit("other member")
    return b


def test_a_session_that_has_not_signed_in_may_hold_nothing():
    refusal = budget().refusal("stranger", {}, incoming=0)
    assert refusal is not None and refusal.status == 403


def test_an_admitted_session_may_fill_its_own_bound_and_no_more():
    b = budget()
    assert b.refusal("member", {}, incoming=10 * MB) is None
    assert b.refusal("member", {"member": 6 * MB}, incoming=4 * MB) is None
    refusal = b.refusal("member", {"member": 6 * MB}, incoming=4 * MB + 1)
    assert refusal is not None and refusal.status == 413
    assert "KNOWNOTE_MAX_UPLOAD_SESSION_MB" in refusal.reason


def test_a_full_session_is_refused_before_its_body_is_read():
    b = budget()
    assert b.refusal("member", {"member": 9 * MB}) is None
    assert b.refusal("member", {"member": 10 * MB}) is not None


def test_all_sessions_together_stay_within_the_total():
    b = budget()
    held = {"member": 10 * MB}
    assert b.refusal("other member", held, incoming=5 * MB) is None
    refusal = b.refusal("other member", held, incoming=5 * MB + 1)
    assert refusal is not None and "KNOWNOTE_MAX_UPLOAD_TOTAL_MB" in refusal.reason
    assert b.refusal("other member", {"member": 10 * MB, "x": 5 * MB}) is not None


def test_forgotten_and_oldest_sessions_lose_their_admission():
    b = UploadBudget(MB, MB, most_sessions=2)
    for session in ("a", "b", "c"):
        b.admit(session)
    assert b.refusal("a", {}) is not None  # the oldest made room; it is re-admitted on its next run
    assert b.refusal("c", {}) is None
    b.forget("c")
    assert b.refusal("c", {}) is not None


def test_the_bounds_come_from_the_environment(monkeypatch):
    from knownote.settings import Settings

    assert (Settings().max_upload_session_mb, Settings().max_upload_total_mb) == (1024, 2048)
    monkeypatch.setenv("KNOWNOTE_MAX_UPLOAD_SESSION_MB", "40")
    monkeypatch.setenv("KNOWNOTE_MAX_UPLOAD_TOTAL_MB", "60")
    assert (Settings().max_upload_session_mb, Settings().max_upload_total_mb) == (40, 60)


def test_only_the_upload_route_asks_is_active_session():
    """knownote.ui.uploads refuses uploads inside Runtime.is_active_session, which is right
    only while nothing but the upload route calls it: this fails if a Streamlit upgrade
    changes that."""
    import streamlit

    root = Path(streamlit.__file__).parent
    callers = {
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "runtime.is_active_session(" in path.read_text(encoding="utf-8")
    }
    assert callers == {"web/server/starlette/starlette_routes.py"}
