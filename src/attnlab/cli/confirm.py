"""Asked first: ``run`` and ``reproduce`` above ``CONFIRM_RUNS`` runs to train.

``run recurrence --profile micro --seeds 1000`` plans about 3,000 runs: hours of
work started by a typo. Above ``CONFIRM_RUNS`` pending runs (those not finished
in ``--work``), the command asks at a terminal, and with no terminal (CI, a pipe,
a batch job) refuses in one line, saying how many runs and how to start them
anyway (``--yes``) or see how long they would take (``reproduce --estimate``). The
extra-seed round is not counted: whether it runs depends on verdicts not known yet.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from attnlab.cli.words import Words, lang_of
from attnlab.errors import UsageError

CONFIRM_RUNS = 200  # pending runs a command starts without asking


def add_yes(p: argparse.ArgumentParser, say: Words | None = None) -> None:
    p.add_argument("--yes", action="store_true",
                   help=(say or Words("en"))("confirm.yes", runs=CONFIRM_RUNS))


def estimate_command(args: argparse.Namespace, only: str | None) -> str:
    """The ``reproduce --estimate`` that times the same runs."""
    parts = ["attnlab reproduce", f"--profile {args.profile}"]
    if only:
        parts.append(f"--only {only}")
    if args.seeds is not None:
        parts.append(f"--seeds {args.seeds}")
    return " ".join([*parts, "--estimate"])


def confirm_runs(pending: int, args: argparse.Namespace, only: str | None = None, *,
                 stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
    """Return if ``pending`` runs may start: at most ``CONFIRM_RUNS``, ``--yes``, or a yes
    typed at the terminal. Else a ``UsageError``: one line, exit 2, nothing started."""
    if pending <= CONFIRM_RUNS or getattr(args, "yes", False):
        return
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    say = lang_of(args)
    what = say("confirm.what", pending=say.count(pending), runs=CONFIRM_RUNS,
               command=estimate_command(args, only))
    if stdin is None or stdin.closed or not stdin.isatty():
        raise UsageError(say("confirm.refused", what=what))
    stderr.write(say("confirm.ask", what=what))
    stderr.flush()
    if stdin.readline().strip().lower() not in say("confirm.yes_words").split():
        raise UsageError(say("confirm.not_started", pending=say.count(pending)))
