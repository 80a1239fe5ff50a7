"""The package as a user gets it: an sdist and a wheel built from this tree, the wheel
installed into a fresh virtual environment, its commands run from an empty folder with no
repository around (issue 29).

The build calls setuptools' PEP 517 hooks without isolation (no index needed, seconds), the
same backend ``python -m build`` runs; the wheel is built from the unpacked sdist, as pip
builds it, so a file missing from the sdist fails here. The fresh venv has no pip and no
dependencies of its own: the wheel goes in with ``pip --python … --no-deps`` and a ``.pth``
file lends it this venv's site-packages (torch and the rest), which is what a user who
already has torch gets. The build and the checks of what it holds take about 8 s and are in
the default run; the fresh venv's commands (verify, train, run params) and the sdist's test
collection took 94 s and 17 s on 2 busy cores, so they are ``slow`` (``pytest -m slow
tests/test_packaging.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import attnlab

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
    return {**env, **extra}


def _hook(hook: str, source: Path, out: Path) -> subprocess.CompletedProcess:
    code = f"from setuptools import build_meta as b; print(b.{hook}({str(out)!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=source, env=_env(),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not a source tree")
    out = tmp_path_factory.mktemp("dist")
    egg_info = ROOT / "src" / "attnlab.egg-info"  # setuptools' by-product in the tree
    had_egg_info = egg_info.exists()
    sdist = _hook("build_sdist", ROOT, out)
    if not had_egg_info:  # on sys.path beside an editable install it is a second attnlab
        shutil.rmtree(egg_info, ignore_errors=True)
    assert sdist.returncode == 0, sdist.stderr[-2000:]
    sdist_path = out / sdist.stdout.strip().splitlines()[-1]
    unpacked = tmp_path_factory.mktemp("sdist")
    with tarfile.open(sdist_path) as tar:
        tar.extractall(unpacked, filter="data")
    source = next(unpacked.iterdir())
    wheel = _hook("build_wheel", source, out)
    assert wheel.returncode == 0, wheel.stderr[-2000:]
    return {"sdist": sdist_path, "source": source,
            "wheel": out / wheel.stdout.strip().splitlines()[-1],
            "log": Path(sdist.stderr + sdist.stdout + wheel.stderr + wheel.stdout)}


def test_build_warns_nothing(built: dict[str, Path]) -> None:
    log = str(built["log"]).lower()
    assert "deprecat" not in log and "warning" not in log, str(built["log"])[-3000:]


def test_sdist_carries_what_its_tests_and_docs_need(built: dict[str, Path]) -> None:
    source = built["source"]
    for name in ("LICENSE", "README.md", "CHANGELOG.md", "CITATION.cff", "CONTRIBUTING.md",
                 "constraints.txt", "constraints.in", "docs/commands.md", "docs/api.md",
                 "notebooks",
                 "tests/conftest.py", "tests/explorer_support.py", "tests/fault_tools.py",
                 "scripts/setup.sh", "scripts/commands_doc.py",
                 "src/attnlab/presets/tiny.toml", "src/attnlab/py.typed"):
        assert (source / name).exists(), f"sdist lacks {name}"
    for test in (ROOT / "tests").glob("*.py"):
        assert (source / "tests" / test.name).is_file(), f"sdist lacks tests/{test.name}"


def test_wheel_carries_the_license_configs_and_types(built: dict[str, Path]) -> None:
    names = zipfile.ZipFile(built["wheel"]).namelist()
    version = attnlab.__version__
    for name in ("attnlab/py.typed", "attnlab/presets/tiny.toml", "attnlab/i18n/common.json",
                 "attnlab/labs/exercises/softmax/statement.md",  # an exercise's own words
                 "attnlab/labs/exercises/softmax/statement.es.md",
                 "attnlab/labs/exercises/softmax/words.json",
                 "attnlab/experiments/ladder/words.json",  # an experiment's words, its fixture
                 "attnlab/experiments/ladder/quick_table.md",
                 f"attnlab-{version}.dist-info/licenses/LICENSE"):
        assert name in names, f"wheel lacks {name}"
    metadata = zipfile.ZipFile(built["wheel"]).read(
        f"attnlab-{version}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert f"Version: {version}" in metadata


@pytest.fixture(scope="module")
def fresh(built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "-q", str(built["wheel"])],
        capture_output=True, text=True, env=_env(), timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # torch and the other dependencies of this venv, after the fresh venv's own attnlab
    Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _attnlab(venv: Path, folder: Path, *args: str) -> subprocess.CompletedProcess:
    data = os.environ.get("ATTNLAB_DATA") or str(ROOT.parent / "shared" / "data")
    env = _env(ATTNLAB_DATA=data, HOME=str(folder), GIT_CEILING_DIRECTORIES=str(folder.parent),
               PATH=f"{venv / 'bin'}:/usr/bin:/bin")
    return subprocess.run([str(venv / "bin" / "attnlab"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_installed_wheel_runs_from_an_empty_folder(fresh: Path, tmp_path: Path) -> None:
    where = subprocess.run([str(fresh / "bin" / "python"), "-c",
                            "import attnlab; print(attnlab.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(fresh)), where.stdout  # the wheel's, not this tree's

    version = _attnlab(fresh, tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"attnlab {attnlab.__version__}"

    verify = _attnlab(fresh, tmp_path, "verify")
    assert verify.returncode == 0, verify.stdout[-2000:] + verify.stderr[-2000:]
    assert "all checks passed" in verify.stdout

    train = _attnlab(fresh, tmp_path, "train", "tiny", "--set", "train.steps=3",
                     "--set", "train.eval_every=3", "--set", "train.ckpt_every=3", "--quiet",
                     "--run-dir", "tiny-run")
    assert train.returncode == 0, train.stderr[-2000:]
    assert (tmp_path / "tiny-run").is_dir() and "held-out ppl" in train.stdout
    meta = (tmp_path / "tiny-run" / "meta.json").read_text()  # no commit of any repository
    assert '"installed package"' in meta and '"git checkout"' not in meta

    params = _attnlab(fresh, tmp_path, "run", "params", "--out", "params-report")
    assert params.returncode == 0, params.stderr[-2000:]
    assert (tmp_path / "params-report" / "params" / "result.json").is_file()

    helps = [_attnlab(fresh, tmp_path, command, "--help").stdout
             for command in ("verify", "train", "run", "reproduce", "report", "explore")]
    assert not [h for h in helps if "docs/" in h]  # the wheel has no docs/ to point at


@pytest.mark.slow
def test_the_sdist_tests_collect(built: dict[str, Path], fresh: Path) -> None:
    collect = subprocess.run(
        [str(fresh / "bin" / "python"), "-m", "pytest", "--collect-only", "-q", "-p",
         "no:cacheprovider", "tests"],
        cwd=built["source"], capture_output=True, text=True, env=_env(), timeout=600)
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-2000:]
    assert " error" not in collect.stdout.splitlines()[-1], collect.stdout[-2000:]
