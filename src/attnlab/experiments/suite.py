"""Run the whole suite (SPEC §4): plan every experiment, train every run on one pool, analyse.

``reproduce`` works in three phases, so that no core idles at an experiment's boundary:

1. *plan*: every selected experiment lists its runs (``plan(settings)``);
   experiments finished earlier with the same profile and settings are reused;
2. *train*: the runs of all experiments go to one ``Runner`` at once (one pool of
   worker processes, longest runs first); finished runs are read, not retrained;
3. *analyse*: each experiment, in registry order, reads its runs, measures what it
   measures, and writes its envelope, table and figure; then the claims are
   decided;
4. *extra seeds*: each experiment with a training claim inconclusive on at least 3
   seeds trains its plan with ``extra_seeds`` more seeds, once, all on one pool, and is
   analysed again; its claims are decided again on all its seeds
   (``attnlab.experiments.extra_seeds`` states the rule). Then the report is written
   (``attnlab.report``).

Everything is cached, so running it again skips finished work and resumes an
interrupted run. Outcomes:

- an experiment whose module cannot be imported, whose runs fail, or whose
  ``analyse`` raises is *failed*, with its one-line error; the rest still run;
- when the corpus cannot be found or fetched, experiments with ``NEEDS_CORPUS``
  are *skipped* with the reason and the others still run;
- a claim whose predicate raises is an *error* verdict.

``ok`` is False (and the command exits non-zero) when an experiment failed or a
claim is an error.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from attnlab.errors import UsageError
from attnlab.experiments import registry
from attnlab.experiments.base import Context
from attnlab.experiments.claims import Claim, evaluate, one_line
from attnlab.experiments.extra_seeds import EXTRA_SEEDS, check_extra_seeds, grown, settle
from attnlab.experiments.runner import RunSpec
from attnlab.report.write import status_of, write_report

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]

__all__ = ["evaluate_claims", "finished_records", "one_line", "reproduce", "select"]


def select(only: Iterable[str] | None) -> list[str]:
    """Experiment names to run, in registry order; unknown names are a ValueError."""
    if only is None:
        return list(registry.EXPERIMENTS)
    wanted = [n.strip() for n in only if n.strip()]
    unknown = [n for n in wanted if n not in registry.EXPERIMENTS]
    if unknown or not wanted:
        raise UsageError(
            f"unknown experiment(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"choose from: {', '.join(registry.EXPERIMENTS)}"
        )
    return [n for n in registry.EXPERIMENTS if n in wanted]


def check_args(profile: str, seeds: int | None) -> None:
    registry.check_profile(profile)
    if seeds is not None and (not isinstance(seeds, int) or seeds < 1):
        raise UsageError(f"seeds must be a whole number >= 1, got {seeds!r}")


def evaluate_claims(modules: dict[str, ModuleType], records: dict[str, dict]) -> list[dict]:
    """Verdicts of every claim of ``modules``, tagged with the experiment that owns it."""
    verdicts = []
    for name, mod in modules.items():
        claims: list[Claim] = list(getattr(mod, "CLAIMS", []))
        for verdict in evaluate(records, claims):
            if verdict["status"] == "error":
                log.warning("claim %s: %s", verdict["id"], verdict["why"])
            verdicts.append({**verdict, "experiment": name})
    return verdicts


def finished_records(out_dir: Path, profile: str, seeds: int | None,
                     extra_seeds: int | None = None) -> dict[str, dict]:
    """Records already finished under ``out_dir`` with this profile and seed count (and,
    for one grown by the extra-seed round, this number of extra seeds; None: any)."""
    records = {}
    for name in registry.EXPERIMENTS:
        try:
            mod = registry.load(name)
            ident = registry.identity(profile, registry.settings_of(mod, profile, seeds))
        except Exception:  # noqa: BLE001 - a module that cannot load has no record
            continue
        envelope = registry.finished_envelope(Path(out_dir), name, ident, extra_seeds)
        if envelope is not None:
            records[name] = envelope["record"]
    return records


def machine() -> dict[str, Any]:
    """Platform, CPU count, torch version and the device a training run would use."""
    import torch

    device = "cpu"
    if torch.cuda.is_available():
        device = f"cuda ({torch.cuda.get_device_name(0)}, {torch.cuda.device_count()} GPU)"
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or "–",
        "CPU count": os.cpu_count(),
        "torch threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "device": device,
    }


def collect_meta(
    profile: str, seeds: int | None, *, corpus: str | None, corpus_status: str,
    only: list[str] | None, started_at: str, wall_s: float, workers: int = 1,
    phases: dict[str, float] | None = None, extra_seeds: int = EXTRA_SEEDS,
    extra_round: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Everything the report says about how and where it was made."""
    from attnlab.train.rundir import code_revision, versions

    return {
        "profile": profile,
        "seeds": seeds if seeds is not None else "the profile's",
        "extra_seeds": extra_seeds,
        "extra_round": extra_round or {},  # experiment -> the claims that called for it
        "only": only,
        "corpus": corpus,
        "corpus_status": corpus_status,
        "started_at": started_at,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_s": wall_s,
        "phases_s": phases or {},
        "machine": {**machine(), "training workers": (
            f"{workers} worker processes" if workers > 1 else "this process")},
        "versions": versions(),
        "code_revision": code_revision(),
    }


def corpus_problem(corpus: str | None) -> tuple[str | None, str]:
    """(None, where it is) when the corpus resolves; (the reason, the same) when it does not."""
    from attnlab.data.corpus import CorpusError, resolve_corpus

    try:
        return None, f"`{resolve_corpus(corpus)}`"
    except CorpusError as err:
        reason = str(err).strip().splitlines()[0]
        return reason, f"unavailable ({reason})"


def reproduce(
    profile: str,
    seeds: int | None,
    out_dir: str | Path,
    work_dir: str | Path,
    corpus: str | None = None,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    report_only: bool = False,
    workers: int = 1,
    device: str = "auto",
    extra_seeds: int = EXTRA_SEEDS,
) -> dict[str, Any]:
    """Run the suite (or the ``only`` experiments) and write the report into ``out_dir``.

    ``seeds`` replaces every training experiment's seed count (None: the profile's).
    ``workers`` > 1 trains on that many worker processes (one thread each; on CUDA one
    per GPU); the results are the same bits. ``device`` is where runs train and
    analyses measure (auto: CUDA when present). ``extra_seeds`` is the size of the one
    extra round for experiments left with an inconclusive training claim (0: off).

    ``report_only`` runs nothing: it rewrites the report from the results already
    finished in ``out_dir`` (with this profile and seeds, grown by any extra round);
    the others are skipped.

    ``progress`` receives ``{"kind": "experiment", "index", "total", "name", "event", ...}``
    (event: start, done, skipped, failed), ``{"kind": "suite", "event": "train" | "extra",
    ...}`` and the trainer's own progress dicts. Returns ``paths`` (report files),
    ``envelopes``, ``verdicts``, lists ``failed``, ``skipped`` and ``errors`` (claims),
    ``extra_round`` (experiment -> the claim ids that called for its extra round, this
    call or an earlier one whose envelope was reused), ``extra_round_now`` (the same, in
    this call only) and ``ok``.
    """
    check_args(profile, seeds)
    check_extra_seeds(extra_seeds)
    names = select(only)
    out_dir, work_dir = Path(out_dir), Path(work_dir)
    started_at, start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.perf_counter()
    emit = progress or (lambda info: None)
    ctx = Context(work=work_dir, corpus=corpus, device=device, progress=progress,
                  workers=workers)
    if not report_only:
        ctx.torch_device  # noqa: B018 - a device that does not resolve is one line, up front

    modules: dict[str, ModuleType] = {}
    envelopes: dict[str, dict] = {}
    for name in names:
        try:
            modules[name] = registry.load(name)
        except Exception as err:  # noqa: BLE001 - e.g. a module not written yet
            envelopes[name] = {"name": name, "status": "failed",
                               "reason": f"cannot load: {one_line(err)}"}
    corpus_reason, corpus_status = None, "not needed"
    if report_only:
        corpus_status = "not used (report only)"
    elif any(getattr(m, "NEEDS_CORPUS", True) for m in modules.values()):
        corpus_reason, corpus_status = corpus_problem(corpus)

    plans = _plan(modules, envelopes, profile, seeds, out_dir, report_only, corpus_reason,
                  None if report_only else extra_seeds)  # report only: any finished round
    t0 = time.perf_counter()
    _train([spec for _, runs in plans.values() for spec in runs], ctx, emit)
    phases = {"train": time.perf_counter() - t0}
    _analyse(names, modules, plans, envelopes, profile, ctx, out_dir, emit)
    phases["analyse"] = time.perf_counter() - t0 - phases["train"]

    envelopes = {n: envelopes[n] for n in names}  # registry order, load failures included
    verdicts = evaluate_claims(modules, _records(envelopes))
    due: dict[str, list[str]] = {}
    if not report_only:
        t1 = time.perf_counter()
        due = settle(modules, envelopes, verdicts, profile=profile, seeds=seeds,
                     extra_seeds=extra_seeds, ctx=ctx, out=out_dir, emit=emit)
        if due:  # the grown experiments' claims, decided again on all their seeds
            verdicts = evaluate_claims(modules, _records(envelopes))
            phases["extra seeds"] = time.perf_counter() - t1
    meta = collect_meta(profile, seeds, corpus=corpus, corpus_status=corpus_status,
                        only=None if only is None else names, started_at=started_at,
                        wall_s=time.perf_counter() - start, workers=workers, phases=phases,
                        extra_seeds=extra_seeds, extra_round=grown(envelopes))
    paths = write_report(envelopes, verdicts, out_dir, meta)
    failed = [n for n, e in envelopes.items() if status_of(e) == "failed"]
    skipped = [n for n, e in envelopes.items() if status_of(e) == "skipped"]
    errors = [v["id"] for v in verdicts if v["status"] == "error"]
    return {"paths": paths, "envelopes": envelopes, "verdicts": verdicts, "meta": meta,
            "failed": failed, "skipped": skipped, "errors": errors,
            "extra_round": grown(envelopes), "extra_round_now": due,
            "ok": not failed and not errors}


def _records(envelopes: dict[str, dict]) -> dict[str, dict]:
    return {n: e["record"] for n, e in envelopes.items() if status_of(e) == "ok"}


Plans = dict[str, tuple[Any, list[RunSpec]]]  # experiment -> (settings, planned runs)


def _plan(modules: dict[str, ModuleType], envelopes: dict[str, dict], profile: str,
          seeds: int | None, out_dir: Path, report_only: bool,
          corpus_reason: str | None, extra_seeds: int | None) -> Plans:
    """Phase 1: each experiment's settings and runs, unless a finished envelope is reused (or
    it is skipped or cannot plan: its envelope says why)."""
    plans: Plans = {}
    for name, mod in modules.items():
        title = getattr(mod, "TITLE", name)
        try:
            settings = registry.settings_of(mod, profile, seeds)
            cached = registry.finished_envelope(
                out_dir, name, registry.identity(profile, settings), extra_seeds)
            if cached is not None:
                envelopes[name] = {**cached, "reused": True}
            elif report_only:
                envelopes[name] = {"name": name, "title": title, "status": "skipped",
                                   "reason": f"report only: no finished {profile} result at "
                                             f"{out_dir / name / 'result.json'}"}
            elif getattr(mod, "NEEDS_CORPUS", True) and corpus_reason is not None:
                envelopes[name] = {"name": name, "title": title, "status": "skipped",
                                   "reason": f"corpus unavailable: {corpus_reason}"}
            else:
                plans[name] = (settings, mod.plan(settings))
        except Exception as err:  # noqa: BLE001 - report it, run the rest
            envelopes[name] = {"name": name, "title": title, "status": "failed",
                               "reason": f"cannot plan: {one_line(err)}"}
    return plans


def _train(specs: list[RunSpec], ctx: Context, emit: Progress) -> None:
    """Phase 2: every planned run of every experiment on one pool (failures are left to the
    experiment that planned them, which retries in order and reports)."""
    if not specs:
        return
    runner = ctx.runner()
    n_pending = len(runner.pending(specs))
    emit({"kind": "suite", "event": "train", "runs": len(specs), "pending": n_pending,
          "workers": runner.pool_size(n_pending)})
    try:
        runner.prefetch(specs)
    except Exception as err:  # noqa: BLE001 - the experiments retry their own runs
        log.warning("the training pool stopped: %s", one_line(err))


def _analyse(names: list[str], modules: dict[str, ModuleType], plans: Plans,
             envelopes: dict[str, dict], profile: str, ctx: Context, out_dir: Path,
             emit: Progress) -> None:
    """Phase 3, in registry order: each planned experiment's runs (anything the pool did not
    finish is trained here, in order), its analysis and its files."""
    for index, name in enumerate(names, 1):
        info = {"kind": "experiment", "index": index, "total": len(names), "name": name}
        if name not in plans:
            env = envelopes[name]
            event = "done" if status_of(env) == "ok" else status_of(env)
            emit({**info, "event": event, "reused": True, "reason": env.get("reason")})
            continue
        mod, (settings, runs) = modules[name], plans[name]
        emit({**info, "event": "start", "title": getattr(mod, "TITLE", name)})
        start = time.perf_counter()
        try:
            results = ctx.runner().train(runs)
            envelopes[name] = {**registry.analyse_and_write(
                name, mod, profile, settings, results, ctx, out_dir), "reused": False}
        except Exception as err:  # noqa: BLE001 - report it, run the rest
            log.debug("%s traceback", name, exc_info=True)
            envelopes[name] = {"name": name, "title": getattr(mod, "TITLE", name),
                               "status": "failed", "reason": one_line(err),
                               "wall_s": time.perf_counter() - start}
            emit({**info, "event": "failed", "reason": one_line(err)})
            continue
        emit({**info, "event": "done", "wall_s": time.perf_counter() - start, "reused": False})
