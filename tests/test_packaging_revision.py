"""The code revision a result records is attnlab's own (report.provenance.code_revision): the commit
of the checkout the package is imported from, and none for a package that merely sits in
some other git repository (a venv inside the user's project)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import attnlab
from attnlab.report.provenance import code_revision

PACKAGE = Path(attnlab.__file__).resolve().parent


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's own repository with a venv inside it (ignored, as venvs are) holding a copy
    of the attnlab package, and a commit and an uncommitted change of its own."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".venv/\n")
    (tmp_path / "analysis.py").write_text("x = 1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "the user's work")
    (tmp_path / "analysis.py").write_text("x = 2\n")  # dirty
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    shutil.copy(PACKAGE / "__init__.py", site / "__init__.py")
    return site


def test_a_package_inside_another_repository_records_no_commit(project: Path):
    rev = code_revision(project)
    assert rev == {"version": attnlab.__version__, "commit": None, "dirty": None,
                   "source": "installed package"}


def test_even_when_that_repository_tracks_other_files_beside_it(project: Path):
    root = project.parents[3]
    (root / "extra.txt").write_text("tracked\n")
    _git(root, "add", "extra.txt")
    assert code_revision(project)["commit"] is None


def test_a_checkout_of_attnlab_records_its_own_commit(tmp_path: Path):
    if shutil.which("git") is None:
        pytest.skip("no git")
    package = tmp_path / "src" / "attnlab"
    package.mkdir(parents=True)
    shutil.copy(PACKAGE / "__init__.py", package / "__init__.py")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "attnlab")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert code_revision(package) == {"version": attnlab.__version__, "commit": head,
                                      "dirty": False, "source": "git checkout"}
    (package / "__init__.py").write_text("# changed\n")
    assert code_revision(package)["dirty"] is True


def test_this_package_records_this_checkout_or_nothing():
    rev = code_revision()
    assert rev["version"] == attnlab.__version__
    inside = subprocess.run(["git", "ls-files", "--error-unmatch", "__init__.py"],
                            cwd=PACKAGE, capture_output=True).returncode == 0
    assert (rev["commit"] is not None) == inside
