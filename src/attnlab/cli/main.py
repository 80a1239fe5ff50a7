"""Entry point of the ``attnlab`` command.

Each subcommand lives in its own module under ``attnlab.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed ``argparse.Namespace`` and returning an exit code.

Errors. A failure the user can act on is an ``attnlab.errors.AttnlabError``
(``UsageError``, ``DataError``, ``WriteError``; a diverged run): it ends in one
line on stderr. Anything else is a bug and is said to be one, in one line
naming the exception, so a bug never passes for bad input; ``-v`` prints the
traceback of either. Exit codes:

- 0  the command did what was asked;
- 1  it ran, and the outcome is a failure: a ``verify`` check failed, a run
     diverged (training stopped, or ``eval`` of a diverged run), or an
     internal error (a bug);
- 2  bad input: an argument, a config, a damaged or missing file, a file that
     could not be written;
- 130 interrupted (Ctrl-C, SIGTERM); finished work is kept;
- 141 the reader of the output went away (``attnlab params | head -1``): the
     command ends quietly, as a process stopped by SIGPIPE does, with no error line.

Language. Every command speaks English or Spanish, chosen once: ``--lang`` (after the
command, or before it: ``attnlab --lang es run ...``), else ``ATTNLAB_LANG``, else the locale;
``lab`` then falls back on the exercise's language. ``main`` finds ``--lang`` before building
the parsers (``attnlab.cli.words.prescan``), so ``--help`` and argparse's errors come out in
it too; the words are the ``cli`` catalogue's (``attnlab/i18n/cli.json``).

Called as the program (``argv`` None: the ``attnlab`` script, ``python -m
attnlab.cli.main``), ``main`` also applies the process-wide settings of
``attnlab.cli.process`` and makes SIGTERM stop the command as Ctrl-C does
(exit 130; the trainer checkpoints first, the worker pool ends its workers);
called with an argument list (tests, a program embedding attnlab) it leaves the
process alone.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import traceback

from attnlab import __version__
from attnlab.errors import AttnlabError, first_line

# Subcommand modules, in the order `attnlab --help` lists them.
SUBCOMMANDS = [
    "verify",
    "params",
    "train",
    "evaluate",
    "generate",
    "run",
    "reproduce",
    "report",
    "explore",
    "heads",
    "lab",
]

def build_parser(lang: str | None = None) -> argparse.ArgumentParser:
    """Every parser of ``attnlab``, its help and its errors in ``lang`` (default: as
    ``attnlab.i18n.resolve_lang`` chooses)."""
    from attnlab.cli.words import localise, parser_class, words

    say = words(lang)
    parser = parser_class(say)(prog="attnlab", description=say("main.description"),
                               add_help=False)
    localise(parser, say)
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}",
                        help=say("main.version"))
    parser.add_argument("-v", "--verbose", action="store_true", help=say("main.verbose"))
    # its own dest: a command's --lang (default None) would overwrite it; main merges them
    parser.add_argument("--lang", dest="lang_first", choices=["en", "es"], default=None,
                        help=say("main.lang"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=type(parser))
    sub.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"attnlab.cli.{name}").register(sub, say.lang)
    return parser


def main(argv: list[str] | None = None) -> int:
    from attnlab.cli.words import prescan, words

    if argv is None:
        from attnlab.cli.process import configure_process

        configure_process()
        signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: stop, keep finished work
    parser = build_parser(prescan(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if getattr(args, "lang", None) is None:  # `attnlab --lang es run ...`: chosen once
        args.lang = args.lang_first
    say = words(args.lang)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    own, level = logging.getLogger("attnlab"), logging.getLogger("attnlab").level
    if args.verbose:  # attnlab's own debug lines, not every library's (matplotlib's fonts)
        own.setLevel(logging.DEBUG)
    from attnlab.i18n.logs import speak

    speak(say.lang)  # the library's log lines in the command's language
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader gone (`| head`) is found here, not at the exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt as err:
        msg = str(err) or say("main.interrupted")
        print(f"attnlab: {msg}", file=sys.stderr)
        return 130
    except AttnlabError as err:
        from attnlab.i18n.logs import said

        return _report(err, args.verbose, say("main.error"), getattr(err, "exit_code", 2),
                       first_line(said(err, say.lang)))
    except Exception as err:  # noqa: BLE001 - a bug: said to be one, in one line
        line = f"{type(err).__name__}: {first_line(err)}"
        hint = "" if args.verbose else say("main.traceback_hint")
        return _report(err, args.verbose, say("main.internal_error"), 1, line + hint)
    finally:
        own.setLevel(level)  # a caller's (a test's) logging as it was


def _reader_gone() -> int:
    """Exit 141, quietly: stdout's reader stopped reading. Stdout is pointed at nothing
    first, as the interpreter flushes it again at exit (and would say so)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (a caller's buffer): nothing to flush
        pass
    return 141


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _report(err: BaseException, verbose: bool, kind: str, code: int,
            line: str | None = None) -> int:
    if verbose:
        traceback.print_exception(err, file=sys.stderr)
    print(f"attnlab: {kind}: {line or first_line(err)}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
