"""The lock, constraints.txt: every package setup.sh installs, pinned, and this environment
made from it.

A lock that pinned torch and Ray only let a new machine install whatever the registry served
that day (a transformers that needed a package the tests' environment never had), while the
machine the tests ran on kept older versions and passed. These tests hold the lock to
pyproject.toml (every dependency and extra pinned, within its range; every package they pull
in pinned too) and, in the clone's own ``.venv`` (what setup.sh and CI make), the installed
versions to the lock: a stale environment fails here instead of passing by luck.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints.txt"
SETUP_LOCK = ROOT / ".venv" / "attnlab-constraints.txt"  # the lock with a kept torch
EXTRAS = ("test", "cluster")  # what setup.sh installs


def pins(text: str) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line (comments and ``# via`` skipped)."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if match:
            found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + [r for extra in project["optional-dependencies"].values()
                                        for r in extra]
    return [Requirement(r) for r in listed]


def test_the_lock_pins_every_dependency_and_extra_within_its_range():
    locked = pins(LOCK.read_text(encoding="utf-8"))
    for requirement in project_requirements():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in the lock: run bash scripts/lock.sh"
        assert requirement.specifier.contains(Version(locked[name]), prereleases=True), \
            f"the lock's {name}=={locked[name]} is outside pyproject.toml's {requirement}"


def test_the_lock_keeps_the_torch_pin_of_constraints_in():
    wanted = pins((ROOT / "constraints.in").read_text(encoding="utf-8"))
    locked = pins(LOCK.read_text(encoding="utf-8"))
    assert wanted["torch"] == locked["torch"] == "2.13.0"  # no local label: the index's choice
    assert "bash scripts/lock.sh" in LOCK.read_text(encoding="utf-8")  # how to make it again


def test_pins_reads_the_compiled_form():
    text = "#\n# by the following command:\nFoo_Bar==1.2\n    # via attnlab\ntorch==2.13.0+cpu\n"
    assert pins(text) == {"foo-bar": "1.2", "torch": "2.13.0+cpu"}


def installed_closure(root: str, extras: tuple[str, ...]) -> dict[str, str]:
    """``name -> installed version`` of every distribution ``root[extras]`` needs in this
    environment, followed through each one's own requirements (markers evaluated here)."""
    found: dict[str, str] = {}
    todo = [(root, extras)]
    while todo:
        name, wanted = todo.pop()
        dist = importlib.metadata.distribution(name)
        for line in dist.requires or []:
            requirement = Requirement(line)
            marker, here = requirement.marker, default_environment()
            if marker is not None and not any(marker.evaluate({**here, "extra": extra})
                                              for extra in wanted or ("",)):
                continue
            key = canonicalize_name(requirement.name)
            if key not in found:
                found[key] = importlib.metadata.version(requirement.name)
                todo.append((requirement.name, tuple(requirement.extras)))
    return found


@pytest.mark.skipif(Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
                    reason="not the clone's .venv, which setup.sh makes from the lock")
def test_this_environment_is_the_lock():
    lock = SETUP_LOCK if SETUP_LOCK.is_file() else LOCK  # setup.sh kept a torch: its pin
    locked = pins(lock.read_text(encoding="utf-8"))
    local = re.compile(r"\+[A-Za-z0-9.]+$")  # 2.13.0+cpu is the lock's 2.13.0
    for name, version in installed_closure("attnlab", EXTRAS).items():
        assert name in locked, \
            f"{name} {version} is installed but not locked: run bash scripts/lock.sh"
        assert local.sub("", version) == local.sub("", locked[name]), (
            f"{name} is {version} here and {locked[name]} in {lock.name}: run bash "
            "scripts/setup.sh (or, to move the lock, bash scripts/lock.sh)")
