"""The storage layer knows nothing of the layers above it: no import circles through the store."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "knownote"
STORAGE = {"store", "migrations", "codes", "errors"}


def knownote_imports(module: str) -> set[str]:
    """Every knownote module a module imports, at its top or inside a function."""
    found = set()
    path = PACKAGE / f"{module.replace('.', '/')}.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("knownote."):
            found.add(node.module.removeprefix("knownote."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("knownote.") for a in node.names if "knownote." in a.name}
    return found


def test_the_storage_layer_imports_only_storage():
    for module in sorted(STORAGE):
        assert knownote_imports(module) <= STORAGE, module


def test_migrations_depend_on_nothing_that_can_change():
    # A shipped migration must write what it wrote when it shipped: SQL, or a frozen copy.
    assert knownote_imports("migrations") == set()


def private_imports(module: str) -> set[str]:
    """Names starting with "_" that a module imports from another knownote module."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    return {
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("knownote")
        for alias in node.names
        if alias.name.startswith("_")
    }


def test_reading_files_shares_its_rules_by_public_names():
    # The canonical-text rules live in canonical.py; pdfpage.py and ocr.py replay them.
    readers = [p.stem for p in PACKAGE.glob("read_*.py")]
    modules = ["extract", "canonical", "sniff", "zipcheck", "pdfpage", "ocr", "scans", *readers]
    assert {m: private_imports(m) for m in modules} == {m: set() for m in modules}
    assert knownote_imports("canonical") <= {"extracted", "sections", "store"}


def test_no_two_modules_import_each_other_even_through_others():
    modules = {
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    }
    graph = {m: knownote_imports(m) & modules for m in modules}

    def circle_from(start: str) -> list[str] | None:
        path, seen = [start], set()
        stack = [iter(sorted(graph[start]))]
        while stack:
            following = next(stack[-1], None)
            if following is None:
                stack.pop()
                path.pop()
            elif following == start:
                return [*path, start]
            elif following not in seen:
                seen.add(following)
                path.append(following)
                stack.append(iter(sorted(graph[following])))
        return None

    circles = [c for m in sorted(modules) if (c := circle_from(m))]
    assert circles == []
