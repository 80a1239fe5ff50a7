"""Worker processes for ``Runner``: one thread each on the CPU, one per GPU on CUDA
(by default; more workers than GPUs share them round-robin).

The models of the quick profile are small (width 32-128, batch 8-64): one
training process on two threads runs them only 1.3-1.7× faster than on one,
and two one-thread processes side by side do 1.1-1.6× the work of that
two-thread process (measured on the 2-core machine; see the README). So the
runner hands its pending runs to ``n`` long-lived *spawned* processes (fresh
interpreters: no forked torch thread pools), which take runs from one queue
until it is empty. On the CPU each sets ``torch.set_num_threads(1)``; on CUDA
each sees only its own GPU (``CUDA_VISIBLE_DEVICES``, set before anything
touches CUDA), so "cuda" in a run's config means that worker's GPU. The models
are small enough that one process leaves a large GPU mostly idle (each step is a
few hundred short kernels, launched from Python), so ``--jobs N`` above the GPU
count puts several workers on each GPU, worker i on the (i mod GPUs)-th one.

A worker trains through ``Runner.train_one``, exactly as the runner would in
order (same run directory, same data, same code), so the results are the same
bits. A run that fails in a worker is reported and trained again, in order, by
the runner, which then raises as usual.

Interruption: Ctrl-C reaches the workers too (one process group); each
finishes its step, checkpoints and stops, as the trainer does alone, and the
parent waits for them before re-raising. Any other exception in the parent
sends SIGTERM to the live workers, which checkpoint the same way.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import traceback
from typing import Any

from attnlab.errors import UsageError

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often the parent looks at the workers when no message arrives
STOP_WAIT_S = 120.0  # how long stopped workers get to write their checkpoints


def gpu_count() -> int:
    """CUDA devices visible to this process (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def default_workers(device: str = "auto") -> int:
    """One worker per CPU core (at most 8) when training on the CPU (``device`` cpu, or
    auto without a GPU); one per GPU with CUDA (``--jobs`` asks for more)."""
    n_gpu = gpu_count() if device != "cpu" else 0
    if n_gpu:
        return n_gpu
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(8, cores or 1))


def worker_envs(n: int, device_type: str, n_gpus: int,
                visible: str | None = None) -> list[dict[str, str]]:
    """The environment each of ``n`` workers sets before it starts: on CUDA worker i sees
    only the (i mod GPUs)-th visible GPU (of ``visible``, the parent's
    ``CUDA_VISIBLE_DEVICES``), so more workers than GPUs share them round-robin.

    >>> worker_envs(2, "cuda", 2, "4,6")
    [{'CUDA_VISIBLE_DEVICES': '4'}, {'CUDA_VISIBLE_DEVICES': '6'}]
    >>> [e["CUDA_VISIBLE_DEVICES"] for e in worker_envs(5, "cuda", 2)]
    ['0', '1', '0', '1', '0']
    >>> worker_envs(2, "cpu", 0)
    [{}, {}]
    """
    if device_type != "cuda":
        return [{} for _ in range(n)]
    ids = [g.strip() for g in visible.split(",") if g.strip()] if visible else \
        [str(i) for i in range(n_gpus)]
    if not ids:
        raise UsageError("CUDA workers need a visible GPU, found none")
    return [{"CUDA_VISIBLE_DEVICES": ids[i % len(ids)]} for i in range(n)]


def run_pool(specs: list[Any], runner: Any, n: int) -> dict[str, str]:
    """Train resolved ``specs`` on ``n`` workers; ``{label: status}`` (done, diverged, failed: …).

    Progress dicts of every run (with its ``run`` label) go to ``runner.progress``.
    """
    if n < 1:
        raise ValueError(f"workers must be at least 1, got {n}")
    device_type = specs[0].config.train.device if specs else "cpu"
    envs = worker_envs(n, device_type, gpu_count() if device_type == "cuda" else 0,
                       os.environ.get("CUDA_VISIBLE_DEVICES"))
    ctx = mp.get_context("spawn")
    todo, out = ctx.Queue(), ctx.Queue()
    for spec in specs:
        todo.put(spec)
    n_procs = min(n, len(specs))
    for _ in range(n_procs):
        todo.put(None)  # one stop sign per worker
    setup = {"work": str(runner.work), "device": runner.device, "corpus": runner.corpus}
    procs = [ctx.Process(target=_worker, args=(setup, envs[i], todo, out, i + 1), daemon=True)
             for i in range(n_procs)]
    for p in procs:
        p.start()
    status: dict[str, str] = {}
    try:
        while len(status) < len(specs):
            try:
                kind, payload = out.get(timeout=POLL_S)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    break  # every worker died without reporting: the runner retries in order
                continue
            if kind == "progress":
                if runner.progress is not None:
                    runner.progress(payload)
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


def _worker(setup: dict, env: dict[str, str], todo: Any, out: Any, me: int) -> None:
    """A worker process: its GPU (or one thread), one ``Runner``, runs until its stop sign."""
    os.environ.update(env)  # before anything initialises CUDA
    import torch

    from attnlab.experiments.runner import Runner
    from attnlab.train.trainer import TrainingDiverged, TrainingInterrupted

    if not env:
        torch.set_num_threads(1)
    runner = Runner(**setup, progress=lambda info: out.put(("progress", info)))
    while (spec := todo.get()) is not None:
        out.put(("start", (spec.label, me)))
        try:
            record = runner.train_one(spec)
            outcome = "diverged" if record.get("diverged") else "done"
        except TrainingDiverged:
            outcome = "failed: diverged"
        except (TrainingInterrupted, KeyboardInterrupt):
            out.put(("result", (spec.label, "interrupted")))
            return  # checkpoint written; take no further job
        except Exception as err:  # noqa: BLE001 - reported; the runner raises it in order
            last = traceback.format_exception_only(type(err), err)[-1].strip()
            outcome = f"failed: {last}"
        out.put(("result", (spec.label, outcome)))
