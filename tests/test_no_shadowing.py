"""No module of the clone hides an installed package or the standard library.

Python puts a script's folder first on ``sys.path`` (``python scripts/x.py``), pytest puts
``tests/`` there, and ``python -m`` puts the working folder there: every ``*.py`` file and
package in those folders becomes a top-level name that wins over an installed package of the
same name. A benchmark once called ``kernels.py`` stood in for Hugging Face's ``kernels``
package, which a newer transformers imports, and broke every Hugging Face test. This test
lists those top-level names and fails on one that an installed distribution (or the standard
library) also provides.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The folders whose entries become top-level names: the clone's root (``python -m`` from
# it), the tests (pytest), the scripts (run by path), the notebooks' folder (their kernel's
# working folder) and the benchmarks (a package run as ``python -m benchmarks.X``, whose
# folder a ``python benchmarks/x.py`` would still put first).
ON_PATH = (ROOT, ROOT / "tests", ROOT / "scripts", ROOT / "notebooks", ROOT / "benchmarks")
OWN = {"attnlab"}  # the project's own distribution (installed from src/), not a stranger


def top_level_names(folder: Path) -> set[str]:
    """The names ``import NAME`` finds in ``folder``: its modules and its regular packages."""
    names = {p.stem for p in folder.glob("*.py")}
    names |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return names - {"__init__", "conftest", "setup"}


def shadowing(folders: Iterable[Path], installed: Mapping[str, list[str]],
              stdlib: Iterable[str]) -> list[str]:
    """``folder/name`` for every top-level name of ``folders`` that an installed distribution
    (``installed``: top-level name -> distributions) or the standard library also provides."""
    stdlib = set(stdlib)
    found = []
    for folder in folders:
        for name in sorted(top_level_names(folder)):
            owners = [d for d in installed.get(name, []) if d.lower() not in OWN]
            if owners:
                found.append(f"{folder.name}/{name} (installed by {', '.join(owners)})")
            elif name in stdlib:
                found.append(f"{folder.name}/{name} (the standard library's)")
    return found


def test_no_module_of_the_clone_shadows_an_installed_package():
    found = shadowing([f for f in ON_PATH if f.is_dir()],
                      importlib.metadata.packages_distributions(), sys.stdlib_module_names)
    assert not found, f"rename these: {found}"


def test_the_check_finds_a_module_named_like_an_installed_package(tmp_path):
    (tmp_path / "kernels.py").write_text("")
    (tmp_path / "json.py").write_text("")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "__init__.py").write_text("")
    (tmp_path / "notes").mkdir()  # no __init__.py: a namespace folder, which never shadows
    installed = {"kernels": ["kernels"], "helpers": ["some-helpers"], "notes": ["notes"]}
    assert shadowing([tmp_path], installed, {"json"}) == [
        f"{tmp_path.name}/helpers (installed by some-helpers)",
        f"{tmp_path.name}/json (the standard library's)",
        f"{tmp_path.name}/kernels (installed by kernels)",
    ]


def test_the_benchmarks_are_a_package_run_as_modules():
    assert (ROOT / "benchmarks" / "__init__.py").is_file()
    for script in (ROOT / "benchmarks").glob("*.py"):
        text = script.read_text(encoding="utf-8")
        assert "sys.path.insert" not in text and "sys.path.append" not in text, script.name
        assert f"python benchmarks/{script.name}" not in text, script.name
