"""``attnlab reproduce``: run the whole suite and write the report (docs/experiments.md,
"The report").

Finished experiments and training runs are reused, so an interrupted
``reproduce`` resumes when run again. Before running the full profile it prints
how long the training should take on this machine (``--estimate`` prints that
for any profile and stops; it leaves out the extra-seed round, and says so).
Exit code 0 when every experiment ran and every claim was decided (held, not
held and inconclusive are results), 1 when an experiment failed or a claim's
predicate raised (an error verdict).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from attnlab.cli.common import (
    SuiteProgress,
    add_common,
    build_runner,
    check_seeds,
    out_dir,
)
from attnlab.cli.confirm import confirm_runs
from attnlab.errors import DataError, UsageError
from attnlab.running.cluster import sized

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.kit.registry import PROFILES, names

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
                   + ", ".join(names()) + ")")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: rewrite the report from the results already in --out")
    p.add_argument("--estimate", action="store_true",
                   help="time a few steps of every pending run's model, print how long the "
                   "suite should take on this machine (corrected by, and checked against, "
                   "the finished runs of the cache: ratios and an error bar), and stop")
    add_lang(p)
    p.set_defaults(func=run)


def add_lang(p: argparse.ArgumentParser) -> None:
    """``--lang``: the language of report.md and report.html."""
    from attnlab.i18n import LANGS

    p.add_argument("--lang", choices=list(LANGS), default=None,
                   help="language of report.md and report.html: en (English) or es (Spanish) "
                   "(default: ATTNLAB_LANG, else the locale, else English)")


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.kit.extra_seeds import resolve_extra_seeds
    from attnlab.suite import estimate_plan, plan_suite, run_plan

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    from attnlab.cli.outputs import check_suite_outputs

    check_suite_outputs(args)  # a file or a read-only folder: one line, before any work
    check_seeds(args.seeds, args.extra_seeds)
    args.extra_seeds = resolve_extra_seeds(args.extra_seeds, args.profile)
    only = None if args.only is None else [n for n in args.only.split(",") if n.strip()]
    if only is not None and not only:
        raise UsageError("--only needs at least one experiment name")
    out = out_dir(args)
    if args.report_only:
        check_no_damaged_results(out, only, args.profile, args.seeds)
        check_some_results(out, args.profile, args.seeds)
    progress = SuiteProgress(stderr)
    runner = build_runner(args, progress)  # the one runner of this command
    estimating = getattr(args, "estimate", False)
    # The one planning of this command: the estimate, the confirmation and the run read it.
    planned = plan_suite(runner, out, args.profile, seeds=args.seeds, only=only,
                         report_only=args.report_only and not estimating,
                         extra_seeds=args.extra_seeds)
    if estimating or (args.profile == "full" and not args.report_only):
        report = estimate_plan(planned, sized(runner, args.jobs))
        stdout.write(report.text() + "\n")
        stdout.flush()
        if estimating:
            return 0
    if not args.report_only:  # above CONFIRM_RUNS: asked, or refused with no terminal
        confirm_runs(planned.pending(), args, args.only)
    if getattr(args, "replace", False):  # every check has passed: the other profile's go now
        from attnlab.cli.outputs import replace_other_profiles

        replace_other_profiles(out, args.profile, stderr)
    result = run_plan(planned, lang=getattr(args, "lang", None))
    counts = ", ".join(f"{sum(v['status'] == s for v in result.verdicts)} {s}"
                       for s in ("held", "not held", "inconclusive", "skipped", "error"))
    stdout.write(f"claims: {counts}\n")
    for name in result.extra_round:  # experiments grown by the extra-seed round
        env = result.envelopes[name]
        stdout.write(f"{name}: {env['extra_round']['text']} (now {env['seeds']} seeds)\n")
    for name in result.skipped:
        stdout.write(f"skipped {name}: {result.envelopes[name]['reason']}\n")
    for name in result.failed:
        stdout.write(f"FAILED {name}: {result.envelopes[name]['reason']}\n")
    for v in result.verdicts:
        if v["status"] == "error":
            stdout.write(f"ERROR in claim {v['id']}: {v['why']}\n")
    stdout.write(f"report: {result.paths['html']} (and report.md, results.json)\n")
    stdout.flush()
    return 0 if result.ok else 1


def check_some_results(out: Path, profile: str, seeds: int | None) -> None:
    """Refuse, in one line, to write a report of nothing: ``out`` holds no finished result of
    this profile and seed count (a mistyped ``--out``, or results not made yet)."""
    from attnlab.suite import finished_records

    if finished_records(out, profile, seeds):
        return
    seeded = "" if seeds is None else f" with {seeds} seed(s)"
    where = f"{out} does not exist" if not out.exists() else \
        f"{out} holds no finished {profile} result{seeded}"
    raise UsageError(f"{where}; nothing to report: check --out and --profile, or make "
                     f"results first with `attnlab run NAME` or `attnlab reproduce`")


def check_no_damaged_results(out: Path, only: list[str] | None, profile: str,
                             seeds: int | None) -> None:
    """Refuse, in one line, to write a report while an experiment's result in ``out`` is
    damaged (truncated, say): it would be shown as not run, and the report written over
    one that had it. The line names the file and the command that makes it again."""
    from attnlab.kit import registry
    from attnlab.kit.envelope import ENVELOPE, damage

    for name in registry.select(only):
        path = out / name / ENVELOPE
        why = damage(path)
        if why is not None:
            flags = "" if profile == "quick" else f" --profile {profile}"
            flags += "" if seeds is None else f" --seeds {seeds}"
            raise DataError(f"{path} is damaged: {why}; make it again with `attnlab run "
                            f"{name}{flags} --out {out}`, then run this command again")
