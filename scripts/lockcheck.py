"""Whether the lock in requirements/ was made from pyproject.toml's dependencies as they are now.

    python3 scripts/lockcheck.py          exit 0 if every lock matches, else 1 and what to run
    python3 scripts/lockcheck.py --key    print the key scripts/lock writes into each lock

The key is a hash of what the lock was resolved from: the project's Python range, its
dependencies and extras, and the overrides file. A change to anything else in pyproject.toml
(ruff or pytest settings) needs no new lock.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ("app.txt", "dev.txt", "torch.txt")
MARK = "# pyproject key: "


def key() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    inputs = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
        "overrides": (ROOT / "requirements" / "app-overrides.txt").read_text(),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def main() -> int:
    if sys.argv[1:] == ["--key"]:
        print(key())
        return 0
    want, stale = key(), []
    for name in LOCKS:
        path = ROOT / "requirements" / name
        first = path.read_text().splitlines()[:1] if path.exists() else []
        if first != [MARK + want]:
            stale.append(name)
    if stale:
        print(
            f"The lock ({', '.join('requirements/' + n for n in stale)}) was not made from "
            "pyproject.toml's dependencies as they are now. Run scripts/lock to make it again "
            "(see docs/development.md), then commit both.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
