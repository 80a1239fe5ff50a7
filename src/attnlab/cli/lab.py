"""``attnlab lab``: the exercises on the command line (list, start, check, hint, solution).

``lab check N FILE`` exits 0 when every case passes, 1 when one fails (or the function is not
written yet), 2 when the file cannot be imported, lacks the function or runs past the time
limit: each of those is one line. Every sentence comes from the ``labs`` catalogue, in the
language of ``--lang`` (default: the locale's, then English).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.errors import DataError, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lab",
        help="exercises a learner writes, with a checker that names the mistake (en, es)",
        description="Exercises in NumPy, from softmax to a KV-cache step. Start one, fill in "
        "the function, check it: the checker lists every case and names common mistakes. "
        "Check exit codes: 0 all cases pass, 1 a case fails, 2 the file cannot be used.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lang", choices=["en", "es"], default=None,
                        help="language of the texts (default: the locale's, then English)")
    labs = p.add_subparsers(dest="lab_command", metavar="ACTION", parser_class=type(p))
    labs.required = True
    labs.add_parser("list", parents=[common], help="the exercises, in order").set_defaults(
        func=run_list)
    start = labs.add_parser("start", parents=[common],
                            help="write exercise N's stub file and notebook into DIR")
    start.add_argument("exercise", metavar="N", help="number or name of the exercise")
    start.add_argument("folder", metavar="DIR", type=Path)
    start.set_defaults(func=run_start)
    check = labs.add_parser("check", parents=[common], help="check the function in FILE")
    check.add_argument("exercise", metavar="N")
    check.add_argument("file", metavar="FILE", type=Path)
    check.add_argument("--time-limit", type=float, default=None, metavar="S",
                       help="seconds the checker gives your code (default 20)")
    check.set_defaults(func=run_check)
    hint = labs.add_parser("hint", parents=[common], help="hint K (default 1) of exercise N")
    hint.add_argument("exercise", metavar="N")
    hint.add_argument("index", metavar="K", type=int, nargs="?", default=1)
    hint.set_defaults(func=run_hint)
    solution = labs.add_parser("solution", parents=[common],
                               help="print the reference solution of exercise N")
    solution.add_argument("exercise", metavar="N")
    solution.set_defaults(func=run_solution)


def _exercise(args: argparse.Namespace):
    from attnlab.labs import get

    try:
        return get(args.exercise, args.lang)
    except KeyError as err:
        raise UsageError(err.args[0]) from None


def run_list(args: argparse.Namespace) -> int:
    from attnlab.i18n import text
    from attnlab.labs import EXERCISES

    print(text("labs", "cli.list_header", args.lang))
    for ex in EXERCISES:
        print(f"{ex.number:3d}  {ex.name:11s} {ex.title(args.lang)}  ({ex.function})")
    return 0


def run_start(args: argparse.Namespace) -> int:
    from attnlab.files import write_text
    from attnlab.i18n import resolve_lang, text
    from attnlab.labs.notebook import dumps, notebook, stub_file

    ex = _exercise(args)
    lang = resolve_lang(args.lang)
    stub = args.folder / f"{ex.name}.py"
    nb = args.folder / f"{ex.number:02d}_{ex.name}.ipynb"
    for path in (stub, nb):
        if path.exists():
            raise UsageError(text("labs", "cli.exists", args.lang, path=path))
    args.folder.mkdir(parents=True, exist_ok=True)
    write_text(stub, stub_file(ex, lang))
    write_text(nb, dumps(notebook([ex], lang, check_lang=lang)))
    print(text("labs", "cli.started", args.lang, stub=stub, notebook=nb, function=ex.function,
               number=ex.number))
    return 0


def run_check(args: argparse.Namespace) -> int:
    from attnlab.i18n import resolve_lang
    from attnlab.labs.sandbox import TIME_LIMIT, isolated

    ex = _exercise(args)
    result = isolated(ex, args.file, resolve_lang(args.lang), args.time_limit or TIME_LIMIT)
    if result.status == "unusable":
        raise DataError(result.headline)
    print(result)
    return 0 if result.passed else 1


def run_hint(args: argparse.Namespace) -> int:
    from attnlab.i18n import text

    ex = _exercise(args)
    if not 1 <= args.index <= ex.hints:
        raise UsageError(text("labs", "cli.no_hint", args.lang, number=ex.number,
                              total=ex.hints, index=args.index))
    print(text("labs", "cli.hint", args.lang, index=args.index, total=ex.hints,
               hint=text("labs", f"{ex.name}.hint{args.index}", args.lang)))
    return 0


def run_solution(args: argparse.Namespace) -> int:
    from attnlab.labs.notebook import solution_file

    print(solution_file(_exercise(args)), end="")
    return 0
