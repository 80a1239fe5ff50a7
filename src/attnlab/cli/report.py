"""``attnlab report``: rewrite the report from finished experiment results, running nothing.

The same as ``attnlab reproduce --report-only``: handy after ``attnlab run NAME``
for a few experiments, or to regenerate report.html after changing its template.
It takes only the options that choose which results are read (``--profile``,
``--seeds``, ``--out``); the options of training (``--work``, ``--jobs``, the
cluster's ...) are not offered. A folder with no finished result of that profile
and seed count (a typo in ``--out``) is one line and exit 2, and nothing is written.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from attnlab.cli import reproduce
from attnlab.errors import UsageError

DEFAULT_PROFILE = "quick"  # the profile of ``run`` and ``reproduce`` without --profile


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.lab.registry import PROFILES
    p = sub.add_parser(
        "report",
        help="write report.md, report.html and results.json from finished results",
        description="Collect the finished experiment results in --out and write the report; "
        "experiments not run yet are listed as skipped. Runs no experiment. A folder with no "
        "finished result of the profile is refused (exit 2) and nothing is written.",
    )
    p.add_argument("--profile", choices=list(PROFILES), default=None,
                   help=f"the profile whose results are read (default {DEFAULT_PROFILE}; a "
                   "folder holding another profile's report is refused without it)")
    p.add_argument("--seeds", type=int, default=None,
                   help="the seed count the results were made with (default: the profile's)")
    p.add_argument("--out", default=None,
                   help="folder holding the results, where the report is written (default: "
                   "reports/<profile>)")
    reproduce.add_lang(p)
    # what reproduce reads and report does not use: runs nothing, so trains nowhere
    p.set_defaults(func=run, only=None, estimate=False, workers=None, work="runs",
                   corpus=None, jobs=1, device="cpu", cluster="local", address=None,
                   runs_per_gpu=1, extra_seeds=None)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.cli.common import check_seeds
    from attnlab.cli.outputs import check_suite_outputs

    args.report_only = True
    if args.profile is None:
        args.profile = DEFAULT_PROFILE
        check_not_replacing(Path(args.out) if args.out else Path("reports") / args.profile)
    check_seeds(args.seeds)
    check_suite_outputs(args)  # a file or a read-only folder: that line first
    return reproduce.run(args, stdout, stderr)  # which refuses a folder of no results


def check_not_replacing(out: Path) -> None:
    """Refuse, in one line, to replace the finished report of another profile in ``out``
    with one of the default profile (whose results are usually not there: "0 finished")."""
    try:
        meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
        profile = meta["profile"]
    except (OSError, ValueError, KeyError, TypeError):  # no report there, or not ours
        return
    if not isinstance(profile, str) or profile == DEFAULT_PROFILE:
        return
    raise UsageError(
        f"{out} holds the report of profile {profile}; `report` without --profile writes one "
        f"of profile {DEFAULT_PROFILE} and would replace it: pass --profile {profile} to "
        f"rewrite it (or --profile {DEFAULT_PROFILE} to replace it)"
    )
