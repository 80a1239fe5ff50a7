"""The suite run end to end: ``reproduce`` (the steps of ``attnlab.suite.pipeline`` for every
selected experiment, then the report) and what it returns, ``SuiteOutcome``; ``estimate``
(the same plan, timed) and ``run_experiment`` (one experiment, no claims).

``reproduce`` is two halves, so that one planning serves everything a command does
before it trains: ``plan_suite`` makes the suite and plans it once (a ``SuitePlan``);
``attnlab reproduce`` counts that plan's pending runs to ask before starting many,
times it for ``--estimate`` (``estimate_plan``), then gives that same plan to
``run_plan``, which trains, analyses and writes the report.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.errors import Said
from attnlab.kit import registry
from attnlab.kit.envelope import ENVELOPE, status_of
from attnlab.kit.extra_seeds import grown, resolve_extra_seeds
from attnlab.kit.registry import Experiment, seeds_of
from attnlab.running.runner import Runner
from attnlab.suite.pipeline import Plan, Suite, check_args, corpus_problem


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


@dataclass(frozen=True)
class SuitePlan:
    """What one ``reproduce`` will do, planned once (``plan_suite``): its suite (each
    experiment's settings resolved, finished ones reused, the others skipped or failed
    with their reason) and the resolved runs of the rest. The count ``reproduce`` asks to
    confirm, the estimate and the run itself (``run_plan``) all read this one plan."""

    suite: Suite
    plans: dict[str, Plan]  # name -> its runs, resolved once
    wanted: list[str]  # the experiments it plans (one that could not plan has failed)
    only: list[str] | None  # the names selected by ``only`` (None: every experiment)
    report_only: bool
    extra_seeds: int
    corpus_status: str  # what the report says of the corpus
    started_at: str
    plan_s: float  # seconds the planning took (part of the run's wall time)

    def pending(self) -> int:
        """How many runs the plan would train: each experiment's runs not finished in the
        runner's work folder (the extra round left out: it depends on verdicts)."""
        runner = self.suite.runner
        return sum(len(runner.pending(p.specs)) for p in self.plans.values())

    def skipped(self) -> dict[str, str]:
        """The experiments it skips (report only, or a missing corpus), and why."""
        return {n: e["reason"] for n, e in self.suite.envelopes.items()
                if status_of(e) == "skipped"}


def reproduce(runner: Runner, out: str | Path, profile: str, *, seeds: int | None = None,
              only: Iterable[str] | None = None, report_only: bool = False,
              extra_seeds: int | None = None, lang: str | None = None) -> SuiteOutcome:
    """Run the suite (or the ``only`` experiments) on ``runner`` and write the report into
    ``out`` (in ``lang``, English or Spanish; None: ``ATTNLAB_LANG``, the locale, then
    English): ``run_plan(plan_suite(...))``.

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
    return run_plan(plan_suite(runner, out, profile, seeds=seeds, only=only,
                               report_only=report_only, extra_seeds=extra_seeds), lang=lang)


def plan_suite(runner: Runner, out: str | Path, profile: str, *, seeds: int | None = None,
               only: Iterable[str] | None = None, report_only: bool = False,
               extra_seeds: int | None = None) -> SuitePlan:
    """The first half of ``reproduce`` (same arguments): the suite made, its experiments'
    settings resolved once, finished ones reused, the rest planned and resolved. Nothing
    trains and nothing is written."""
    check_args(profile, seeds)
    extra_seeds = resolve_extra_seeds(extra_seeds, profile)
    names, out = registry.select(None if only is None else list(only)), Path(out)
    started_at, start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.perf_counter()
    suite = Suite.of(runner, out, profile, seeds, names)
    if not report_only:
        suite.ctx  # noqa: B018 - a device that does not resolve is one line, up front
    corpus_reason, corpus_status = None, Said("not needed")
    if report_only:
        corpus_status = Said("not used (report only)")
    elif any(e.needs_corpus for e in suite.experiments.values()):
        corpus_reason, corpus_status = corpus_problem(runner.corpus)

    def skip(exp: Experiment) -> tuple[str, str] | None:
        if report_only:
            return "skipped", Said("report only: no finished %s result at %s", profile,
                                   out / exp.name / ENVELOPE)
        if exp.needs_corpus and corpus_reason is not None:
            return "skipped", Said("corpus unavailable: %s", corpus_reason)
        return None

    wanted = suite.wanted(None if report_only else extra_seeds, skip)  # report only: any round
    plans = suite.plan(wanted)
    return SuitePlan(suite, plans, list(wanted), None if only is None else names,
                     report_only, extra_seeds, corpus_status, started_at,
                     time.perf_counter() - start)


def run_plan(planned: SuitePlan, *, lang: str | None = None) -> SuiteOutcome:
    """The second half of ``reproduce``: train and analyse the ``planned`` runs, decide the
    claims, run the extra round, write the report (in ``lang``)."""
    from attnlab.report.provenance import collect_meta, rerendered
    from attnlab.report.write import write_report

    suite, plans, runner = planned.suite, planned.plans, planned.suite.runner
    start = time.perf_counter()
    if planned.wanted:
        suite.emit({"kind": "suite", "event": "plan", "experiments": planned.wanted})
    suite.train(plans)
    phases = {"train": time.perf_counter() - start}
    suite.analyse(plans, suite.names)
    phases["analyse"] = time.perf_counter() - start - phases["train"]

    verdicts = suite.verdicts()
    due: dict[str, list[str]] = {}
    if not planned.report_only:
        t1 = time.perf_counter()
        due = suite.extra_round(verdicts, planned.extra_seeds)
        if due:  # the grown experiments' claims, decided again on all their seeds
            verdicts = suite.verdicts()
            phases["extra seeds"] = time.perf_counter() - t1
    envelopes = suite.envelopes
    meta = collect_meta(suite.profile, suite.seeds, corpus=runner.corpus,
                        corpus_status=planned.corpus_status, only=planned.only,
                        started_at=planned.started_at,
                        wall_s=planned.plan_s + time.perf_counter() - start, phases=phases,
                        extra_seeds=planned.extra_seeds, extra_round=grown(envelopes))
    meta["machine"].update(runner.executor.where())  # its workers (a cluster: its nodes)
    meta["machine"]["precision"] = runner.precision_used()
    if planned.report_only:  # the times to state are the run's that made the records
        meta = rerendered(meta, suite.out)
    paths = write_report(envelopes, verdicts, suite.out, meta, lang=lang)
    return SuiteOutcome(paths, envelopes, verdicts, meta, due)


def estimate(profile: str, seeds: int | None, runner: Runner, *, only: list[str] | None = None,
             extra_seeds: int = 0, out: str | Path = ".") -> Any:
    """How long the training of ``reproduce`` into ``out`` should take here: its plan
    (``plan_suite``), timed (``estimate_plan``)."""
    planned = plan_suite(runner, out, profile, seeds=seeds, only=only, extra_seeds=extra_seeds)
    return estimate_plan(planned, runner)


def estimate_plan(planned: SuitePlan, runner: Runner | None = None) -> Any:
    """How long the training of ``planned`` should take here: its pending runs timed
    (``attnlab.suite.forecast``), laid on ``runner``'s slots (None: the plan's runner; a
    ``sized`` one lays them on a cluster of that size). Experiments skipped for want of
    the corpus are named, not timed; the finished runs of every other selected experiment
    check the estimate."""
    from attnlab.suite.forecast import estimate_plans, finished_runs

    suite = planned.suite
    runner = runner or suite.runner
    skipped = planned.skipped()
    pending = {name: suite.runner.pending(p.specs) for name, p in planned.plans.items()}
    planned_seeds = {name: n for name, settings in suite.settings.items()
                     if name in planned.plans or (name in suite.envelopes and
                                                  suite.status(name) == "ok")
                     if (n := seeds_of(settings)) is not None}
    checked = {n: e for n, e in suite.experiments.items() if n not in skipped}
    return estimate_plans(suite.profile, pending, runner, seeds=planned_seeds,
                          extra_seeds=planned.extra_seeds, skipped=skipped,
                          finished=finished_runs(checked, runner, planned.extra_seeds))


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
