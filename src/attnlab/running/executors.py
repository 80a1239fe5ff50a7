"""Executors: where the runner's pending runs train side by side.

The runner (``attnlab.running.runner``) hands an executor its pending runs,
resolved and sorted longest first, and a ``Job`` (the work folder, the corpus,
the progress sink, the token data); the executor trains them, each through
``attnlab.running.train_run.train_spec``, and answers ``{label: status}`` with status
``done``, ``diverged``, ``interrupted`` or ``failed: <one line>``. Whatever it
did not finish the runner trains again in order in its own process, where a
failure raises. ``LocalPool`` is the one executor here; another (a cluster)
implements the same two methods and changes nothing above the runner.

``LocalPool``: one thread each on the CPU, one per GPU on CUDA (by default;
more workers than GPUs share them round-robin). The models of the quick
profile are small (width 32-128, batch 8-64): one training process on two
threads runs them only 1.3-1.7× faster than on one, and two one-thread
processes side by side do 1.1-1.6× the work of that two-thread process
(measured on the 2-core machine; see the README). So the pool hands its runs to
``n`` long-lived *spawned* processes (fresh interpreters: no forked torch thread
pools), which take runs from one queue until it is empty. On CUDA each sees only
its own GPU (``CUDA_VISIBLE_DEVICES``, set before anything touches CUDA), so
"cuda" in a run's config means that worker's GPU, worker i on the (i mod
GPUs)-th one.

Interruption. Ctrl-C in a terminal reaches the workers too (one process
group): each finishes its step, checkpoints and stops, as the trainer does
alone. SIGTERM to the main process alone reaches only it. Either way the pool,
on any exception, reads what the workers still send for ``STOP_GRACE_S``, then
sends SIGTERM to the live ones (which checkpoint the same way), waits at most
``STOP_WAIT_S`` and kills what is left (a worker whose parent dies, ``kill -9``
included, stops itself the same way: ``end_with_parent``); the task queue is told not to wait for
readers that are gone (``cancel_join_thread``), so the command always ends.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from attnlab.errors import UsageError, one_line
from attnlab.i18n import Entries, own, owners
from attnlab.i18n.labels import DOMAIN as LABELS
from attnlab.i18n.labels import RunLabel
from attnlab.running.spec import RunSpec
from attnlab.train.progress import Progress

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often the parent looks at the workers when no message arrives
STOP_GRACE_S = 2.0  # after an interruption: time for workers that got it to stop alone
STOP_WAIT_S = 10.0  # then, after SIGTERM: time to write their checkpoints before a kill
FAILED = "failed: "  # a worker's outcome of a run that raised: "failed: <why>"
FAILED_DIVERGED = f"{FAILED}diverged"


@dataclass
class Job:
    """What every run of one ``Runner.train`` call shares."""

    work: Path  # runs live in work/<key>
    corpus: str | None = None  # data.corpus of every corpus run (None: the search order)
    progress: Progress | None = None  # receives the trainer's progress dicts (+ "run")
    _data: dict[Any, Any] = field(default_factory=dict, repr=False)

    def token_data(self, cfg: Any) -> Any:
        """The tokenised corpus of ``cfg.data`` (loaded once per job)."""
        from attnlab.data.dataset import load_token_data

        key = (cfg.data.corpus, cfg.data.vocab_size)
        if key not in self._data:
            self._data[key] = load_token_data(cfg.data.corpus, vocab_size=cfg.data.vocab_size)
        return self._data[key]


class Executor(Protocol):
    """Trains pending runs side by side; see the module docstring."""

    name: str

    def slots(self, n_pending: int) -> int:
        """How many of ``n_pending`` runs train at once (1: the runner trains them itself)."""
        ...

    def run(self, pending: list[RunSpec], job: Job) -> dict[str, str]:
        """Train resolved ``pending`` (longest first); label -> done | diverged |
        interrupted | failed: <one line>."""
        ...

    def where(self) -> dict[str, Any]:
        """What the report says about where the runs of this command trained."""
        ...


def gpu_count() -> int:
    """CUDA devices visible to this process (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def cpu_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS says it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1


def default_workers(device: str = "auto") -> int:
    """One worker per CPU core (at most 8) when training on the CPU (``device`` cpu, or
    auto without a GPU); one per GPU with CUDA (``--jobs`` asks for more)."""
    n_gpu = gpu_count() if device != "cpu" else 0
    if n_gpu:
        return n_gpu
    return max(1, min(8, cpu_cores()))


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


@dataclass
class LocalPool:
    """Worker processes on this machine: ``workers`` of them (one thread each on the CPU;
    on CUDA shared round-robin by the visible GPUs)."""

    workers: int = 1  # --jobs
    device: str = "auto"  # where the runs train: auto | cpu | cuda
    name: str = "local"
    lang: str = "en"  # the language of the workers' own warnings (the command's)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise UsageError("workers must be at least 1, got %s", self.workers)

    def slots(self, n_pending: int) -> int:
        if n_pending < 2:
            return 1
        if self.device == "cuda" and not gpu_count():
            return 1  # nothing to place workers on: train in order, where the error is plain
        return min(self.workers, n_pending)

    def where(self) -> dict[str, Any]:
        return {"training workers": f"{self.workers} worker processes" if self.workers > 1
                else "this process"}

    def run(self, pending: list[RunSpec], job: Job) -> dict[str, str]:
        n = self.slots(len(pending))
        device_type = pending[0].config.train.device if pending else "cpu"
        envs = worker_envs(n, device_type, gpu_count() if device_type == "cuda" else 0,
                           os.environ.get("CUDA_VISIBLE_DEVICES"))
        ctx = mp.get_context("spawn")
        todo, out = ctx.Queue(), ctx.Queue()
        for spec in pending:
            todo.put(spec)
        for _ in range(n):
            todo.put(None)  # one stop sign per worker
        labels = owners(LABELS)  # the experiments' words for their runs: a worker has none
        procs = [ctx.Process(target=worker, args=(str(job.work), job.corpus, envs[i], todo,
                                                  out, i + 1, os.getpid(), self.lang, labels),
                                 daemon=True)
                 for i in range(n)]
        log.info("training %d runs on %d worker processes", len(pending), n)
        status: dict[str, str] = {}
        try:
            with _ctrl_c_held():
                for p in procs:
                    p.start()
            while len(status) < len(pending):
                if not _receive(out, job, status, n) and not any(p.is_alive() for p in procs):
                    break  # every worker died without reporting: the runner retries in order
            for p in procs:
                p.join()
        except BaseException as err:
            grace = STOP_GRACE_S if isinstance(err, KeyboardInterrupt) else 0.0
            _stop(procs, todo, out, job, status, n, grace)
            raise
        return status


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold SIGINT back while workers start: a spawned worker inherits the blocked signal
    and takes it, once it listens, as a quiet stop (not a traceback from the middle of its
    imports); this process gets a Ctrl-C of that moment when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _receive(out: Any, job: Job, status: dict[str, str], n: int) -> bool:
    """Handle one message of the workers (False: none came within ``POLL_S``)."""
    try:
        kind, payload = out.get(timeout=POLL_S)
    except queue.Empty:
        return False
    if kind == "progress":
        if job.progress is not None:
            job.progress(payload)
    elif kind == "start":  # the worker's own log lines do not reach this terminal
        label, me = payload
        log.info("training %s (worker %d of %d)", RunLabel(label), me, n)
    else:
        label, outcome = payload
        status[label] = outcome
        # a template per outcome, so that a language says "failed" in its words
        if outcome == FAILED_DIVERGED:
            log.warning("%s failed: diverged in a worker; it is trained again in order",
                        RunLabel(label))
        elif outcome.startswith(FAILED):
            log.warning("%s failed: %s in a worker; it is trained again in order",
                        RunLabel(label), outcome.removeprefix(FAILED))
    return True


def _stop(procs: list[Any], todo: Any, out: Any, job: Job, status: dict[str, str], n: int,
          grace: float) -> None:
    """End the workers within ``grace`` + ``STOP_WAIT_S`` seconds, reading their messages
    meanwhile (a worker cannot exit while its last messages wait in a full pipe)."""
    todo.cancel_join_thread()  # the stop signs may never be read: do not wait for readers

    def drain_until(deadline: float) -> None:
        while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
            try:
                _receive(out, job, status, n)
            except Exception:  # noqa: BLE001 - a half-sent message of a dying worker
                break

    drain_until(time.monotonic() + grace)
    for p in procs:
        if p.is_alive():
            p.terminate()  # SIGTERM: the trainer finishes its step and checkpoints
    drain_until(time.monotonic() + STOP_WAIT_S)
    for p in procs:
        if p.is_alive():
            log.warning("worker %s did not stop in time; killed", p.pid)
            p.kill()
        p.join(1.0)
    for q in (todo, out):
        q.close()


def end_with_parent(parent: int, poll_s: float = POLL_S) -> bool:
    """Make this worker end when ``parent`` (the pool's process) does; False if it is gone.

    A ``kill -9`` of the main command gives its workers no word, and they would go
    on training as orphans beside a rerun. A daemon thread watches the parent's pid
    (``os.getppid`` changes when the parent dies and the worker is adopted) and then
    stops the worker as the pool would: SIGTERM (the trainer finishes its step and
    checkpoints; between runs the worker just ends), and after ``STOP_WAIT_S`` an
    exit. Portable, unlike Linux's ``PR_SET_PDEATHSIG``, and not tied to the thread
    that started the worker.
    """
    if os.getppid() != parent:
        return False

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        log.warning("the pool's process %d is gone; this worker stops", parent)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(STOP_WAIT_S)
        os._exit(1)  # the trainer did not stop in time: nothing left to wait for

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    return True


def worker(work: str, corpus: str | None, env: dict[str, str], todo: Any, out: Any,
           me: int, parent: int | None = None, lang: str = "en",
           labels: dict[str, Entries] | None = None) -> None:
    """A worker process: its GPU (or the CPU), runs from ``todo`` until its stop sign, each
    through ``train_spec``; a status per run to ``out``. It ends when ``parent`` does
    (``end_with_parent``). Its warnings reach the terminal in ``lang``, a run's label said
    from ``labels`` (each owner's entries of the catalogue's ``label`` domain, as the parent
    has them); its progress goes to the parent, which writes it."""
    from attnlab.i18n.logs import speak

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    speak(lang)
    for owner, entries in (labels or {}).items():
        own(owner, {LABELS: entries})
    if parent is not None and not end_with_parent(parent):
        return  # the pool's process died before this worker started
    os.environ.update(env)  # before anything initialises CUDA
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # see _ctrl_c_held
        from attnlab.running.train_run import train_spec
        from attnlab.train.trainer import TrainingDiverged, TrainingInterrupted

        job = Job(Path(work), corpus, progress=lambda info: out.put(("progress", info)))
        while (spec := todo.get()) is not None:
            out.put(("start", (spec.label, me)))
            try:
                data = job.token_data(spec.config) if spec.data is None else None
                record = train_spec(spec, job.work, data=data, progress=job.progress)
                outcome = "diverged" if record.get("diverged") else "done"
            except TrainingDiverged:
                outcome = FAILED_DIVERGED
            except TrainingInterrupted:
                out.put(("result", (spec.label, "interrupted")))
                return  # checkpoint written; take no further job
            except Exception as err:  # noqa: BLE001 - reported; the runner raises it in order
                outcome = FAILED + one_line(err)
            out.put(("result", (spec.label, outcome)))
    except KeyboardInterrupt:  # Ctrl-C while between runs: nothing to save
        return
