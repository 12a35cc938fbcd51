"""The lock (requirements/, scripts/lock): what is installed is what was locked, the app's part
needs no torch, and a change to pyproject.toml's dependencies is caught before any install."""

from __future__ import annotations

import importlib.metadata
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
REQ = ROOT / "requirements"


def pins(name: str) -> dict[str, str]:
    found = runpy.run_path(str(ROOT / "scripts" / "pins.py"))["pins"](REQ / name)
    return {canonicalize_name(package): version for package, version in found.items()}


@pytest.mark.skipif(
    bool(os.environ.get("KNOWNOTE_CANARY")), reason="the canary runs other versions on purpose"
)
def test_every_locked_package_is_installed_at_its_locked_version():
    """The suite runs on exactly what the lock says (scripts/setup --dev installed it)."""
    wanted = {**pins("dev.txt"), **pins("torch.txt")}
    installed = {
        canonicalize_name(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()
    }
    wrong = {name: (version, installed.get(name)) for name, version in wanted.items()
             if installed.get(name) != version}  # fmt: skip
    assert not wrong, f"installed versions differ from the lock (run scripts/setup --dev): {wrong}"


def test_the_apps_lock_holds_no_torch_and_the_test_tools_keep_its_versions():
    app, dev = pins("app.txt"), pins("dev.txt")
    assert not {"torch", "sentence-transformers", "transformers"} & set(app)
    assert {"sentence-transformers", "transformers", "pytest"} <= set(dev)
    assert {name: dev.get(name) for name in app} == app
    # every package with its hashes, so an install checks each file it downloads
    for name in ("app.txt", "dev.txt", "torch.txt", "uv.txt"):
        entries = re.split(r"\n(?=[A-Za-z])", (REQ / name).read_text())
        pinned = [e for e in entries if re.match(r"[A-Za-z0-9_.\-]+==", e)]
        assert pinned and all("--hash=sha256:" in e for e in pinned), name


def test_the_lock_was_made_from_pyproject_as_it_is():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lockcheck.py")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_dependency_changed_without_a_new_lock_is_refused(tmp_path):
    for part in ("scripts", "requirements"):
        shutil.copytree(ROOT / part, tmp_path / part)
    text = (ROOT / "pyproject.toml").read_text()
    changed = text.replace('"genanki>=0.13,<1",', '"genanki>=0.13,<1",\n    "rich>=13",')
    assert changed != text
    (tmp_path / "pyproject.toml").write_text(changed)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "scripts" / "lockcheck.py")], capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Run scripts/lock" in done.stderr and "requirements/app.txt" in done.stderr
    # A change outside the dependencies (a linter's setting) needs no new lock.
    (tmp_path / "pyproject.toml").write_text(text.replace("line-length = 100", "line-length = 99"))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "scripts" / "lockcheck.py")], capture_output=True
    )
    assert done.returncode == 0


def test_the_setup_refuses_a_stale_lock_before_installing_anything(tmp_path):
    for part in ("scripts", "requirements"):
        shutil.copytree(ROOT / part, tmp_path / part)
    text = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text.replace('"fsrs>=6,<7"', '"fsrs>=6,<8"'))
    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "setup")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "Run scripts/lock" in done.stderr
    assert not (tmp_path / ".venv").exists()
