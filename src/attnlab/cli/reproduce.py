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
from attnlab.cli.words import Words, lang_of, new_parser, words
from attnlab.errors import DataError, UsageError
from attnlab.i18n.logs import reason_in
from attnlab.running.cluster import sized

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    from attnlab.kit.registry import PROFILES, names

    say = words(lang)
    p = new_parser(sub, "reproduce", say, help=say("reproduce.help"),
                   description=say("reproduce.description"))
    add_common(p, list(PROFILES), say)
    p.add_argument("--only", default=None, metavar="NAME,NAME",
                   help=say("reproduce.only", names=", ".join(names())))
    p.add_argument("--report-only", action="store_true", help=say("reproduce.report_only"))
    p.add_argument("--estimate", action="store_true", help=say("reproduce.estimate"))
    add_lang(p, say)
    p.set_defaults(func=run)


def add_lang(p: argparse.ArgumentParser, say: Words | None = None) -> None:
    """``--lang``: the language of report.md and report.html, and of the command's words."""
    from attnlab.cli.words import add_lang as add

    add(p, say or words(), "lang.report")


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.kit.extra_seeds import resolve_extra_seeds
    from attnlab.suite import estimate_plan, plan_suite, run_plan

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    from attnlab.cli.outputs import check_suite_outputs

    say = lang_of(args)
    check_suite_outputs(args)  # a file or a read-only folder: one line, before any work
    check_seeds(args.seeds, args.extra_seeds, say)
    args.extra_seeds = resolve_extra_seeds(args.extra_seeds, args.profile)
    only = None if args.only is None else [n for n in args.only.split(",") if n.strip()]
    if only is not None and not only:
        raise UsageError(say("reproduce.only_empty"))
    out = out_dir(args)
    if args.report_only:
        check_no_damaged_results(out, only, args.profile, args.seeds, say)
        check_some_results(out, args.profile, args.seeds, say)
    progress = SuiteProgress(stderr, say)
    runner = build_runner(args, progress)  # the one runner of this command
    estimating = getattr(args, "estimate", False)
    # The one planning of this command: the estimate, the confirmation and the run read it.
    planned = plan_suite(runner, out, args.profile, seeds=args.seeds, only=only,
                         report_only=args.report_only and not estimating,
                         extra_seeds=args.extra_seeds)
    if estimating or (args.profile == "full" and not args.report_only):
        report = estimate_plan(planned, sized(runner, args.jobs))
        stdout.write(report.text(say.lang) + "\n")
        stdout.flush()
        if estimating:
            return 0
    if not args.report_only:  # above CONFIRM_RUNS: asked, or refused with no terminal
        confirm_runs(planned.pending(), args, args.only)
    if getattr(args, "replace", False):  # every check has passed: the other profile's go now
        from attnlab.cli.outputs import replace_other_profiles

        replace_other_profiles(out, args.profile, stderr, say)
    result = run_plan(planned, lang=say.lang)
    counts = ", ".join(_count(say, s, sum(v["status"] == s for v in result.verdicts))
                       for s in ("held", "not held", "inconclusive", "skipped", "error"))
    stdout.write(say("reproduce.claims", counts=counts) + "\n")
    for name in result.extra_round:  # experiments grown by the extra-seed round
        env = result.envelopes[name]
        stdout.write(say("reproduce.extra_round", name=name, text=env["extra_round"]["text"],
                         seeds=env["seeds"]) + "\n")
    for name in result.skipped:
        stdout.write(say("reproduce.skipped", name=name,
                         reason=reason_in(result.envelopes[name], say.lang)) + "\n")
    for name in result.failed:
        stdout.write(say("run.failed", name=name,
                         reason=reason_in(result.envelopes[name], say.lang)) + "\n")
    for v in result.verdicts:
        if v["status"] == "error":
            stdout.write(say("reproduce.claim_error", id=v["id"], why=v["why"]) + "\n")
    stdout.write(say("reproduce.report", html=result.paths["html"]) + "\n")
    stdout.flush()
    return 0 if result.ok else 1


def check_some_results(out: Path, profile: str, seeds: int | None,
                       say: Words | None = None) -> None:
    """Refuse, in one line, to write a report of nothing: ``out`` holds no finished result of
    this profile and seed count (a mistyped ``--out``, or results not made yet)."""
    from attnlab.suite import finished_records

    if finished_records(out, profile, seeds):
        return
    say = say or Words("en")
    seeded = "" if seeds is None else say("reproduce.seeded", seeds=seeds)
    where = say("reproduce.no_folder", out=out) if not out.exists() else \
        say("reproduce.no_result", out=out, profile=profile, seeded=seeded)
    raise UsageError(say("reproduce.nothing", where=where))


def check_no_damaged_results(out: Path, only: list[str] | None, profile: str,
                             seeds: int | None, say: Words | None = None) -> None:
    """Refuse, in one line, to write a report while an experiment's result in ``out`` is
    damaged (truncated, say): it would be shown as not run, and the report written over
    one that had it. The line names the file and the command that makes it again."""
    from attnlab.i18n.logs import said_value
    from attnlab.kit import registry
    from attnlab.kit.envelope import ENVELOPE, damage

    say = say or Words("en")
    for name in registry.select(only):
        path = out / name / ENVELOPE
        why = damage(path)
        if why is not None:
            flags = "" if profile == "quick" else f" --profile {profile}"
            flags += "" if seeds is None else f" --seeds {seeds}"
            why = said_value(why, say.lang)  # the reason in the command's language
            raise DataError(say("reproduce.damaged", path=path, why=why, name=name,
                                flags=flags, out=out))


def _count(say: Words, status: str, n: int) -> str:
    """``2 held`` / ``1 mantenida``: the count of one verdict, its ``.one`` words for 1."""
    from attnlab.i18n import catalogue

    key = f"reproduce.count.{status.replace(' ', '_')}"
    return say(f"{key}.one" if n == 1 and f"{key}.one" in catalogue("cli") else key, count=n)
