"""``attnlab run NAME``: run one experiment, print its table and its claims.

The experiment plans its runs, the runner trains them (cached under
``<work>/<hash>``, on ``--jobs`` worker processes or one per GPU), and the
experiment analyses them. When a training claim is inconclusive on 3 or more
seeds, the experiment gets its one extra round of ``--extra-seeds`` seeds
(``attnlab.kit.extra_seeds``) before the claims are printed. The
record, table and figure go to ``<out>/<NAME>/`` (default ``reports/<profile>/``,
the folder ``attnlab reproduce`` uses, so a later ``reproduce`` reuses the
finished experiment). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from attnlab.cli.common import SuiteProgress, add_common, build_runner, check_seeds, out_dir
from attnlab.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    from attnlab.kit.registry import PROFILES, names

    p = sub.add_parser(
        "run",
        help="run one experiment by name; print its table and claims",
        description="Run one experiment (cached and resumable), print its Markdown table and "
        f"the claims it decides. Experiments: {', '.join(names())}.",
    )
    p.add_argument("name", metavar="NAME", help="experiment name: " + ", ".join(names()))
    add_common(p, list(PROFILES))
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.kit.claims import render
    from attnlab.kit.extra_seeds import resolve_extra_seeds
    from attnlab.kit.registry import RecordError, load, names
    from attnlab.suite import Suite, finished_records

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    from attnlab.cli.outputs import check_suite_outputs

    check_suite_outputs(args)  # a file or a read-only folder: one line, before any work
    check_seeds(args.seeds, args.extra_seeds)
    args.extra_seeds = resolve_extra_seeds(args.extra_seeds, args.profile)
    try:
        exp = load(args.name)  # a UsageError for an unknown name
    except (ImportError, RecordError) as err:
        raise UsageError(f"experiment {args.name!r} cannot be loaded: {err}") from err
    out = out_dir(args)
    if exp.needs_corpus:
        from attnlab.data.corpus import resolve_corpus

        resolve_corpus(args.corpus)  # CorpusError (a ValueError): one line, exit 2
    progress = SuiteProgress(stderr)
    suite = Suite(build_runner(args, progress), out, args.profile, args.seeds, {args.name: exp})
    suite.ctx  # noqa: B018 - a device that does not resolve is one line, up front
    plans = suite.plan(suite.wanted(args.extra_seeds))
    from attnlab.cli.confirm import confirm_runs

    confirm_runs(sum(len(suite.runner.pending(p.specs)) for p in plans.values()), args,
                 only=args.name)  # above CONFIRM_RUNS: asked, or refused with no terminal
    if getattr(args, "replace", False):  # every check has passed: the other profile's go now
        from attnlab.cli.outputs import replace_other_profiles

        replace_other_profiles(out, args.profile, stderr)
    suite.train(plans, announce=False)  # one experiment: no suite line
    suite.analyse(plans, [args.name])
    others = finished_records(out, args.profile, args.seeds, args.extra_seeds,
                              [n for n in names() if n != args.name])  # its own: the suite's
    if suite.status(args.name) == "ok":
        suite.extra_round(suite.verdicts(others), args.extra_seeds)
    envelope = suite.envelopes[args.name]  # grown by the extra round, or with its note why not
    if suite.status(args.name) == "failed":
        stderr.write(f"FAILED {args.name}: {envelope['reason']}\n")
        return 1
    verdicts = suite.verdicts(others)  # all its claims, on all its seeds
    folder = out / args.name
    stdout.write(f"# {exp.title} ({args.profile})\n\n")
    stdout.write((folder / "table.md").read_text(encoding="utf-8").rstrip() + "\n\n")
    if "extra_round" in envelope:
        stdout.write(f"Seeds: {envelope['seeds']}; {envelope['extra_round']['text']}\n\n")
    if verdicts:
        stdout.write("Claims:\n" + render(verdicts) + "\n")
    stdout.write(f"results in {folder}/ (result.json, table.md, figure.png)\n")
    stdout.flush()
    return 1 if any(v["status"] == "error" for v in verdicts) else 0
