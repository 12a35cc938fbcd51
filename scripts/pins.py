"""The pinned versions of a requirements file (`name==version` lines), and which packages two
such files pin differently: `python3 scripts/pins.py LOCKED RESOLVED LABEL` (scripts/canary).
Standard library only: the canary runs it before any environment exists."""

from __future__ import annotations

import re
import sys
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^ \\\n]+)", re.M)


def pins(path: Path | str) -> dict[str, str]:
    """Each pinned package's version, by its name as written."""
    return dict(PIN.findall(Path(path).read_text()))


def main(locked_path: str, resolved_path: str, label: str) -> None:
    locked, resolved = pins(locked_path), pins(resolved_path)
    moved = sorted(n for n in set(locked) | set(resolved) if locked.get(n) != resolved.get(n))
    print(f"canary ({label}): {len(resolved)} packages, {len(moved)} differ from the lock")
    for name in moved:
        print(f"  {name}: {locked.get(name, '-')} -> {resolved.get(name, '-')}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
