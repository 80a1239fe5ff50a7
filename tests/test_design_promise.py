"""docs/design.md's promise, held: an experiment is its folder and one line of the registry.

The test takes the toy experiment of "The smallest whole experiment" from the page's own
blocks, puts its files into a copy of the package with ``"toy"`` added to ``EXPERIMENTS``, and
then does what the page says: the two scripts that fill the folder's ledger and the docs page,
``attnlab run toy`` in English and ``attnlab reproduce --only toy`` in Spanish, the catalogue's
check, and the tests that read every experiment. It fails if any of them needs more, and if
the copy differs from the package in anything but the folder, the one line and what the two
scripts wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- toy: (\S+) -->\n(`{3,})\w*\n(.*?)\n\2\n", re.S)
# the tests of the copy that read every experiment (its words, ledger, records, sections)
READ_EVERY_EXPERIMENT = ["tests/test_kit_registry.py", "tests/test_claims_spanish.py",
                         "tests/test_claims_versions.py", "tests/test_i18n.py",
                         "tests/test_words_script.py", "tests/test_cli_spanish_labels.py",
                         "tests/test_docs.py::test_the_experiment_sections_are_their_folders",
                         "tests/test_docs.py::test_the_experiment_headings_code_cites_exist"]


def toy_files() -> dict[str, str]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return {name: body + "\n" for name, _, body in BLOCK.findall(text)}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The package, its scripts, docs and tests, copied; the toy's folder and line added."""
    root = tmp_path_factory.mktemp("promise")
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for part in ("src", "scripts", "docs", "tests"):
        shutil.copytree(ROOT / part, root / part, ignore=skip)
    for name in ("pyproject.toml", "README.md", "CONTRIBUTING.md"):
        shutil.copy(ROOT / name, root / name)
    folder = root / "src" / "attnlab" / "experiments" / "toy"
    folder.mkdir()
    for name, body in toy_files().items():
        (folder / name).write_text(body, encoding="utf-8")
    registry = root / "src" / "attnlab" / "kit" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    added = re.sub(r'("icl_gd")\]', r'\1, "toy"]', text, count=1)
    assert added != text, "EXPERIMENTS no longer ends in icl_gd: update this test's one line"
    registry.write_text(added, encoding="utf-8")
    return root


def run(copy: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "ATTNLAB_LANG": "", "LC_ALL": "",
           "LANG": "C.UTF-8",
           "ATTNLAB_DATA": str(Path(os.environ.get("ATTNLAB_DATA", ROOT / "data")).resolve())}
    return subprocess.run([sys.executable, *argv], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_page_gives_every_part_of_a_folder():
    assert sorted(toy_files()) == ["__init__.py", "about.md", "chapter.py", "claims.py",
                                   "measure.py", "settings.py", "view.py", "words.json"]


def test_the_toy_is_its_folder_and_one_line(copy):
    for script in ("scripts/rule_versions.py", "scripts/experiments_doc.py"):
        done = run(copy, script)
        assert done.returncode == 0, done.stderr
    before, after = tree(ROOT / "src"), tree(copy / "src")
    changed = sorted(k for k in after if before.get(k) != after[k])
    assert changed == ["attnlab/experiments/toy/" + n for n in sorted(
        [*toy_files(), "rules.json"])] + ["attnlab/kit/registry.py"], changed
    docs = [k for k, v in tree(copy / "docs").items() if tree(ROOT / "docs").get(k) != v]
    assert docs == ["experiments.md"]  # the toy's section, from its about.md
    ledger = json.loads((copy / "src/attnlab/experiments/toy/rules.json").read_text())
    assert list(ledger["claims"]) == ["toy.beats_uniform"]


def test_the_toy_runs_in_english_and_spanish(copy, tmp_path):
    work = tmp_path / "work"
    done = run(copy, "-m", "attnlab.cli.main", "run", "toy", "--profile", "micro", "--work",
               str(work), "--out", str(tmp_path / "en"), "--lang", "en")
    assert done.returncode == 0, done.stderr
    assert "# A bigram floor (micro)" in done.stdout
    assert "An embedding and a linear layer beat a uniform guess." in done.stdout
    done = run(copy, "-m", "attnlab.cli.main", "reproduce", "--only", "toy", "--profile",
               "micro", "--work", str(work), "--out", str(tmp_path / "es"), "--lang", "es")
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "es" / "report.md").read_text(encoding="utf-8")
    assert "Un suelo de bigramas" in report and "perplejidad de validación" in report
    assert "Una incrustación y una capa lineal superan a una conjetura uniforme." in report
    results = json.loads((tmp_path / "es" / "results.json").read_text(encoding="utf-8"))
    assert [v["id"] for v in results["claims"]] == ["toy.beats_uniform"]


def test_every_check_over_all_experiments_takes_the_toy(copy):
    done = run(copy, "scripts/words.py", "--check")
    assert done.returncode == 0, done.stderr
    done = run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
               *READ_EVERY_EXPERIMENT)
    assert done.returncode == 0, done.stdout[-3000:]
