"""The stages import in one direction: each only the stages below it, at the top or lazily.

The order is the pipeline's: a file is read, indexed and stored; a question is searched and
answered; answers are shown and measured; study cards are made from sources and answers' checks;
the pipeline drives imports and the cards' making; the UI, the MCP server,
the command line and the top-level helpers sit above everything.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "knownote"

BELOW_ANSWER = {"read", "index", "store", "search"}
# What each stage may import besides itself; `errors` and `settings` are open to every stage.
ALLOWED: dict[str, set[str]] = {
    "read": set(),
    "voice": {"read", "index"},
    "index": {"read"},
    "store": {"read", "index"},
    "search": {"read", "index", "store"},
    "answer": BELOW_ANSWER,
    "show": BELOW_ANSWER | {"answer"},
    "measure": BELOW_ANSWER | {"answer", "voice"},
    "study": BELOW_ANSWER | {"answer", "show"},
    "pipeline": BELOW_ANSWER | {"answer", "study", "voice"},
    "ui": BELOW_ANSWER | {"answer", "show", "study", "pipeline", "notebooks", "access", "voice"},
    "serve": BELOW_ANSWER | {"answer", "pipeline", "notebooks", "access", "voice"},
    "cli": BELOW_ANSWER
    | {"answer", "show", "measure", "study", "pipeline", "notebooks", "serve", "access", "voice"},
    "notebooks": {"store", "answer"},
    "access": set(),
    "settings": set(),
    "errors": set(),
}
OPEN_TO_ALL = {"errors", "settings"}


def stage_of(module: str) -> str:
    """'read' for knownote.read.pdf, 'cli' for knownote.cli."""
    return module.removeprefix("knownote.").split(".")[0]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def knownote_imports(path: Path) -> set[str]:
    """Every knownote module a file imports: at its top, inside functions, under TYPE_CHECKING."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; write knownote.… in full")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "knownote":
            if node.module == "knownote":
                found |= {f"knownote.{a.name}" for a in node.names}
            else:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "knownote"}
    return {m for m in found if m != "knownote"}


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def wrong_imports(files: dict[str, Path]) -> list[str]:
    wrong = []
    for name, path in files.items():
        own = stage_of(name)
        for imported in sorted(knownote_imports(path)):
            other = stage_of(imported)
            if other != own and other not in ALLOWED[own] | OPEN_TO_ALL:
                wrong.append(f"{name} imports {imported}")
    return wrong


def test_every_module_belongs_to_a_stage_the_order_names():
    assert {stage_of(m) for m in modules() if m != "knownote"} <= set(ALLOWED)


def test_each_stage_imports_only_the_stages_below_it():
    assert wrong_imports(modules()) == []


def test_a_wrong_import_is_found_even_inside_a_function(tmp_path):
    lazy = tmp_path / "knownote" / "read" / "lazy.py"
    lazy.parent.mkdir(parents=True)
    lazy.write_text("def f():\n    from knownote.store.db import Store\n    return Store\n")
    typed = tmp_path / "knownote" / "index" / "typed.py"
    typed.parent.mkdir(parents=True)
    typed.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import knownote.ui.chat\n"
    )
    found = wrong_imports({"knownote.read.lazy": lazy, "knownote.index.typed": typed})
    assert found == [
        "knownote.read.lazy imports knownote.store.db",
        "knownote.read.lazy imports knownote.store.db.Store",
        "knownote.index.typed imports knownote.ui.chat",
    ]


def test_errors_and_settings_import_nothing_of_the_stages():
    assert knownote_imports(PACKAGE / "errors.py") == set()
    assert {stage_of(m) for m in knownote_imports(PACKAGE / "settings.py")} <= {"errors"}


def test_the_ui_is_imported_by_app_py_alone():
    importers = [
        n
        for n, p in modules().items()
        if stage_of(n) != "ui" and any(stage_of(m) == "ui" for m in knownote_imports(p))
    ]
    assert importers == []
    assert any(stage_of(m) == "ui" for m in knownote_imports(ROOT / "app.py"))


def test_migrations_depend_on_nothing_that_can_change():
    # A shipped migration must write what it wrote when it shipped: SQL, or a frozen copy.
    assert knownote_imports(PACKAGE / "store" / "migrations.py") == set()


def private_imports(path: Path) -> set[str]:
    """Names starting with "_" that a module imports from another knownote module."""
    return {
        f"{node.module}.{alias.name}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("knownote")
        for alias in node.names
        if alias.name.startswith("_")
    }


def test_reading_files_shares_its_rules_by_public_names():
    # The canonical-text rules live in read/canonical.py; show/pdf_page.py and read/ocr.py replay
    # them.
    paths = [*sorted((PACKAGE / "read").glob("*.py")), PACKAGE / "show" / "pdf_page.py"]
    assert {p.name: private_imports(p) for p in paths} == {p.name: set() for p in paths}


def test_no_two_modules_import_each_other_even_through_others():
    files = modules()
    graph = {m: {i for i in knownote_imports(p) if i in files} for m, p in files.items()}

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

    circles = [c for m in sorted(files) if (c := circle_from(m))]
    assert circles == []


def test_at_most_twelve_modules_at_the_top_of_the_package():
    assert len(list(PACKAGE.glob("*.py"))) <= 12
