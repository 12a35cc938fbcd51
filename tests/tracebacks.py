"""A pytest plugin (loaded by `-p tests.tracebacks` in pyproject.toml): every failure is printed
and the run goes on.

CPython 3.11 before 3.11.8 can raise `SystemError: AST constructor recursion depth mismatch`
from `ast.parse` (python/cpython#106905) when pytest parses a source file to show the failing
statement; pytest expects only a SyntaxError there, so the run stopped with an INTERNALERROR and
every later test was never run. Here that parse failure is a SyntaxError: pytest then shows the
failing line alone, as it does for a file it cannot parse.
"""

from __future__ import annotations

import _pytest._code.code


def _statement_range(*args, **kwargs):
    try:
        return _parse_range(*args, **kwargs)
    except SystemError as e:
        raise SyntaxError(f"pytest could not parse this source to show it ({e})") from e


_parse_range = _pytest._code.code.getstatementrange_ast
_pytest._code.code.getstatementrange_ast = _statement_range
