"""The command line as documented: docs/commands.md is what scripts/commands_doc.py makes from
the parsers (every option and default), ``--version``, and ``report``'s refusals."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import attnlab
from attnlab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def _commands_doc():
    spec = importlib.util.spec_from_file_location("commands_doc",
                                                  ROOT / "scripts" / "commands_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_commands_page_is_generated_from_the_parsers():
    doc = _commands_doc()
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert page == doc.render(), "docs/commands.md is out of date: " \
        "run .venv/bin/python scripts/commands_doc.py"


def test_the_page_names_every_option_of_every_command():
    import argparse

    from attnlab.cli.main import build_parser

    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        section = page.split(f"## `attnlab {name}`\n", 1)[1].split("\n## ", 1)[0]
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in section, f"{name} {flag}"


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"attnlab {attnlab.__version__}\n"


def test_report_of_a_folder_with_no_results_is_one_line_exit_2(tmp_path, capsys):
    for out in (tmp_path / "typo", tmp_path):
        assert main(["report", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "nothing to report" in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_report_refuses_the_options_of_training(tmp_path, capsys):
    for option in (["--work", "w"], ["--jobs", "2"], ["--cluster", "ray"], ["--corpus", "c"],
                   ["--device", "cpu"], ["--extra-seeds", "0"]):
        with pytest.raises(SystemExit) as done:
            main(["report", "--out", str(tmp_path), *option])
        assert done.value.code == 2
        assert "unrecognized arguments" in capsys.readouterr().err


def test_no_help_text_points_at_a_docs_file():
    """The wheel ships no docs/: a --help that names docs/*.md points at nothing."""
    import argparse

    from attnlab.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    texts = {"attnlab": parser.format_help(),
             **{name: command.format_help() for name, command in sub.choices.items()}}
    pages = {name: re.findall(r"docs/|[\w-]+\.md\b", text.replace("report.md", ""))
             for name, text in texts.items()}  # report.md is an output, not a page
    pointing = [name for name, found in pages.items() if found]
    assert not pointing, f"--help of {pointing} names a docs file"
