"""Every command in the learner's language, chosen once: ``--lang es`` (after the command,
before it, or before a ``lab`` action) or ``ATTNLAB_LANG=es`` gives a ``--help`` with no
English interface string left (every entry of ``i18n/cli.json`` whose English differs from its
Spanish, and a list of common English words), Spanish summary lines and Spanish errors; an
unknown ``--lang`` is one line, exit 2. The English help is the English of the catalogue."""

from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest

from attnlab.cli.main import build_parser
from attnlab.cli.main import main as cli_main
from attnlab.i18n import catalogue

pytestmark = pytest.mark.usefixtures("no_chosen_language")

# words an English help has and a Spanish one must not (option names, metavars, code in
# backticks and names with digits or punctuation are left out before they are looked for)
ENGLISH = {"the", "and", "of", "to", "for", "with", "when", "each", "every", "from", "this",
           "that", "is", "are", "or", "not", "by", "on", "in", "its", "their", "which",
           "where", "print", "write", "show", "help", "usage", "options", "arguments",
           "positional", "exit", "folder", "file", "seconds", "seed", "seeds", "steps",
           "model", "results", "language", "page", "only", "without"}  # not "run", "heads",
# "runs": the names of commands and of the default folder


def english_only() -> list[str]:
    """The ``cli`` catalogue's English that differs from its Spanish, cut at its first field."""
    cut = [re.split(r"\{", e["en"])[0].strip(" (,;:") for e in catalogue("cli").values()
           if e["en"] != e["es"]]
    return sorted({c for c in cut if len(c) >= 8 and not re.fullmatch(r"-[-\w]+", c)})


def commands() -> list[list[str]]:
    """Every command and subcommand: [], ["run"], ["lab", "start"], ..."""
    found = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        found.append(path)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*path, name])

    walk(build_parser("en"), [])
    return found


def call(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(list(argv))
        except SystemExit as stop:
            code = stop.code
    return code, out.getvalue(), err.getvalue()


def words_left(help_text: str) -> list[str]:
    """The common English words ``help_text`` still has, outside its usage lines and code."""
    body = help_text.split("\n\n", 1)[1] if help_text.startswith("uso:") else help_text
    body = re.sub(r"`[^`]*`", " ", body)
    left = []
    for token in body.split():
        word = token.strip(",;:.()«»\"'")
        if word.isalpha() and not word.isupper() and word.lower() in ENGLISH:
            left.append(word)
    return left


def prose(help_text: str) -> str:
    """``help_text`` from its description on, on one line, without its code in backticks and
    without the install command that ``attnlab.running.cluster`` writes into ``--cluster``'s
    help (a command, not words), behind ``uso:``."""
    from attnlab.running.cluster import INSTALL

    body = " ".join(help_text.split("\n\n", 1)[1].split()).replace(INSTALL, " ")
    return "uso:\n\n" + re.sub(r"`[^`]*`", " ", body)


def shown(strings: list[str], text: str) -> list[str]:
    """The ``strings`` that ``text`` shows, each as whole words (argparse wraps the lines)."""
    flat = " ".join(text.split())
    return [s for s in strings if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", flat)]


def test_every_command_is_walked():
    names = [" ".join(c) for c in commands()]
    assert len(names) >= 19 and "lab start" in names and "explore" in names, names


@pytest.mark.parametrize("how", ["flag", "flag_first", "environment"])
def test_every_help_speaks_spanish(how, monkeypatch):
    strings = english_only()
    assert "run one experiment by name; print its table and claims" in strings
    missed = {}
    for command in commands():
        if how == "environment":
            monkeypatch.setenv("ATTNLAB_LANG", "es")
            argv = [*command, "--help"]
        else:
            argv = ["--lang", "es", *command, "--help"] if how == "flag_first" else \
                [*command, "--lang", "es", "--help"]
        code, out, err = call(*argv)
        assert code == 0 and err == "", (argv, err)
        assert out.startswith("uso: attnlab"), out[:80]
        out = prose(out)
        left = shown(strings, out) + words_left(out)
        if left:
            missed[" ".join(command) or "attnlab"] = left
    assert missed == {}


def test_the_english_help_keeps_its_english(monkeypatch):
    monkeypatch.setenv("ATTNLAB_LANG", "es")
    code, out, _ = call("--lang", "en", "run", "--help")  # --lang wins over ATTNLAB_LANG
    assert code == 0 and out.startswith("usage: attnlab run")
    assert "show this help message and exit" in out and "positional arguments:" in out
    flat = " ".join(out.split())
    assert "run one experiment by name" not in flat  # the description, not the summary
    assert "Run one experiment (cached and resumable)" in flat
    assert words_left(out.replace("usage:", "uso:", 1))  # the word check can fail


def test_an_unknown_language_is_one_line_exit_2():
    for argv in (["run", "params", "--lang", "xx"], ["--lang", "xx", "run", "params"],
                 ["lab", "--lang", "xx", "list"], ["params", "--lang=xx"]):
        code, out, err = call(*argv)
        assert code == 2 and out == "", argv
        assert len(err.splitlines()) == 1 and err.startswith("attnlab: error: "), err
        assert "'xx'" in err and "--lang" in err


def test_argparse_errors_speak_spanish():
    code, _, err = call("--lang", "es", "run", "params", "--seeds", "0")
    assert code == 2 and len(err.splitlines()) == 1
    assert err == ("attnlab: error: argumento --seeds: debe ser un número entero en [1, 1000], "
                   "no 0 (consulta --help)\n")
    code, _, err = call("generate", "--lang", "es")
    assert code == 2 and "faltan estos argumentos obligatorios: RUN, --prompt" in err
    code, _, err = call("run", "nope", "--lang", "es", "--profile", "tiny")
    assert "opción no válida: 'tiny' (elige entre 'full', 'quick', 'micro')" in err


def test_lab_takes_lang_before_its_action():
    code, out, _ = call("lab", "--lang", "es", "list")
    assert code == 0 and out.startswith("ejercicios (attnlab lab start N DIR")
    code, out, _ = call("--lang", "es", "lab", "--lang", "en", "list")  # the innermost wins
    assert code == 0 and out.startswith("exercises (attnlab lab start N DIR")


def test_params_prints_its_table_in_spanish():
    code, out, _ = call("params", "--lang", "es")
    assert code == 0 and "| parte | atención | MLP | normas | total |" in out
    assert "proporción del MLP en los parámetros del bloque: 66.6 %" in out
    assert "477\u202f696" in out
    code, out, _ = call("params", "--preset", "gpt2-small", "--lang", "es")
    assert "recuento del modelo de attnlab" in out and "= 124\u202f439\u202f808" in out
    code, english, _ = call("params", "--preset", "gpt2-small")
    assert "attnlab model count                              = 124,439,808" in english


def test_run_params_at_micro_speaks_spanish(tmp_path):
    out_dir, work = tmp_path / "out", tmp_path / "work"
    code, out, err = call("--lang", "es", "run", "params", "--profile", "micro",
                          "--out", str(out_dir), "--work", str(work))
    assert code == 0, err
    assert out.startswith("# Dónde están los parámetros (micro)")
    assert "\nAfirmaciones:\n" in out and "| modelo | parte |" in out
    assert out.rstrip().splitlines()[-1].startswith(f"resultados en {out_dir}")
    assert "[1/1] params: Dónde están los parámetros ..." in err
    assert "[1/1] params: hecho en" in err
    for english in ("Claims:", "results in", "done in"):
        assert english not in out + err


def test_the_cluster_options_english_is_the_running_modules():
    """cli.json repeats ``add_cluster_options``'s English to say it in Spanish: they agree."""
    from attnlab.cli.common import CLUSTER_OPTIONS
    from attnlab.cli.words import Words
    from attnlab.running.cluster import INSTALL, add_cluster_options

    parser = argparse.ArgumentParser()
    add_cluster_options(parser)
    helps = {a.dest: a.help for a in parser._actions if a.dest in CLUSTER_OPTIONS}
    assert len(helps) == len(CLUSTER_OPTIONS)
    for dest, english in helps.items():
        assert Words("en")(f"cluster.{dest}", install=INSTALL) == english
