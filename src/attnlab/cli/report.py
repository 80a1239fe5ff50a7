"""``attnlab report``: rewrite the report from finished experiment results, running nothing.

The same as ``attnlab reproduce --report-only``: handy after ``attnlab run NAME``
for a few experiments, or to regenerate report.html after changing its template.
It takes only the options that choose which results are read (``--profile``,
``--seeds``, ``--out``); the options of training (``--work``, ``--jobs``, the
cluster's ...) are not offered. A folder with no finished result of that profile
and seed count (a typo in ``--out``) is one line and exit 2, and nothing is written; so is
a folder holding another profile's report or results (``attnlab.cli.outputs``: one folder
holds one profile), unless ``--replace`` is given.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from attnlab.cli import reproduce

DEFAULT_PROFILE = "quick"  # the profile of ``run`` and ``reproduce`` without --profile


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    from attnlab.cli.outputs import add_replace
    from attnlab.cli.words import new_parser, words
    from attnlab.kit.registry import PROFILES

    say = words(lang)
    p = new_parser(sub, "report", say, help=say("report.help"),
                   description=say("report.description"))
    p.add_argument("--profile", choices=list(PROFILES), default=DEFAULT_PROFILE,
                   help=say("report.profile", default=DEFAULT_PROFILE))
    p.add_argument("--seeds", type=int, default=None, help=say("report.seeds"))
    p.add_argument("--out", default=None, help=say("report.out"))
    reproduce.add_lang(p, say)
    add_replace(p, say)
    # what reproduce reads and report does not use: runs nothing, so trains nowhere
    p.set_defaults(func=run, only=None, estimate=False, workers=None, work="runs",
                   corpus=None, jobs=1, device="cpu", cluster="local", address=None,
                   runs_per_gpu=1, extra_seeds=None)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.cli.common import check_seeds
    from attnlab.cli.outputs import check_suite_outputs
    from attnlab.cli.words import lang_of

    args.report_only, args.profile = True, args.profile or DEFAULT_PROFILE
    check_suite_outputs(args)  # a file, a read-only folder, another profile's: that line first
    check_seeds(args.seeds, 0, lang_of(args))
    return reproduce.run(args, stdout, stderr)  # which refuses a folder of no results
