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
from pathlib import Path
from typing import TextIO

from attnlab.cli.common import SuiteProgress, add_common, build_runner, check_seeds, out_dir
from attnlab.cli.words import add_lang, lang_of, new_parser, words
from attnlab.errors import UsageError
from attnlab.i18n.logs import reason_in, said


def register(sub: argparse._SubParsersAction, lang: str | None = None) -> None:
    from attnlab.kit.registry import PROFILES, names

    say = words(lang)
    p = new_parser(sub, "run", say, help=say("run.help"),
                   description=say("run.description", names=", ".join(names())))
    p.add_argument("name", metavar="NAME", help=say("run.name", names=", ".join(names())))
    add_common(p, list(PROFILES), say)
    add_lang(p, say, "lang.run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    from attnlab.kit.claims import render
    from attnlab.kit.extra_seeds import resolve_extra_seeds
    from attnlab.kit.registry import RecordError, load, names
    from attnlab.suite import Suite, finished_records

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    from attnlab.cli.outputs import check_suite_outputs

    say = lang_of(args)
    check_suite_outputs(args)  # a file or a read-only folder: one line, before any work
    check_seeds(args.seeds, args.extra_seeds, say)
    args.extra_seeds = resolve_extra_seeds(args.extra_seeds, args.profile)
    try:
        exp = load(args.name)  # a UsageError for an unknown name
    except (ImportError, RecordError) as err:
        raise UsageError(say("run.cannot_load", name=repr(args.name),  # the record's error too
                             error=said(err, say.lang))) from err
    out = out_dir(args)
    if exp.needs_corpus:
        from attnlab.data.corpus import resolve_corpus

        resolve_corpus(args.corpus)  # CorpusError (a ValueError): one line, exit 2
    progress = SuiteProgress(stderr, say)
    suite = Suite(build_runner(args, progress), out, args.profile, args.seeds, {args.name: exp})
    suite.ctx  # noqa: B018 - a device that does not resolve is one line, up front
    plans = suite.plan(suite.wanted(args.extra_seeds))
    from attnlab.cli.confirm import confirm_runs

    confirm_runs(sum(len(suite.runner.pending(p.specs)) for p in plans.values()), args,
                 only=args.name)  # above CONFIRM_RUNS: asked, or refused with no terminal
    if getattr(args, "replace", False):  # every check has passed: the other profile's go now
        from attnlab.cli.outputs import replace_other_profiles

        replace_other_profiles(out, args.profile, stderr, say)
    suite.train(plans, announce=False)  # one experiment: no suite line
    suite.analyse(plans, [args.name])
    others = finished_records(out, args.profile, args.seeds, args.extra_seeds,
                              [n for n in names() if n != args.name])  # its own: the suite's
    if suite.status(args.name) == "ok":
        suite.extra_round(suite.verdicts(others), args.extra_seeds)
    envelope = suite.envelopes[args.name]  # grown by the extra round, or with its note why not
    if suite.status(args.name) == "failed":
        stderr.write(say("run.failed", name=args.name, reason=reason_in(envelope, say.lang))
                     + "\n")
        return 1
    verdicts = suite.verdicts(others)  # all its claims, on all its seeds
    folder = out / args.name
    stdout.write(f"# {_title(args.name, exp.title, say.lang)} ({args.profile})\n\n")
    stdout.write(_table(args.name, folder / "table.md", say.lang) + "\n\n")
    if "extra_round" in envelope:
        stdout.write(say("run.seeds", seeds=envelope["seeds"],
                         text=envelope["extra_round"]["text"]) + "\n\n")
    if verdicts:
        stdout.write(say("run.claims") + "\n" + render(verdicts, say.lang) + "\n")
    stdout.write(say("run.results", folder=folder) + "\n")
    stdout.flush()
    return 1 if any(v["status"] == "error" for v in verdicts) else 0


def _title(name: str, title: str, lang: str) -> str:
    """The experiment's title in ``lang`` (the report's catalogue's, else its own)."""
    from attnlab.report.words import title as titled

    return titled(name, {"title": title}, lang)


def _table(name: str, path: Path, lang: str) -> str:
    """The experiment's ``table.md`` in ``lang``, as the report shows it (its words from the
    ``tables`` catalogue, its numbers in the language's convention)."""
    from attnlab.report.table_words import speak
    from attnlab.report.words import numbers

    table = path.read_text(encoding="utf-8").rstrip()
    return table if lang == "en" else numbers(speak(name, table, lang), lang)
