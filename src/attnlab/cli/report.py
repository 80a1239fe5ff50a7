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


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.cli.outputs import add_replace
    from attnlab.kit.registry import PROFILES

    p = sub.add_parser(
        "report",
        help="write report.md, report.html and results.json from finished results",
        description="Collect the finished experiment results in --out and write the report; "
        "experiments not run yet are listed as skipped. Runs no experiment. A folder with no "
        "finished result of the profile, or one holding another profile's report or results "
        "(without --replace), is refused (exit 2) and nothing is written.",
    )
    p.add_argument("--profile", choices=list(PROFILES), default=DEFAULT_PROFILE,
                   help=f"the profile whose results are read (default {DEFAULT_PROFILE})")
    p.add_argument("--seeds", type=int, default=None,
                   help="the seed count the results were made with (default: the profile's)")
    p.add_argument("--out", default=None,
                   help="folder holding the results, where the report is written (default: "
                   "reports/<profile>)")
    reproduce.add_lang(p)
    add_replace(p)
    # what reproduce reads and report does not use: runs nothing, so trains nowhere
    p.set_defaults(func=run, only=None, estimate=False, workers=None, work="runs",
                   corpus=None, jobs=1, device="cpu", cluster="local", address=None,
                   runs_per_gpu=1, extra_seeds=None)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.cli.common import check_seeds
    from attnlab.cli.outputs import check_suite_outputs

    args.report_only, args.profile = True, args.profile or DEFAULT_PROFILE
    check_suite_outputs(args)  # a file, a read-only folder, another profile's: that line first
    check_seeds(args.seeds)
    return reproduce.run(args, stdout, stderr)  # which refuses a folder of no results
