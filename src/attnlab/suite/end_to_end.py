"""The suite run end to end: ``reproduce`` (the steps of ``attnlab.suite.pipeline`` for every
selected experiment, then the report) and what it returns, ``SuiteOutcome``; ``estimate``
(the same plan, timed) and ``run_experiment`` (one experiment, no claims).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.kit import registry
from attnlab.kit.envelope import ENVELOPE, status_of
from attnlab.kit.extra_seeds import grown, resolve_extra_seeds
from attnlab.kit.registry import Experiment, seeds_of
from attnlab.running.runner import Runner
from attnlab.suite.pipeline import Suite, check_args, corpus_problem


@dataclass(frozen=True)
class SuiteOutcome:
    """What one ``reproduce`` made: the report's files, every envelope in registry order,
    the verdicts and the run's metadata."""

    paths: dict[str, Path]  # report files: md, html, json
    envelopes: dict[str, dict]
    verdicts: list[dict]
    meta: dict[str, Any]
    extra_round_now: dict[str, list[str]]  # experiment -> the claims that called, this call

    @property
    def extra_round(self) -> dict[str, list[str]]:
        """Experiment -> the claims that called for its extra round, this call or an
        earlier one whose envelope was reused."""
        return grown(self.envelopes)

    def named(self, status: str) -> list[str]:
        return [n for n, e in self.envelopes.items() if status_of(e) == status]

    @property
    def failed(self) -> list[str]:
        return self.named("failed")

    @property
    def skipped(self) -> list[str]:
        return self.named("skipped")

    @property
    def errors(self) -> list[str]:
        """The claims whose predicate raised."""
        return [v["id"] for v in self.verdicts if v["status"] == "error"]

    @property
    def ok(self) -> bool:
        """No experiment failed and no claim is an error (the command's exit 0)."""
        return not self.failed and not self.errors


def reproduce(runner: Runner, out: str | Path, profile: str, *, seeds: int | None = None,
              only: Iterable[str] | None = None, report_only: bool = False,
              extra_seeds: int | None = None, lang: str | None = None) -> SuiteOutcome:
    """Run the suite (or the ``only`` experiments) on ``runner`` and write the report into
    ``out`` (in ``lang``, English or Spanish; None: ``ATTNLAB_LANG``, the locale, then
    English).

    The runner says where runs live and train (its work folder, device, corpus, precision,
    executor: ``--jobs`` local workers or a cluster) and where progress goes. ``seeds``
    replaces every training experiment's seed count (None: the profile's);
    ``extra_seeds`` is the size of the one extra round for experiments left with an
    inconclusive training claim (0: off; None: the profile's, ``default_extra_seeds``).
    ``report_only`` runs nothing: it rewrites the report from the results already finished
    in ``out`` (with this profile and seeds, grown by any extra round); the others are
    skipped.

    Progress: ``{"kind": "experiment", "index", "total", "name", "event", ...}`` (event:
    start, done, skipped, failed), ``{"kind": "suite", "event": "plan" | "train" | "extra",
    ...}`` and the trainer's own progress dicts.
    """
    from attnlab.report.provenance import collect_meta, rerendered
    from attnlab.report.write import write_report

    check_args(profile, seeds)
    extra_seeds = resolve_extra_seeds(extra_seeds, profile)
    names, out = registry.select(None if only is None else list(only)), Path(out)
    started_at, start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.perf_counter()
    suite = Suite.of(runner, out, profile, seeds, names)
    if not report_only:
        suite.ctx  # noqa: B018 - a device that does not resolve is one line, up front
    corpus_reason, corpus_status = None, "not needed"
    if report_only:
        corpus_status = "not used (report only)"
    elif any(e.needs_corpus for e in suite.experiments.values()):
        corpus_reason, corpus_status = corpus_problem(runner.corpus)

    def skip(exp: Experiment) -> tuple[str, str] | None:
        if report_only:
            return "skipped", (f"report only: no finished {profile} result at "
                               f"{out / exp.name / ENVELOPE}")
        if exp.needs_corpus and corpus_reason is not None:
            return "skipped", f"corpus unavailable: {corpus_reason}"
        return None

    wanted = suite.wanted(None if report_only else extra_seeds, skip)  # report only: any round
    if wanted:
        suite.emit({"kind": "suite", "event": "plan", "experiments": list(wanted)})
    plans = suite.plan(wanted)
    t0 = time.perf_counter()
    suite.train(plans)
    phases = {"train": time.perf_counter() - t0}
    suite.analyse(plans, names)
    phases["analyse"] = time.perf_counter() - t0 - phases["train"]

    verdicts = suite.verdicts()
    due: dict[str, list[str]] = {}
    if not report_only:
        t1 = time.perf_counter()
        due = suite.extra_round(verdicts, extra_seeds)
        if due:  # the grown experiments' claims, decided again on all their seeds
            verdicts = suite.verdicts()
            phases["extra seeds"] = time.perf_counter() - t1
    envelopes = suite.envelopes
    meta = collect_meta(profile, seeds, corpus=runner.corpus, corpus_status=corpus_status,
                        only=None if only is None else names, started_at=started_at,
                        wall_s=time.perf_counter() - start, phases=phases,
                        extra_seeds=extra_seeds, extra_round=grown(envelopes))
    meta["machine"].update(runner.executor.where())  # its workers (a cluster: its nodes)
    meta["machine"]["precision"] = runner.precision_used()
    if report_only:  # the times to state are the run's that made the records, not this call's
        meta = rerendered(meta, out)
    paths = write_report(envelopes, verdicts, out, meta, lang=lang)
    return SuiteOutcome(paths, envelopes, verdicts, meta, due)


def estimate(profile: str, seeds: int | None, runner: Runner, *, only: list[str] | None = None,
             extra_seeds: int = 0) -> Any:
    """How long the training of ``reproduce`` should take here: the same plan, its pending
    runs timed (``attnlab.suite.forecast``)."""
    from attnlab.suite.forecast import estimate_plans, finished_runs

    suite = Suite.of(runner, Path("."), profile, seeds, registry.select(only))
    no_corpus = corpus_problem(runner.corpus)[0]
    skipped = {name: f"corpus unavailable: {no_corpus}" for name, exp in
               suite.experiments.items() if exp.needs_corpus and no_corpus is not None}
    wanted = {name: exp.settings(profile, seeds) for name, exp in suite.experiments.items()
              if name not in skipped}  # reproduce skips those too, and both say so
    plans = suite.plan(wanted)
    pending = {name: runner.pending(p.specs) for name, p in plans.items()}
    planned = {name: n for name, p in plans.items() if (n := seeds_of(p.settings)) is not None}
    return estimate_plans(profile, pending, runner, seeds=planned, extra_seeds=extra_seeds,
                          skipped=skipped,
                          finished=finished_runs({n: suite.experiments[n] for n in wanted},
                                                 runner, extra_seeds))


def run_experiment(name: str, profile: str, runner: Runner, out: Path,
                   seeds: int | None = None, extra_seeds: int | None = None) -> dict[str, Any]:
    """One experiment through the pipeline (or its finished envelope, one grown by
    ``extra_seeds`` included); its envelope. No claims and no extra round (``attnlab run``
    adds them); a failure raises."""
    suite = Suite(runner, Path(out), profile, seeds, {name: registry.load(name)}, strict=True)
    plans = suite.plan(suite.wanted(extra_seeds))
    suite.train(plans)
    suite.analyse(plans, [name])
    return suite.envelopes[name]
