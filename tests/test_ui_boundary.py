"""Only app.py and the views in knownote/ui import streamlit; the core never does."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_the_ui_package_and_app_import_streamlit():
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "knownote").rglob("*.py"))
        if "ui" not in path.relative_to(ROOT / "knownote").parts[:1]
        and any(name.split(".")[0] == "streamlit" for name in imported_modules(path))
    ]
    assert offenders == []


def test_the_views_do_import_streamlit():
    views = sorted((ROOT / "knownote" / "ui").glob("*.py"))
    assert any("streamlit" in imported_modules(path) for path in views)


def test_no_python_files_at_the_top_level_but_app():
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["app.py"]
