"""A failure whose source pytest cannot parse is printed, and the tests after it still run
(tests/tracebacks.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The module makes ast.parse fail on its own source as CPython 3.11.7 sometimes does
# (python/cpython#106905), for as long as the run lasts, so pytest meets it while it formats
# the failure.
FAILING = """
import ast

_parse = ast.parse

def _broken(source, *args, **kwargs):
    if "def test_fails" in str(source):
        raise SystemError("AST constructor recursion depth mismatch (before=123, after=141)")
    return _parse(source, *args, **kwargs)

ast.parse = _broken

def test_fails():
    value = {"timeout": 5}
    assert value["timeout"] == 6

def test_after_the_failure_runs():
    assert True
"""


def test_a_failure_pytest_cannot_parse_is_reported_and_the_run_goes_on(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_broken_parse=FAILING)
    result = pytester.runpytest_subprocess("-p", "tests.tracebacks", "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out
    result.assert_outcomes(passed=1, failed=1)
    assert "assert 5 == 6" in out


def test_without_the_plugin_the_same_failure_stops_the_run(pytester, monkeypatch):
    """What the plugin is for: the test above is not passing by luck."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_broken_parse=FAILING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "INTERNALERROR" in result.stdout.str() + result.stderr.str()
