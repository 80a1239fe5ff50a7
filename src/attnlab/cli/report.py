"""``attnlab report``: rewrite the report from finished experiment results, running nothing.

The same as ``attnlab reproduce --report-only``: handy after ``attnlab run NAME``
for a few experiments, or to regenerate report.html after changing its template.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from attnlab.cli import reproduce
from attnlab.cli.common import add_common


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.lab.registry import PROFILES

    p = sub.add_parser(
        "report",
        help="write report.md, report.html and results.json from finished results",
        description="Collect the finished experiment results in --out and write the report; "
        "experiments not run yet are listed as skipped. Runs no experiment.",
    )
    add_common(p, list(PROFILES))
    p.set_defaults(func=run, only=None, estimate=False)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    args.report_only = True
    return reproduce.run(args, stdout, stderr)
