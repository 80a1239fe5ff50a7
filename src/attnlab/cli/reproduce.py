"""``attnlab reproduce``: run the whole suite and write the report (SPEC §4).

Finished experiments and training runs are reused, so an interrupted
``reproduce`` resumes when run again. Exit code 0 when every experiment ran
(claims that do not hold are results, not errors), 1 when one failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from attnlab.cli.run import SuiteProgress, add_common, check_seeds, resolve_jobs

__all__ = ["add_common", "register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.experiments.registry import EXPERIMENTS, PROFILES

    p = sub.add_parser(
        "reproduce",
        help="run every experiment and write the report (report.md, report.html, results.json)",
        description="Run the whole suite in registry order (cached, resumable) and write one "
        "report folder. Experiments that need the corpus are skipped with the reason when it "
        "is unavailable; an experiment that fails is reported and the command exits 1.",
    )
    add_common(p, list(PROFILES))
    p.add_argument("--only", default=None, metavar="NAME,NAME",
                   help="run only these experiments (comma-separated; from: "
                   + ", ".join(EXPERIMENTS) + ")")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: rewrite the report from the results already in --out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.report.suite import reproduce

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    check_seeds(args.seeds)
    only = None if args.only is None else [n for n in args.only.split(",") if n.strip()]
    if only is not None and not only:
        raise ValueError("--only needs at least one experiment name")
    out = Path(args.out) if args.out else Path("reports") / args.profile
    result = reproduce(args.profile, args.seeds, out, Path(args.work), corpus=args.corpus,
                       only=only, progress=SuiteProgress(stderr),
                       report_only=args.report_only, workers=resolve_jobs(args.jobs))
    claims = {s: sum(v["status"] == s for v in result["verdicts"])
              for s in ("held", "not held", "skipped")}
    stdout.write(
        f"claims: {claims['held']} held, {claims['not held']} not held, "
        f"{claims['skipped']} skipped\n"
    )
    for name in result["skipped"]:
        stdout.write(f"skipped {name}: {result['envelopes'][name]['reason']}\n")
    for name in result["failed"]:
        stdout.write(f"FAILED {name}: {result['envelopes'][name]['reason']}\n")
    stdout.write(f"report: {result['paths']['html']} (and report.md, results.json)\n")
    stdout.flush()
    return 0 if result["ok"] else 1
