"""Run the whole suite (SPEC §4) and write the report; one experiment never stops the rest.

``reproduce`` runs every experiment of ``attnlab.experiments.registry`` in
registry order through ``run_experiment``, which caches each finished record
(and ``Context.train`` each training run), so running it again skips finished
work and resumes an interrupted run. Outcomes:

- an experiment whose module cannot be imported (not written yet, broken) or
  whose ``run`` raises is *failed*, with its one-line error; the rest still run
  and ``reproduce`` returns ``ok=False`` (the command then exits non-zero);
- when the corpus cannot be found or fetched, experiments with ``NEEDS_CORPUS``
  are *skipped* with the reason and the others still run.

Claims are evaluated one at a time, so a predicate that breaks on an
unexpected record marks only itself (skipped, with the error as evidence).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from attnlab.experiments import registry
from attnlab.experiments.base import Context
from attnlab.experiments.claims import Claim, evaluate
from attnlab.report.write import status_of, write_report

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]


def one_line(err: BaseException) -> str:
    """``Type: first line of the message``."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def select(only: Iterable[str] | None) -> list[str]:
    """Experiment names to run, in registry order; unknown names are a ValueError."""
    if only is None:
        return list(registry.EXPERIMENTS)
    wanted = [n.strip() for n in only if n.strip()]
    unknown = [n for n in wanted if n not in registry.EXPERIMENTS]
    if unknown or not wanted:
        raise ValueError(
            f"unknown experiment(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"choose from: {', '.join(registry.EXPERIMENTS)}"
        )
    return [n for n in registry.EXPERIMENTS if n in wanted]


def check_args(profile: str, seeds: int) -> None:
    if profile not in registry.PROFILES:
        raise ValueError(
            f"unknown profile {profile!r}; choose one of: {', '.join(registry.PROFILES)}"
        )
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a whole number >= 1, got {seeds!r}")


def evaluate_claims(modules: dict[str, ModuleType], records: dict[str, dict]) -> list[dict]:
    """Verdicts of every claim of ``modules``, tagged with the experiment that owns it."""
    verdicts = []
    for name, mod in modules.items():
        claims: list[Claim] = list(getattr(mod, "CLAIMS", []))
        for claim in claims:
            try:
                (verdict,) = evaluate(records, [claim])
            except Exception as err:  # noqa: BLE001 - one bad predicate must not sink the report
                log.warning("claim %s could not be decided: %s", claim.id, one_line(err))
                verdict = {"id": claim.id, "text": claim.text, "rule": claim.rule,
                           "status": "skipped", "evidence": {"error": one_line(err)}}
            verdicts.append({**verdict, "experiment": name, "needs": list(claim.needs)})
    return verdicts


def _finished_envelope(out_dir: Path, name: str, title: str, profile: str, seeds: int) -> dict:
    """The finished envelope of ``name`` in ``out_dir``, or a skipped one saying why not."""
    path = Path(out_dir) / name / "result.json"
    try:
        envelope = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        envelope = {}
    if envelope.get("profile") == profile and envelope.get("seeds") == seeds:
        return {**envelope, "reused": True}
    return {"name": name, "title": title, "status": "skipped",
            "reason": f"report only: no finished {profile} result with {seeds} seed(s) at {path}"}


def finished_records(out_dir: Path, profile: str, seeds: int) -> dict[str, dict]:
    """Records already finished under ``out_dir`` with this profile and seed count."""
    records = {}
    for name in registry.EXPERIMENTS:
        path = Path(out_dir) / name / "result.json"
        if not path.is_file():
            continue
        try:
            envelope = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if envelope.get("profile") == profile and envelope.get("seeds") == seeds:
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
    profile: str, seeds: int, *, corpus: str | None, corpus_status: str, only: list[str] | None,
    started_at: str, wall_s: float, workers: int = 1,
) -> dict[str, Any]:
    """Everything the report says about how and where it was made."""
    from attnlab.train.rundir import code_revision, versions

    return {
        "profile": profile,
        "seeds": seeds,
        "only": only,
        "corpus": corpus,
        "corpus_status": corpus_status,
        "started_at": started_at,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_s": wall_s,
        "machine": {**machine(), "training workers": (
            f"{workers} one-thread processes" if workers > 1 else "this process")},
        "versions": versions(),
        "code_revision": code_revision(),
    }


def _corpus_problem(corpus: str | None) -> tuple[str | None, str]:
    """(None, where it is) when the corpus resolves; (the reason, the same) when it does not."""
    from attnlab.data.corpus import CorpusError, resolve_corpus

    try:
        return None, f"`{resolve_corpus(corpus)}`"
    except CorpusError as err:
        reason = str(err).strip().splitlines()[0]
        return reason, f"unavailable ({reason})"


def reproduce(
    profile: str,
    seeds: int,
    out_dir: str | Path,
    work_dir: str | Path,
    corpus: str | None = None,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    report_only: bool = False,
    workers: int = 1,
) -> dict[str, Any]:
    """Run the suite (or the ``only`` experiments) and write the report into ``out_dir``.

    ``workers`` > 1 trains each experiment's independent runs side by side on that
    many one-thread processes (``Context.prefetch``); the results are the same.

    ``report_only`` runs nothing: it rewrites the report from the results already
    finished in ``out_dir`` (with this profile and seed count); the others are skipped.

    ``progress`` receives ``{"kind": "experiment", "index", "total", "name", "event", ...}``
    (event: start, done, skipped, failed) and the trainer's own progress dicts.
    Returns ``paths`` (report files), ``envelopes``, ``verdicts``, ``summary``-style
    lists ``failed`` and ``skipped``, and ``ok`` (no experiment failed).
    """
    check_args(profile, seeds)
    names = select(only)
    out_dir, work_dir = Path(out_dir), Path(work_dir)
    started_at, start = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.perf_counter()
    emit = progress or (lambda info: None)
    ctx = Context(work=work_dir, seeds=seeds, corpus=corpus, progress=progress, workers=workers)

    modules: dict[str, ModuleType] = {}
    envelopes: dict[str, dict] = {}
    for name in names:
        try:
            modules[name] = registry.load(name)
        except Exception as err:  # noqa: BLE001 - e.g. a module not written yet
            if progress is None:  # with a sink, the "failed" event says it
                log.error("%s: cannot load: %s", name, one_line(err))
            envelopes[name] = {"name": name, "status": "failed",
                               "reason": f"cannot load: {one_line(err)}"}
    corpus_reason, corpus_status = None, "not needed"
    if report_only:
        corpus_status = "not used (report only)"
    elif any(getattr(m, "NEEDS_CORPUS", True) for m in modules.values()):
        corpus_reason, corpus_status = _corpus_problem(corpus)

    for index, name in enumerate(names, 1):
        info = {"kind": "experiment", "index": index, "total": len(names), "name": name}
        if name in envelopes:
            emit({**info, "event": "failed", "reason": envelopes[name]["reason"]})
            continue
        mod = modules[name]
        title = getattr(mod, "TITLE", name)
        if report_only:
            envelopes[name] = _finished_envelope(out_dir, name, title, profile, seeds)
            done = status_of(envelopes[name]) == "ok"
            emit({**info, "event": "done" if done else "skipped", "reused": True,
                  "reason": envelopes[name].get("reason")})
            continue
        if getattr(mod, "NEEDS_CORPUS", True) and corpus_reason is not None:
            reason = f"corpus unavailable: {corpus_reason}"
            envelopes[name] = {"name": name, "title": title, "status": "skipped",
                               "reason": reason}
            emit({**info, "event": "skipped", "reason": reason})
            continue
        emit({**info, "event": "start", "title": title})
        result_path = out_dir / name / "result.json"
        before = result_path.stat().st_mtime_ns if result_path.is_file() else None
        t0 = time.perf_counter()
        try:
            envelope = registry.run_experiment(name, profile, ctx, out_dir)
        except Exception as err:  # noqa: BLE001 - report it, run the rest
            if progress is None:
                log.error("%s failed: %s", name, one_line(err))
            log.debug("%s traceback", name, exc_info=True)
            envelopes[name] = {"name": name, "title": title, "status": "failed",
                               "reason": one_line(err), "wall_s": time.perf_counter() - t0}
            emit({**info, "event": "failed", "reason": one_line(err)})
            continue
        reused = before is not None and result_path.stat().st_mtime_ns == before
        envelopes[name] = {**envelope, "reused": reused}
        emit({**info, "event": "done", "wall_s": time.perf_counter() - t0, "reused": reused})

    envelopes = {n: envelopes[n] for n in names}  # registry order, load failures included
    records = {n: e["record"] for n, e in envelopes.items() if status_of(e) == "ok"}
    verdicts = evaluate_claims(modules, records)
    meta = collect_meta(profile, seeds, corpus=corpus, corpus_status=corpus_status,
                        only=None if only is None else names, started_at=started_at,
                        wall_s=time.perf_counter() - start, workers=workers)
    paths = write_report(envelopes, verdicts, out_dir, meta)
    failed = [n for n, e in envelopes.items() if status_of(e) == "failed"]
    skipped = [n for n, e in envelopes.items() if status_of(e) == "skipped"]
    return {"paths": paths, "envelopes": envelopes, "verdicts": verdicts, "meta": meta,
            "failed": failed, "skipped": skipped, "ok": not failed}
