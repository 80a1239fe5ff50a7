"""The benchmark scripts as the package they are (``benchmarks``), loaded by path or run as a
module from the clone's root: no test puts a folder of scripts first on ``sys.path``, where a
script's name would stand in for an installed package of the same name."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks.NAME``, its package loaded from this clone's ``benchmarks/`` folder."""
    if "benchmarks" not in sys.modules:
        folder = ROOT / "benchmarks"
        spec = importlib.util.spec_from_file_location(
            "benchmarks", folder / "__init__.py", submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["benchmarks"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"benchmarks.{name}")


def run_benchmark(name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m benchmarks.NAME ARGS``, run from the clone's root (``check``: a non-zero
    exit raises)."""
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *args],
        capture_output=True, text=True, check=check, timeout=300, cwd=ROOT,
    )
