"""The newcomer's path: the README's two commands, its commands table against `attnlab --help`,
and every relative link (and anchor) in README.md, CONTRIBUTING.md and docs/ (docs/es/ too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attnlab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def help_commands(capsys) -> set[str]:
    """The subcommands `attnlab --help` lists."""
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    block = text.split("positional arguments:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^ {4}([a-z][\w-]*)\b", block, re.M)}


MAIN_JOB = "bash scripts/setup.sh && .venv/bin/attnlab reproduce --profile quick --out report"
TEST_COMMAND = "bash scripts/setup.sh && .venv/bin/python -m pytest"


def test_the_two_commands_open_the_readme():
    """The main job and the test command, in the README's first lines, in the words a user
    types on their own machine (no folder only CI's machines have)."""
    first = "\n".join(readme().splitlines()[:15])
    for line in (MAIN_JOB, TEST_COMMAND):
        assert f"\n{line}\n" in first


def test_ci_runs_exactly_the_readmes_test_command():
    """.ci/run names CI's corpus folder for its own machines, then runs the README's test
    command as written, as its last line."""
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]  # fmt: skip
    assert lines[-1] == TEST_COMMAND
    assert 'export ATTNLAB_DATA="${ATTNLAB_DATA:-../shared/data}"' in lines[:-1]


def test_the_readme_opens_with_a_users_path():
    """Requirements, the light install, five minutes, then the quick profile with its
    generated time, in that order, before the experiments."""
    text = readme()
    order = ["## Requirements", "## Install", "## Five minutes", "## The quick profile",
             "<!-- results:summary:begin -->", "## The experiments"]  # fmt: skip
    at = [text.index(h) for h in order]
    assert at == sorted(at)
    install = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/pip install .\n" in install and "setup.sh" not in install
    five = text.split("## Five minutes", 1)[1].split("\n## ", 1)[0]
    for cmd in ("attnlab verify", "attnlab lab start 1", "attnlab reproduce --profile micro"):
        assert cmd in five
    assert "Python 3.11" in text and "requires-python = \">=3.11\"" in (
        ROOT / "pyproject.toml").read_text()  # fmt: skip


def test_every_extra_the_pages_name_exists_and_the_default_is_light():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    named = set()
    for page in (ROOT / "README.md", ROOT / "docs" / "es" / "README.md"):
        named |= set(re.findall(r"'\.\[([a-z,]+)\]'", page.read_text(encoding="utf-8")))
    assert {"hf", "cluster", "test"} <= named and named <= set(extras)
    default = " ".join(project["dependencies"])
    for heavy in ("ray", "playwright", "transformers", "pytest"):  # labs and explorer need none
        assert heavy not in default
    assert "transformers" in " ".join(extras["test"])  # the suite still gets what it needs


def test_the_readme_is_short():
    # the front door: what, install, quick start, results in short; detail lives in docs/
    assert len(readme().splitlines()) <= 215


def test_the_commands_table_matches_attnlab_help(capsys):
    section = readme().split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    table = re.findall(r"^\| `attnlab ([a-z][\w-]*)`", section, re.M)
    listed = help_commands(capsys)
    assert len(listed) >= 9  # the parse found the commands at all
    assert sorted(table) == sorted(listed), (
        f"missing from the README: {sorted(listed - set(table))}; "
        f"stale in the README: {sorted(set(table) - listed)}")
    assert len(table) == len(set(table))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.

    >>> slug("Why divide by √d_k"), slug("Verification (`attnlab verify`)")
    ('why-divide-by-d_k', 'verification-attnlab-verify')
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file {dest.relative_to(ROOT)})")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_experiment_headings_code_cites_exist():
    """Every heading of docs/experiments.md that code, tests or scripts cite
    (``docs/experiments.md, "The ladder"``) is one, and the page keeps its own sections after
    the experiments' (whose headings their folders' about.md give)."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    cited = {" ".join(m.split()) for folder in ("src", "tests", "scripts")
             for path in (ROOT / folder).rglob("*.py")
             for m in re.findall(r'experiments\.md, "([^"]+)"', path.read_text(encoding="utf-8"))}
    assert len(cited) > 10 and not cited - set(headings), sorted(cited - set(headings))
    assert headings[-3:] == ["Claims and verdicts", "Profiles", "The report"]


def test_the_experiment_sections_are_their_folders():
    """docs/experiments.md's section of each experiment is its folder's about.md, in the
    registry's order (scripts/experiments_doc.py writes them there)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("experiments_doc",
                                                  ROOT / "scripts" / "experiments_doc.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = script.PAGE.read_text(encoding="utf-8")
    assert script.assembled(page) == page
    changed = page.replace("Ten models, each one", "Ten models, each")
    assert script.assembled(changed) == page  # the page's own copy is not the source


def test_every_name_on_the_api_page_exists():
    import importlib

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    names = set(re.findall(r"`(attnlab(?:\.\w+)+)", text))
    assert len(names) > 20  # the parse found the names at all
    missing = []
    for name in sorted(names):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                missing.append(name)
            break
    assert not missing, f"docs/api.md names what does not exist: {missing}"
