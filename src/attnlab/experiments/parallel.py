"""Training an experiment's independent runs side by side, one thread each.

The models of the quick profile are small (width 32-128, batch 8-16): one
training process on two threads runs them only 1.3-1.7× faster than on one,
and two one-thread processes side by side do 1.1-1.6× the work of that
two-thread process (measured on the 2-core machine; see the README). So
``Context.prefetch`` hands the runs an experiment is about to need to
``workers`` long-lived processes, each with
``torch.set_num_threads(1)``. They train through ``Context.train`` exactly as
the experiment would (same run directory, keyed by the config hash, same data),
so the experiment's own sequential pass afterwards finds every run finished and
only reads the results. Nothing else changes: a run that fails or diverges in a
worker is simply trained again, in order, by that pass, which raises or
records it as usual.

Interruption: Ctrl-C reaches the workers too (one process group); each
finishes its step, checkpoints and stops, as the trainer does alone, and the
parent waits for them before re-raising. Any other exception in the parent
sends SIGTERM to the live workers, which checkpoint the same way.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import queue
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.nn.config import ModelConfig
from attnlab.train.config import DataConfig, TrainConfig

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often the parent looks at the workers when no message arrives
STOP_WAIT_S = 120.0  # how long stopped workers get to write their checkpoints


@dataclass(frozen=True)
class Job:
    """One training run, as ``Context.train`` takes it (corpus data only)."""

    label: str
    model: ModelConfig
    train: TrainConfig
    data_cfg: DataConfig


def default_workers() -> int:
    """One worker per CPU core (at most 8) on a CPU-only machine; 1 when CUDA is present."""
    import os

    import torch

    if torch.cuda.is_available():
        return 1
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def run_jobs(jobs: list[Job], work: Path, workers: int, progress: Any = None) -> dict[str, str]:
    """Train ``jobs`` on ``workers`` one-thread processes; ``{label: status}``.

    Status is "done", "diverged" or "failed: <last line>". Progress dicts of
    every run (with its ``run`` label) go to ``progress`` as they arrive.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    ctx = mp.get_context("spawn")  # fresh interpreters: no forked torch thread pools
    todo, out = ctx.Queue(), ctx.Queue()
    for job in jobs:
        todo.put(job)
    n_procs = min(workers, len(jobs))
    for _ in range(n_procs):
        todo.put(None)  # one stop sign per worker
    procs = [ctx.Process(target=_worker, args=(str(work), todo, out, i), daemon=True)
             for i in range(1, n_procs + 1)]
    for p in procs:
        p.start()
    status: dict[str, str] = {}
    try:
        while len(status) < len(jobs):
            try:
                kind, payload = out.get(timeout=POLL_S)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    break  # every worker died without reporting: the sequential pass retries
                continue
            if kind == "progress":
                if progress is not None:
                    progress(payload)
            elif kind == "start":  # the worker's own log lines do not reach this terminal
                log.info("training %s (worker %d of %d)", *payload, n_procs)
            else:
                label, outcome = payload
                status[label] = outcome
                if outcome.startswith("failed"):
                    log.warning("%s %s in a worker; it is trained again in order", label, outcome)
        for p in procs:
            p.join()
    except KeyboardInterrupt:  # the workers got the same Ctrl-C: let them checkpoint
        for p in procs:
            p.join(STOP_WAIT_S)
        raise
    except BaseException:
        _stop(procs)
        raise
    return status


def _stop(procs: list[Any]) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()  # SIGTERM: the trainer finishes its step and checkpoints
    for p in procs:
        p.join(STOP_WAIT_S)


def _worker(work: str, todo: Any, out: Any, me: int) -> None:
    """A worker process: one thread, one shared ``Context``, runs until its stop sign."""
    import torch

    from attnlab.experiments.base import Context
    from attnlab.train.trainer import TrainingDiverged, TrainingInterrupted

    torch.set_num_threads(1)
    contexts: dict[str | None, Context] = {}
    while (job := todo.get()) is not None:
        corpus = job.data_cfg.corpus
        if corpus not in contexts:
            contexts[corpus] = Context(
                work=Path(work), corpus=corpus,
                progress=lambda info: out.put(("progress", info)),
            )
        out.put(("start", (job.label, me)))
        try:
            contexts[corpus].train(job.label, job.model, job.train, data_cfg=job.data_cfg)
            outcome = "done"
        except TrainingDiverged:
            outcome = "diverged"
        except (TrainingInterrupted, KeyboardInterrupt):
            out.put(("result", (job.label, "interrupted")))
            return  # checkpoint written; take no further job
        except Exception as err:  # noqa: BLE001 - reported; the sequential pass raises it
            last = traceback.format_exception_only(type(err), err)[-1].strip()
            outcome = f"failed: {last}"
        out.put(("result", (job.label, outcome)))
