"""The suite's steps: ``Suite`` plans, trains and analyses the selected experiments, decides
their claims and grows the inconclusive ones by the extra round (``attnlab.suite`` says the
whole pipeline; ``attnlab.suite.end_to_end`` strings these steps into ``reproduce``).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.errors import Said, UsageError, WriteError, first_line, one_line
from attnlab.kit import registry
from attnlab.kit.claims import evaluate
from attnlab.kit.envelope import (
    Envelope,
    finished_envelope,
    identity,
    not_run,
    status_of,
    store_note,
    write_envelope,
)
from attnlab.kit.extra_seeds import (
    check_extra_seeds,
    held_back,
    ran_note,
    skipped_note,
    triggers,
    with_extra_seeds,
)
from attnlab.kit.registry import Experiment, seeds_of
from attnlab.running.context import Context
from attnlab.running.runner import Runner, RunSpec
from attnlab.train.progress import Progress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """One experiment's planned runs, resolved once."""

    experiment: Experiment
    settings: Any
    specs: list[RunSpec]  # resolved by the runner
    extra: dict[str, Any] | None = None  # the extra round: its planned identity and note


class Suite:
    """The pipeline over one runner, one output folder, one profile and the experiments it
    was made with (``Suite.of`` loads them by name). Each experiment's settings for the
    profile and ``seeds`` are resolved here, once (``settings``); every later step reads
    them, and the extra round grows them (``with_extra_seeds``). Its envelopes change only
    through its own steps; ``envelopes`` gives them in the order of ``names``."""

    def __init__(self, runner: Runner, out: Path, profile: str, seeds: int | None = None,
                 experiments: dict[str, Experiment] | None = None, *,
                 strict: bool = False) -> None:
        self.runner, self.out, self.profile, self.seeds = runner, Path(out), profile, seeds
        self.strict = strict  # an experiment's failure raises (tests) instead of its envelope
        self.emit: Progress = runner.progress or (lambda info: None)
        self.experiments: dict[str, Experiment] = dict(experiments or {})
        self.names: list[str] = list(self.experiments)  # the order of the report
        self._envelopes: dict[str, dict] = {}  # name -> envelope (JSON form, + "reused")
        self.settings: dict[str, Any] = {}  # name -> its settings (one that has none: failed)
        for name, exp in self.experiments.items():
            try:
                self.settings[name] = exp.settings(profile, seeds)
            except Exception as err:  # noqa: BLE001 - report it, run the rest
                self._envelopes[name] = not_run(name, exp.title, "failed",
                                                Said("cannot plan: %s", Said.of(err)))

    @classmethod
    def of(cls, runner: Runner, out: Path, profile: str, seeds: int | None,
           names: list[str], *, strict: bool = False) -> Suite:
        """A suite of the experiments ``names``, each loaded from the registry; one that
        cannot load gets a failed envelope."""
        loaded, broken = {}, {}
        for name in names:
            try:
                loaded[name] = registry.load(name)
            except Exception as err:  # noqa: BLE001 - e.g. a module not written yet
                broken[name] = not_run(name, name, "failed",
                                       Said("cannot load: %s", Said.of(err)))
        suite = cls(runner, out, profile, seeds, loaded, strict=strict)
        suite.names = list(names)
        suite._envelopes.update(broken)
        return suite

    @property
    def envelopes(self) -> dict[str, dict]:
        """Every envelope made so far, in the order of ``names``."""
        return {n: self._envelopes[n] for n in self.names if n in self._envelopes}

    def status(self, name: str) -> str:
        """The status of ``name``'s envelope (``attnlab.kit.envelope.status_of``)."""
        return status_of(self._envelopes[name])

    @functools.cached_property
    def ctx(self) -> Context:
        return Context.of(self.runner)

    def wanted(self, extra_seeds: int | None,
               skip: Callable[[Experiment], tuple[str, str] | None] | None = None
               ) -> dict[str, Any]:
        """The settings of every loaded experiment still to run; the others get their
        envelope: a finished one with the same identity is reused (grown by an extra
        round of ``extra_seeds``; None: any), ``skip(exp)`` may say (status, reason)."""
        wanted = {}
        for name, settings in self.settings.items():
            exp = self.experiments[name]
            cached = finished_envelope(self.out, name, identity(self.profile, settings),
                                       extra_seeds)
            why = None if cached is not None or skip is None else skip(exp)
            if cached is not None:
                self._envelopes[name] = {**cached, "reused": True}
            elif why is not None:
                self._envelopes[name] = not_run(name, exp.title, *why)
            else:
                wanted[name] = settings
        return wanted

    # -- the pipeline ---------------------------------------------------------

    def plan(self, wanted: dict[str, Any],
             extra: dict[str, dict[str, Any]] | None = None) -> dict[str, Plan]:
        """Each experiment's runs for its settings (``wanted``: name -> settings), resolved;
        one that cannot plan gets a failed envelope. ``extra``: the extra round's fields
        of each envelope (its planned identity and note)."""
        plans: dict[str, Plan] = {}
        for name, settings in wanted.items():
            exp, more = self.experiments[name], (extra or {}).get(name)
            try:
                specs = self.runner.resolve_all(exp.plan(settings))
            except Exception as err:  # noqa: BLE001 - report it, run the rest
                if self.strict:
                    raise
                reason = Said("cannot plan: %s", Said.of(err))
                if more:
                    reason = Said("extra round: %s", reason)
                self._envelopes[name] = not_run(name, exp.title, "failed", reason)
                continue
            plans[name] = Plan(exp, settings, specs, more)
        return plans

    def train(self, plans: dict[str, Plan], *, announce: bool = True, **event: Any) -> None:
        """Every planned run of every experiment in one pass of the executor (failures are
        left to the experiment that planned them, which retries in order and reports).
        ``announce``: emit the suite's ``train`` event (with ``event``'s fields)."""
        specs = [spec for p in plans.values() for spec in p.specs]
        if not specs and "because" not in event:
            return
        n_pending = len(self.runner.pending(specs))
        if announce:
            self.emit({"kind": "suite", "event": "train", **event, "runs": len(specs),
                       "pending": n_pending, "workers": self.runner.slots(n_pending),
                       "executor": self.runner.executor.name})
        try:
            self.runner.train(specs, resolved=True, retry=False)
        except Exception as err:  # noqa: BLE001 - the experiments retry their own runs
            log.warning("the training pool stopped: %s", one_line(err))

    def analyse(self, plans: dict[str, Plan], order: list[str] | None = None) -> None:
        """In ``order`` (default: the plans'), each planned experiment's runs (anything the
        executor did not finish is trained here, in order), analysis and files; the other
        names of ``order`` are reported as reused, skipped or failed."""
        order = list(plans) if order is None else order
        for index, name in enumerate(order, 1):
            info = {"kind": "experiment", "index": index, "total": len(order), "name": name}
            if name not in plans:
                env, status = self._envelopes[name], self.status(name)
                self.emit({**info, "event": "done" if status == "ok" else status,
                           "reused": True, "reason": env.get("reason")})
                continue
            plan = plans[name]
            title = plan.extra["extra_round"]["text"] if plan.extra else plan.experiment.title
            self.emit({**info, "event": "start", "title": title})
            start = time.perf_counter()
            try:
                self._envelopes[name] = {**self._analyse_one(name, plan), "reused": False}
            except WriteError:  # a full disk or a folder gone read-only stops the command
                raise
            except Exception as err:  # noqa: BLE001 - report it, run the rest
                if self.strict:
                    raise
                log.debug("%s traceback", name, exc_info=True)
                reason = Said("extra round: %s", Said.of(err)) if plan.extra else Said.of(err)
                self._envelopes[name] = not_run(name, plan.experiment.title, "failed",
                                                reason, None if plan.extra else
                                                time.perf_counter() - start)
                self.emit({**info, "event": "failed", "reason": reason})
                continue
            self.emit({**info, "event": "done", "wall_s": time.perf_counter() - start,
                       "reused": False})

    def _analyse_one(self, name: str, plan: Plan) -> dict[str, Any]:
        from attnlab.train.rundir import code_revision

        results = self.runner.train(plan.specs, resolved=True)
        exp, start = plan.experiment, time.perf_counter()
        record = exp.analyse(plan.settings, results, self.ctx)
        envelope = Envelope(
            name=name, title=exp.title, profile=self.profile, settings=plan.settings,
            quick_changes=exp.quick_changes, record=record,
            wall_s=time.perf_counter() - start,
            train_s=sum(r.get("wall_s") or 0.0 for r in results.values()),
            runs=len(results), code_revision=code_revision(),
            finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"), **(plan.extra or {}))
        return write_envelope(self.out, envelope, exp.table(record), exp.figure(record))

    # -- claims and the extra round -----------------------------------------------

    def verdicts(self, others: dict[str, dict] | None = None) -> list[dict]:
        """Every claim of the loaded experiments over the finished records (and ``others``,
        records of experiments outside this suite), tagged with the experiment that owns
        it."""
        records = {**(others or {}), **{n: e["record"] for n, e in self.envelopes.items()
                                         if status_of(e) == "ok"}}
        return evaluate_claims(self.experiments, records)

    def extra_round(self, verdicts: list[dict], extra_seeds: int) -> dict[str, list[str]]:
        """Apply the rule of ``attnlab.kit.extra_seeds`` to decided ``verdicts``: plan the due
        experiments with ``extra_seeds`` more seeds, train, analyse. Every other finished
        experiment that trains gets its note why not. Returns experiment -> the claim ids
        that called for its round (empty: the verdicts stand)."""
        check_extra_seeds(extra_seeds)
        candidates: dict[str, Any] = {}
        for name, env in self.envelopes.items():
            if status_of(env) != "ok" or name not in self.settings:
                continue
            if (env.get("extra_round") or {}).get("ran"):
                continue  # one round only
            settings = self.settings[name]
            if seeds_of(settings) is not None:
                candidates[name] = settings
        calls = triggers(verdicts, candidates)  # the claims that call for a round
        due = calls if extra_seeds > 0 else {}
        for name, settings in candidates.items():
            if name not in due:
                self._note(name, skipped_note(seeds_of(settings), extra_seeds,
                                              held_back(verdicts, name), self.profile,
                                              calls.get(name)))
        if not due:
            return {}
        wanted, extra = {}, {}
        for name in due:
            base = candidates[name]
            n = seeds_of(base)
            wanted[name] = with_extra_seeds(base, extra_seeds)
            extra[name] = {"planned": identity(self.profile, base),
                           "extra_round": ran_note(n, extra_seeds, due[name])}
        plans = self.plan(wanted, extra)
        self.train(plans, event="extra", because=due)
        self.analyse(plans)
        return due

    def _note(self, name: str, note: dict[str, Any]) -> None:
        env = self._envelopes[name]
        if env.get("extra_round") != note:
            self._envelopes[name] = {**env, "extra_round": note}
            store_note(self.out, self._envelopes[name])


def evaluate_claims(experiments: dict[str, Experiment], records: dict[str, dict]) -> list[dict]:
    """Verdicts of every claim of ``experiments``, tagged with the experiment that owns it."""
    out = []
    for name, exp in experiments.items():
        for verdict in evaluate(records, list(exp.claims)):
            if verdict["status"] == "error":
                log.warning("claim %s: %s", verdict["id"], verdict["why"])
            out.append({**verdict, "experiment": name})
    return out


def finished_records(out_dir: Path, profile: str, seeds: int | None,
                     extra_seeds: int | None = None, names: list[str] | None = None
                     ) -> dict[str, dict]:
    """Records of the experiments ``names`` (None: every one) already finished under
    ``out_dir`` with this profile and seed count (and, for one grown by the extra-seed
    round, this number of extra seeds; None: any)."""
    records = {}
    for name in registry.names() if names is None else names:
        try:
            ident = identity(profile, registry.load(name).settings(profile, seeds))
        except Exception:  # noqa: BLE001 - a module that cannot load has no record
            continue
        envelope = finished_envelope(Path(out_dir), name, ident, extra_seeds)
        if envelope is not None:
            records[name] = envelope["record"]
    return records


def corpus_problem(corpus: str | None) -> tuple[str | None, str]:
    """(None, where it is) when the corpus resolves; (the reason, the same) when it does not."""
    from attnlab.data.corpus import CorpusError, resolve_corpus

    try:
        return None, f"`{resolve_corpus(corpus)}`"
    except CorpusError as err:
        reason = Said(err.template, *err.values) if err.template else first_line(err)
        return reason, Said("unavailable (%s)", reason)


def check_args(profile: str, seeds: int | None) -> None:
    registry.check_profile(profile)
    if seeds is not None and (not isinstance(seeds, int) or seeds < 1):
        raise UsageError(f"seeds must be a whole number >= 1, got {seeds!r}")


