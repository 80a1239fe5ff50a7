"""``attnlab report``: rewrite the report from finished experiment results, running nothing.

The same as ``attnlab reproduce --report-only``: handy after ``attnlab run NAME``
for a few experiments, or to regenerate report.html after changing its template.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from attnlab.cli import reproduce
from attnlab.cli.common import add_common
from attnlab.errors import UsageError

DEFAULT_PROFILE = "quick"  # the profile of ``run`` and ``reproduce`` without --profile


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.lab.registry import PROFILES

    p = sub.add_parser(
        "report",
        help="write report.md, report.html and results.json from finished results",
        description="Collect the finished experiment results in --out and write the report; "
        "experiments not run yet are listed as skipped. Runs no experiment.",
    )
    add_common(p, list(PROFILES))
    # None: not given, so a report of another profile in --out is not silently replaced
    p.set_defaults(func=run, only=None, estimate=False, profile=None, workers=None)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    args.report_only = True
    if args.profile is None:
        args.profile = DEFAULT_PROFILE
        check_not_replacing(Path(args.out) if args.out else Path("reports") / args.profile)
    return reproduce.run(args, stdout, stderr)


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
