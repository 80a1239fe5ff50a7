"""Entry point of the ``attnlab`` command.

Each subcommand lives in its own module under ``attnlab.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed ``argparse.Namespace`` and returning an exit code.

Bad input anywhere (a ``UsageError`` or ``ValueError``, a missing file) ends in
one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

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
]


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own code)
        self.exit(2, f"attnlab: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="attnlab",
        description="A laboratory for attention and the transformer block.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"attnlab.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as err:
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        print(f"attnlab: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        msg = str(err) or "interrupted (finished work is kept; run the same command to resume)"
        print(f"attnlab: {msg}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
