"""No word of how attnlab was built in anything a user reads: the README, CONTRIBUTING,
CHANGELOG, every page under docs/, every command's ``--help``, the texts the report prints
about each experiment, and a report rendered by ``attnlab reproduce``.

A user reads these on their own machine, so a page may not speak of the people or machines
that made the project (their machines, their shared folder, their working notes), nor cite a
document the user does not have (a spec's sections, numbered issues).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from attnlab.cli.main import build_parser
from attnlab.cli.main import main as cli_main

ROOT = Path(__file__).resolve().parents[1]

# (pattern, what it says about the project's making); case-insensitive unless (?-i:) says so
PHRASES = [
    (r"maintainers?'? (?:own )?machines?", "the machines attnlab is developed on"),
    (r"\bmaintainers?\b", "who builds the project"),
    (r"(?-i:\bSPEC\b)|§\s*\d", "a specification the user does not have"),
    (r"\bthe spec(?:'s)?\b", "a specification the user does not have"),
    (r"\bissues?\s*#?\d+", "a numbered issue of the project's tracker"),
    (r"\bthis (?:shared|quiet) (?:\d-core )?machine|\ba shared (?:\d-core )?machine",
     "the machine it was built on"),
    (r"\b\d+ cores shared\b|\bshared with other work\b", "the machine it was built on"),
    (r"\b(?:where it|it) ran here\b", "the machine it was built on"),
    (r"\bseparately lent\b|\blent (?:GPU )?machine", "the machines it was built on"),
    (r"\bthis project's (?:\d-core )?(?:CPU |GPU )?machines?\b", "the machines it was built on"),
    (r"\bon this CPU\b", "the CPU it was built on, unnamed (name it: a 2-core AMD EPYC)"),
    (r"\bprepared (?:GPU )?(?:checks?|script)\b|\bGPU checks, prepared\b",
     "checks made ready for the machines it was built on"),
    (r"\bbefore this work\b", "the work that built it"),
    (r"\bten (?:exercises|labs)\b", "a stale count of the exercises (there are twelve)"),
    (r"\bthis (?:project's )?sessions?\b|\bproject's sessions\b", "the sessions that built it"),
    (r"\bwe (?:built|ran|measured|found|wrote)\b", "who built the project"),
    (r"(?<![\w.])/(?:work|root)/|/home/\w+/", "a path on the machine it was built on"),
    (r"\.\./shared/", "a folder only the project's own machines have"),
]
# where a reader's own machine is meant, "this machine" is the one they are reading on only in a
# program's words (its --help, its output quoted in a code block, a report it wrote)
THIS_MACHINE = (r"\bthis machine\b", "the machine it was built on (a page means yours)")
PATTERN = re.compile("|".join(f"(?P<p{i}>{p})" for i, (p, _) in enumerate(PHRASES)), re.I)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)

# Development may name the CI's folder of the corpus (it is where .ci/run looks)
ALLOWED = {"CONTRIBUTING.md": {r"\.\./shared/"}}
GENERATED = {"commands.md", "results.md"}  # written from --help and from a report


def hits(text: str, allowed: frozenset[str] = frozenset(), this_machine: bool = True
         ) -> list[str]:
    """Every phrase of PHRASES in ``text``, as ``«match» (why)``; "this machine" too unless
    ``this_machine`` is False (a program's own words)."""
    found = []
    for m in PATTERN.finditer(text):
        i = int(m.lastgroup[1:])
        if PHRASES[i][0] not in allowed:
            found.append(f"«{m.group(0)}» ({PHRASES[i][1]})")
    if this_machine:
        found += [f"«{m.group(0)}» ({THIS_MACHINE[1]})"
                  for m in re.finditer(THIS_MACHINE[0], FENCE.sub("", text), re.I)]
    return found


def _pages() -> list[Path]:
    top = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    return top + sorted((ROOT / "docs").rglob("*.md"))


def test_the_list_finds_what_it_is_for():
    said = ("as on the maintainers' machines (SPEC §3.12, issue 27); on this shared 2-core "
            "machine, 2 cores shared with other work, where it ran here, on a separately lent "
            "machine, this session; corpus /work/shared/data or ../shared/data; on this machine")
    assert len(hits(said)) >= 11
    assert hits("the spec's budget") and hits("ATTNLAB_DATA=/root/x")
    gone = ("measured on one of this project's 2-core CPU machines; the targets are not met, and "
            "cannot be on this CPU; on this CPU it was measured slower; the prepared GPU checks; "
            "The GPU checks, prepared; this project's machines; one prepared script for a lent "
            "GPU machine; before this work 1.54x; ten exercises")
    assert len(hits(gone, this_machine=False)) == 10, hits(gone, this_machine=False)
    assert hits("on a 2-core CPU (AMD EPYC, AVX2); the GPU checks in one script; twelve "
                "exercises", this_machine=False) == []
    assert hits("```\nestimate: 3h on this machine\n```") == []  # a program's words, quoted
    assert hits("a RunSpec of the run spec; each session of a run; rows that sum to 1") == []


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_speaks_of_how_attnlab_was_built(page):
    allowed = frozenset(ALLOWED.get(page.name, ()))
    text = page.read_text(encoding="utf-8")
    found = hits(text, allowed, this_machine=page.name not in GENERATED)
    assert found == [], f"{page.relative_to(ROOT)}: " + "; ".join(found)


def _parsers(parser: argparse.ArgumentParser, name: str = "attnlab"):
    """Every parser under ``parser`` with its command line: attnlab, attnlab lab, ..."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_no_help_text_speaks_of_how_attnlab_was_built():
    helps = {name: p.format_help() for name, p in _parsers(build_parser())}
    assert len(helps) >= 12 and "attnlab lab" in helps  # every command was walked
    found = {name: hits(text, this_machine=False) for name, text in helps.items()}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_text_an_experiment_prints_speaks_of_how_attnlab_was_built():
    from attnlab.kit import registry

    def said(value: object) -> str:  # a text, or one per language
        return " ".join(value.values()) if isinstance(value, dict) else str(value)

    experiments = [registry.load(name) for name in registry.names()]
    assert len(experiments) >= 11
    found = {e.name: hits(f"{said(e.title)} {said(e.quick_changes)}", this_machine=False)
             for e in experiments}  # fmt: skip
    assert {k: v for k, v in found.items() if v} == {}


@pytest.fixture(scope="module")
def micro_reports(tmp_path_factory) -> dict[str, Path]:
    """Reports written by the command, at micro, of one experiment that needs no corpus, in
    each language (the second reuses the first one's run)."""
    root = tmp_path_factory.mktemp("report")
    out = {}
    for lang in ("en", "es"):
        out[lang] = root / lang
        argv = ["reproduce", "--profile", "micro", "--only", "params", "--out", str(out[lang]),
                "--work", str(root / "work"), "--lang", lang]  # fmt: skip
        assert cli_main(argv) == 0
    return out


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("name", ["report.md", "report.html"])
def test_no_rendered_report_speaks_of_how_attnlab_was_built(micro_reports, name, lang):
    text = (micro_reports[lang] / name).read_text(encoding="utf-8")
    assert "124" in text and "439" in text  # the report was written at all (GPT-2's count)
    assert hits(text, this_machine=False) == []


def test_the_published_sample_report_does_not_either():
    text = (ROOT / "docs" / "results" / "report.html").read_text(encoding="utf-8")
    assert hits(text, this_machine=False) == []


def _commented() -> list[Path]:
    """The files whose comments a user reads before running them: the scripts (setup.sh,
    gpu_check.sh prints its own as its usage) and the lock."""
    return [*sorted((ROOT / "scripts").glob("*.sh")), ROOT / "constraints.in",
            ROOT / "constraints.txt"]


@pytest.mark.parametrize("path", _commented(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_script_comment_speaks_of_how_attnlab_was_built(path):
    comments = "\n".join(line.strip().lstrip("#") for line in
                         path.read_text(encoding="utf-8").splitlines()
                         if line.strip().startswith("#"))
    assert comments, path  # the file has comments at all
    assert hits(comments, this_machine=False) == [], path.name
