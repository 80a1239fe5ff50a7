"""scripts/setup.sh keeps a torch it finds: with torch in .venv, its second pip call is
constrained to that torch (not the lock's pin, constraints.txt's), and no call installs torch. The
script runs against a stand-in .venv/bin/python that records every pip call (no install)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STUB = """#!/usr/bin/env bash
# a stand-in interpreter: torch {torch}; pip calls are recorded, not run
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "$(dirname "$0")/pip-calls"; exit 0; fi
if [ "$1" = "-c" ]; then
    case "$2" in
        *print*) echo "{torch}" ;;
        *) [ -n "{torch}" ] || exit 1 ;;
    esac
fi
"""


def _setup(tmp_path: Path, torch: str) -> tuple[str, list[str]]:
    if not Path("/usr/bin/chromium").exists() or not shutil.which("bwrap"):
        pytest.skip("setup.sh would try to install chromium or bubblewrap here")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(ROOT / "constraints.txt", tmp_path / "constraints.txt")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STUB.format(torch=torch))
    python.chmod(0o755)
    done = subprocess.run(["bash", "scripts/setup.sh"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / ".venv" / "bin" / "pip-calls").read_text().splitlines()
    return done.stdout, calls


def test_a_torch_in_the_venv_is_kept(tmp_path):
    out, calls = _setup(tmp_path, "2.5.1+cu121")
    assert "keeping torch 2.5.1+cu121" in out
    assert len(calls) == 1 and "-e .[test,cluster]" in calls[0]  # no torch install of its own
    constraints = (tmp_path / ".venv" / "attnlab-constraints.txt").read_text().splitlines()
    assert "torch==2.5.1+cu121" in constraints
    assert [c for c in constraints if c.startswith("torch")] == ["torch==2.5.1+cu121"]
    assert "attnlab-constraints.txt" in calls[0]


def test_without_torch_the_pin_installs_it(tmp_path):
    _, calls = _setup(tmp_path, "")
    assert len(calls) == 2
    assert calls[0].endswith("-c constraints.txt torch")
    assert "-c constraints.txt -e .[test,cluster]" in calls[1]
