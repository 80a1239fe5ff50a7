"""``attnlab lab``: the exercises on the command line (list, start, check, hint, solution,
grade, train).

``lab train DIR`` trains the learner's attention (``labs.trained_attention``) beside attnlab's:
exit 0 when they are equal within float error, 1 when they part, 2 when a needed exercise is
missing or not passing or the learner's code fails in training.

``lab check N FILE`` exits 0 when every case passes, 1 when one fails (or the function is not
written yet), 2 when the file cannot be imported, lacks the function or runs past the time
limit: each of those is one line. ``lab grade FOLDER`` checks a class (one folder per learner)
and writes a sheet (``attnlab.labs.grade``); it exits 0 once the sheet is written, whatever the
learners' results. Every sentence comes from the ``labs`` catalogue, and so does the ``--help``
of ``lab`` and its actions.

The language travels with the exercise. ``lab start --lang es`` writes a stub whose first line
is ``# attnlab-lang: es``; ``lab check`` answers in the language of that line, and ``lab hint``
and ``lab solution`` in the language of the exercise's file in the current folder (the folder
the stub tells the learner to work in), or of its stubs one folder down when they agree.
``--lang`` wins over the file; without either, ``ATTNLAB_LANG``, then the locale, then English
(``attnlab.i18n.resolve_lang``). The help is written in the language ``attnlab.cli.main``
chose before building the parsers (``--lang``, else ``ATTNLAB_LANG``, else the locale's);
``--lang`` goes before the action too (``lab --lang es list``). argparse's own words (-h,
"usage:", the section titles) come from the ``cli`` catalogue, as every command's do.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

from attnlab.errors import DataError, UsageError, WriteError
from attnlab.i18n.logs import reason_said

TIME_LIMIT = (1.0, 600.0)  # seconds, both included: the range of --time-limit
JOBS = (1, 16)  # learners checked at a time by lab grade, both included
STEPS = (1, 10_000)  # optimiser steps of lab train, both included
DEFAULT_STEPS = 300  # attnlab.labs.trained_attention.Budget.steps (a test keeps them equal)
PROGRESS_EVERY = 50  # steps between lab train's progress lines
# The checker's limits as attnlab.labs.sandbox sets them (a test keeps them equal), stated in
# the help without importing the checker into every command.
DEFAULT_TIME_LIMIT = 20.0  # sandbox.TIME_LIMIT
LIMITS = {"memory": 2 << 30, "processes": 16, "file": 64 << 20}  # sandbox.*_LIMIT, bytes


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    from attnlab.cli.words import new_parser, words
    from attnlab.i18n import text

    cli = words(lang)

    def say(key: str, **fields: object) -> str:
        return text("labs", f"cli.help.{key}", cli.lang, **fields)

    p = new_parser(sub, "lab", cli, help=say("lab"), description=say("description"))
    # before the action (`lab --lang es list`): as `attnlab --lang es lab list`, which
    # attnlab.cli.main merges into the action's --lang when that is not given
    p.add_argument("--lang", dest="lang_first", choices=["en", "es"], default=argparse.SUPPRESS,
                   help=cli("lang.lab"))

    seconds = _seconds(cli.lang)
    labs = p.add_subparsers(dest="lab_command", help=say("actions"), parser_class=type(p))
    labs.required = True

    def action(name: str, lang_key: str = "lang") -> argparse.ArgumentParser:
        parser = new_parser(labs, name, cli, help=say(name), description=say(name))
        parser.add_argument("--lang", choices=["en", "es"], default=None, help=say(lang_key))
        return parser

    action("list", "lang_list").set_defaults(func=run_list)
    start = action("start", "lang_start")
    start.add_argument("exercise", metavar="N", help=say("exercise"))
    start.add_argument("folder", metavar="DIR", type=Path, help=say("folder"))
    start.set_defaults(func=run_start)
    check = action("check", "lang_check")
    check.description = say("check_description", seconds=f"{DEFAULT_TIME_LIMIT:g}",
                            memory=_bytes(LIMITS["memory"]), processes=LIMITS["processes"],
                            file=_bytes(LIMITS["file"]))
    check.add_argument("exercise", metavar="N", help=say("exercise"))
    check.add_argument("file", metavar="FILE", type=Path, help=say("file"))
    low, high = TIME_LIMIT
    check.add_argument("--time-limit", type=seconds, default=None, metavar="S",
                       help=say("time_limit", low=f"{low:g}", high=f"{high:g}",
                                default=f"{DEFAULT_TIME_LIMIT:g}"))
    check.set_defaults(func=run_check)
    hint = action("hint")
    hint.add_argument("exercise", metavar="N", help=say("exercise"))
    hint.add_argument("index", metavar="K", type=int, nargs="?", default=1, help=say("index"))
    hint.set_defaults(func=run_hint)
    solution = action("solution")
    solution.add_argument("exercise", metavar="N", help=say("exercise"))
    solution.set_defaults(func=run_solution)
    grade = action("grade", "lang_grade")
    grade.description = say("grade_description", seconds=f"{DEFAULT_TIME_LIMIT:g}",
                            memory=_bytes(LIMITS["memory"]), processes=LIMITS["processes"],
                            file=_bytes(LIMITS["file"]))
    grade.add_argument("folder", metavar="FOLDER", type=Path, help=say("class_folder"))
    grade.add_argument("--out", type=Path, default=None, metavar="SHEET_DIR", help=say("out"))
    grade.add_argument("--time-limit", type=seconds, default=None, metavar="S",
                       help=say("time_limit", low=f"{low:g}", high=f"{high:g}",
                                default=f"{DEFAULT_TIME_LIMIT:g}"))
    grade.add_argument("--jobs", type=_whole_in("jobs", JOBS, cli.lang), default=1, metavar="N",
                       help=say("jobs", low=JOBS[0], high=JOBS[1]))
    grade.add_argument("--trust", action="store_true", help=say("trust"))
    grade.set_defaults(func=run_grade)
    train = action("train", "lang_train")
    train.description = say("train_description")
    train.add_argument("folder", metavar="DIR", type=Path, help=say("train_folder"))
    train.add_argument("--steps", type=_whole_in("steps", STEPS, cli.lang), default=DEFAULT_STEPS,
                       metavar="N",
                       help=say("steps", low=STEPS[0], high=STEPS[1], default=DEFAULT_STEPS))
    train.add_argument("--seed", type=int, default=0, metavar="S", help=say("seed"))
    train.add_argument("--corpus", type=Path, default=None, metavar="TEXT", help=say("corpus"))
    train.add_argument("--out", type=Path, default=None, metavar="PNG_DIR", help=say("out_png"))
    train.add_argument("--time-limit", type=seconds, default=None, metavar="S",
                       help=say("call_limit", low=f"{low:g}", high=f"{high:g}",
                                default=f"{DEFAULT_TIME_LIMIT:g}"))
    train.set_defaults(func=run_train)


def _bytes(n: int) -> str:
    """2147483648 -> "2 GiB", 67108864 -> "64 MiB"."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def _seconds(lang: str) -> Callable[[str], float]:
    """argparse ``type=`` of ``--time-limit``: a finite number of seconds in ``TIME_LIMIT``;
    out of it, one line in ``lang``."""

    def seconds(value: str) -> float:
        from attnlab.i18n import text

        low, high = TIME_LIMIT
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not low <= number <= high:  # nan and inf fail too
            shown = value if len(value) <= 30 else value[:27] + "..."
            raise argparse.ArgumentTypeError(text("labs", "cli.time_limit", lang,
                                                  low=f"{low:g}", high=f"{high:g}",
                                                  value=shown))
        return number

    return seconds


def _whole_in(key: str, bounds: tuple[int, int], lang: str) -> Callable[[str], int]:
    """argparse ``type=`` of an option taking a whole number in ``bounds``; out of them, the
    catalogue's ``cli.<key>`` line in ``lang`` (``--jobs``: JOBS, ``--steps``: STEPS)."""

    def whole(value: str) -> int:
        from attnlab.i18n import text

        low, high = bounds
        if not (value.strip().isdigit() and low <= int(value) <= high):
            shown = value if len(value) <= 30 else value[:27] + "..."
            raise argparse.ArgumentTypeError(text("labs", f"cli.{key}", lang, low=low,
                                                  high=high, value=shown))
        return int(value)

    return whole


def _exercise(key: str, lang: str):
    from attnlab.labs import get

    try:
        return get(key, lang)
    except KeyError as err:
        raise UsageError(err.args[0]) from None


def _lang_here(args: argparse.Namespace) -> str:
    """``--lang``, else the language of the exercise's stub in the current folder, else of its
    stubs one folder down (``lab start 1 ejercicios`` run from here) when they agree, else the
    default (ATTNLAB_LANG, the locale, English)."""
    from attnlab.i18n import resolve_lang
    from attnlab.labs import get
    from attnlab.labs.notebook import file_lang

    if args.lang is not None:
        return args.lang
    try:
        name = get(args.exercise).name
    except KeyError:  # named in the error, in the default language
        return resolve_lang()
    here = file_lang(Path(f"{name}.py"))
    if here is not None:
        return here
    below = {file_lang(stub) for stub in Path().glob(f"*/{name}.py")} - {None}
    return below.pop() if len(below) == 1 else resolve_lang()


def _out(text_: str) -> None:
    """Print ``text_``; a reader that stopped reading (``| head``) ends the output quietly."""
    try:
        sys.stdout.write(text_)
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        try:  # the interpreter flushes stdout again at exit: point it at nothing first
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def run_list(args: argparse.Namespace) -> int:
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs import EXERCISES
    from attnlab.labs.notebook import course_line

    lang = resolve_lang(args.lang)
    lines = [text("labs", "cli.list_header", lang)]
    for ex in EXERCISES:
        lines.append(f"{ex.number:3d}  {ex.name:11s} {ex.title(lang)}  ({ex.function})")
        lines.append(" " * 17 + course_line(ex, lang))
    _out("\n".join(lines) + "\n")
    return 0



def _locked(ex, index: int | None, lang: str) -> None:  # noqa: ANN001 - an Exercise
    """A one-line :class:`UsageError` when the class policy locks ``ex``'s solution (``index``
    None) or its hint ``index``; the policy is found as ``attnlab.labs.policy.find`` says."""
    from attnlab.i18n import text
    from attnlab.labs.policy import ALWAYS, find

    policy = find(lang)
    until = policy.locked(ex) if index is None else policy.hint_locked(ex, index)
    if until is None:
        return
    key = "cli.locked_solution" if index is None else "cli.locked_hint"
    key += "_always" if until == ALWAYS else ""
    raise UsageError(text("labs", key, lang, number=ex.number, path=policy.path,
                          date=until.isoformat(), index=index,
                          open=policy.rule(ex).open_hints, total=ex.hints))


def run_start(args: argparse.Namespace) -> int:
    from attnlab.files import staged
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs.notebook import dumps, notebook, stub_file

    lang = resolve_lang(args.lang)
    ex = _exercise(args.exercise, lang)
    folder: Path = args.folder
    stub = folder / f"{ex.name}.py"
    nb = folder / f"{ex.number:02d}_{ex.name}.ipynb"
    if folder.exists() and not folder.is_dir():
        raise UsageError(text("labs", "cli.not_a_folder", lang, path=folder))
    for path in (stub, nb):
        if path.exists():
            raise UsageError(text("labs", "cli.exists", lang, path=path))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with staged(folder) as stage:  # both files, or neither
            stage.write_text(stub.name, stub_file(ex, lang))
            stage.write_text(nb.name, dumps(notebook([ex], lang, check_lang=lang)))
    except NotADirectoryError:
        raise UsageError(text("labs", "cli.not_a_folder", lang, path=folder)) from None
    except OSError as err:  # WriteError too: a read-only folder, a full disk
        reason = reason_said(err.__cause__ or err, lang)
        raise WriteError(text("labs", "cli.cannot_write", lang, folder=folder,
                              reason=reason)) from None
    _out(text("labs", "cli.started", lang, stub=stub, notebook=nb, function=ex.function,
              number=ex.number) + "\n")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs import boundary
    from attnlab.labs.notebook import file_lang
    from attnlab.labs.sandbox import isolated

    lang = args.lang or file_lang(args.file) or resolve_lang()
    ex = _exercise(args.exercise, lang)
    if boundary.available() is None:
        print(text("labs", "unusable.no_boundary", lang), file=sys.stderr)
    result = isolated(ex, args.file, lang, args.time_limit or DEFAULT_TIME_LIMIT)
    if result.status == "unusable":
        raise DataError(result.headline)
    _out(f"{result}\n")
    return 0 if result.passed else 1


def run_hint(args: argparse.Namespace) -> int:
    from attnlab.i18n import text

    lang = _lang_here(args)
    ex = _exercise(args.exercise, lang)
    if not 1 <= args.index <= ex.hints:
        raise UsageError(text("labs", "cli.no_hint", lang, number=ex.number,
                              total=ex.hints, index=args.index))
    _locked(ex, args.index, lang)
    _out(text("labs", "cli.hint", lang, index=args.index, total=ex.hints,
              hint=text("labs", f"{ex.name}.hint{args.index}", lang)) + "\n")
    return 0


def run_solution(args: argparse.Namespace) -> int:
    from attnlab.labs.notebook import solution_file

    lang = _lang_here(args)
    ex = _exercise(args.exercise, lang)
    _locked(ex, None, lang)
    _out(solution_file(ex, lang))
    return 0


def run_grade(args: argparse.Namespace) -> int:
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs import grade
    from attnlab.labs.policy import of_class

    lang = resolve_lang(args.lang)
    out = args.out if args.out is not None else args.folder
    grade.bounded(args.folder, args.trust, lang)
    grade.learners(args.folder, args.out, lang)  # bad input named before the output is made
    policy = of_class(args.folder, lang)
    grade.writable(out, lang)

    def progress(done: int, total: int, learner: str, marks: dict) -> None:
        checked = [m for m in marks.values() if m.status != "missing"]
        print(text("labs", "grade.progress", lang, done=done, total=total,
                   learner=grade.printable(learner), checked=len(checked),
                   passed=sum(m.status == "passed" for m in checked)), file=sys.stderr)

    sheet = grade.grade(args.folder, lang, args.time_limit or DEFAULT_TIME_LIMIT, args.jobs,
                        args.out, progress, args.trust, policy)
    paths = grade.write(sheet, out)
    passed, checked = grade.summary(sheet)
    _out(text("labs", "grade.done", lang, learners=len(sheet.learners),
              exercises=len(sheet.exercises), passed=passed, checked=checked,
              files=", ".join(p.name for p in paths), folder=out) + "\n")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs import grade
    from attnlab.labs.notebook import file_lang
    from attnlab.labs.trained_attention import train

    lang = args.lang or file_lang(args.folder / "attention.py") or resolve_lang()
    if not args.folder.is_dir():
        raise UsageError(text("labs", "train.no_folder", lang, folder=args.folder))
    out = grade.writable(args.out if args.out is not None else args.folder, lang)

    def progress(step: int, steps: int, yours: float, reference: float) -> None:
        if step % PROGRESS_EVERY == 0 or step == steps:
            print(text("labs", "train.progress", lang, step=step, steps=steps,
                       yours=f"{yours:.4f}", reference=f"{reference:.4f}"), file=sys.stderr)

    report = train(args.folder, lang=lang, time_limit=args.time_limit or DEFAULT_TIME_LIMIT,
                   progress=progress, corpus=args.corpus, steps=args.steps, seed=args.seed)
    report.png = out / "train.png"
    try:
        report.figure().savefig(report.png, dpi=100)
    except OSError as err:
        raise WriteError(text("labs", "cli.cannot_write", lang, folder=out,
                              reason=reason_said(err, lang))) from None
    _out(f"{report}\n")
    return 0 if report.equal else 1
