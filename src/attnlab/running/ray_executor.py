"""The Ray executor: each pending run a Ray task on an existing cluster, resumable on any node.

``RayExecutor`` takes the resolved pending runs of a command (longest first,
as the local pool does) and submits each as one task asking for one CPU, or a
share of a GPU (``attnlab.running.cluster.task_resources``). A task trains through
the same function as every other path (``train_spec``), into ``--work/<key>``
on storage every node mounts at the same path, so a run gives the same bits
on the cluster as in order on one machine.

- **Data once.** The token data of each corpus (or a synthetic language) is
  put in Ray's object store once and handed to every task by reference: a
  compute node needs neither the corpus nor the network.
- **Before any run**, a preflight task on every node (``attnlab.running.ray_preflight``)
  checks it can train into ``--work`` with the driver's code.
- **Node death.** A task lost with its node is retried by Ray (``MAX_RETRIES``)
  and resumes from the run's last checkpoint (the trainer writes one at least
  every minute of wall time). SIGTERM from a preempting scheduler makes the
  trainer finish its step and checkpoint; the task then raises
  ``RunInterrupted``, which Ray retries like a lost node. Ray never has two
  attempts of one task in flight, and a retry that finds the dead attempt's
  run lock still held (a process not yet reaped, an NFS lock not yet expired)
  waits for it (``LOCK_WAIT_S``) instead of failing.
- **Ctrl-C** on the driver cancels the tasks in flight (``ray.cancel``: the
  trainer in each sees an interrupt, finishes its step, writes its checkpoint)
  and waits for them, so the same command resumes every run.
- **Progress as today**: the trainer's progress dicts, with the run's label and
  the node (``run`` and ``node``, which the progress printer names both), come back
  through a ``ray.util.queue.Queue`` the driver drains, not through Ray's log forwarding.
- **Results**: a task returns the run's record, which the driver keeps
  (``records``), so it does not depend on the shared file system's metadata
  caching to see a run finished. A failed run is one line and is not trained
  again on the driver.

Beyond the executor protocol's ``slots`` and ``run``, the runner and the suite
read four things where an executor has them (the local pool has none): ``local``
(False: no run trains in the driver's process, not a lone one, not a failed
one, which raises ``RunFailed``), ``records`` (the tasks' records by run key),
``resolve_run`` (devices resolved for the cluster) and ``where()`` (the report's
lines on the workers and nodes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlab.i18n.labels import RunLabel
from attnlab.running.cluster import cluster_device, runs_fitting, task_resources
from attnlab.running.executors import Job
from attnlab.running.spec import run_key

log = logging.getLogger(__name__)

MAX_RETRIES = 3  # attempts after the first, for a lost node or a preempted task
LOCK_WAIT_S = 300.0  # how long a retry waits for a dead attempt's run lock
POLL_S = 0.5  # how often the driver drains progress while no run finishes
STOP_WAIT_S = 120.0  # how long cancelled runs get to write their checkpoints


class RunInterrupted(Exception):  # noqa: N818 - a state, named as the trainer names it
    """A run stopped by SIGTERM at a step boundary, its checkpoint written: retried."""


class RayExecutor:
    """Trains resolved runs as Ray tasks on the cluster ``ray`` is connected to."""

    name = "ray"
    local = False  # every run trains on the cluster: one alone too, and a failed one is reported

    def __init__(self, ray: Any, device_type: str = "cpu", runs_per_gpu: int = 1,
                 max_retries: int = MAX_RETRIES) -> None:
        self.ray = ray
        self.device_type = device_type  # cpu | cuda: where every run trains (the cluster's)
        self.runs_per_gpu = runs_per_gpu
        self.max_retries = max_retries
        self.resources = task_resources(device_type, runs_per_gpu)
        self.records: dict[str, dict] = {}  # run key -> the record its task returned
        self.failed: dict[str, str] = {}  # run key -> its status line: not submitted again
        self.nodes: set[str] = set()  # Ray node ids that finished a run
        self._checked: dict[tuple[Path, bool], Exception | None] = {}  # preflight's failures
        self.precision = "auto"  # the command's --precision: bf16 on CPUs needs bf16 units
        self._starts: dict[str, int] = {}  # label -> attempts started (this command)
        self._objects: dict[int, tuple[Any, Any]] = {}  # id(data) -> (data, its object ref)

    def slots(self, n_pending: int) -> int:
        """How many of ``n_pending`` runs the cluster trains at once: per live node, the runs
        its own CPUs (and GPUs) fit, summed (a task never spans nodes)."""
        nodes = [n.get("Resources", {}) for n in self.ray.nodes() if n.get("Alive")]
        total = sum(runs_fitting(self.device_type, r, self.runs_per_gpu) for r in nodes)
        return max(1, min(n_pending, total))

    def resolve_run(self, cfg: Any) -> Any:
        """``cfg`` with device, precision and kernel resolved for the *cluster* (``auto``: CUDA when
        it has GPUs), not for the driver, which may have none."""
        from attnlab.train.runtime import resolve_on

        return resolve_on(cfg, cluster_device(cfg.train.device,
                                              {"GPU": self.device_type == "cuda"}))

    def where(self) -> dict[str, Any]:
        """What the report says about where the runs of this command trained."""
        resources = self.ray.cluster_resources()
        return {"training workers": f"a Ray cluster, {self.slots(10**6)} runs at once "
                f"({int(resources.get('CPU', 0))} CPUs, {int(resources.get('GPU', 0))} GPUs)",
                "training nodes": len(self.nodes)}

    def run(self, pending: list[Any], job: Job) -> dict[str, str]:
        """Train ``pending`` (resolved, longest first); ``{label: done | diverged |
        interrupted | failed: <one line>}``."""
        status = {s.label: self.failed[run_key(s)] for s in pending if run_key(s) in self.failed}
        pending = [s for s in pending if s.label not in status]
        if not pending:
            return status
        ray = self.ray
        work = Path(job.work).resolve()
        self.preflight(work)
        from ray.util.queue import Queue
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()  # the queue lives and dies with us,
        queue = Queue(actor_options={"num_cpus": 0, "scheduling_strategy":  # not a node
                                    NodeAffinitySchedulingStrategy(here, soft=False)})
        task = ray.remote(_train_task).options(
            **self.resources, max_retries=self.max_retries, retry_exceptions=[RunInterrupted])
        refs: dict[Any, Any] = {}
        for spec in pending:
            data, given = self._data(spec, job)
            bare = dataclasses.replace(spec, data=None) if given else spec
            refs[task.remote(bare, str(work), data, given, queue)] = spec
        left = list(refs)
        try:
            while left:
                ready, left = ray.wait(left, num_returns=1, timeout=POLL_S)
                self._drain(queue, job.progress)
                for ref in ready:
                    status[refs[ref].label] = self._outcome(ref, refs[ref])
            self._drain(queue, job.progress)
        except KeyboardInterrupt:
            self._cancel(left)
            raise
        finally:
            with contextlib.suppress(Exception):
                ray.kill(queue.actor)
        return status

    def preflight(self, work: Path, precision: str | None = None) -> None:
        """The preflight check of every node, once per ``--work`` folder and precision (None:
        the one given before): a failure is raised again as it was, never checked twice."""
        from attnlab.running.ray_preflight import preflight

        self.precision = self.precision if precision is None else precision
        bf16 = self.precision == "bf16" and self.device_type == "cpu"
        key = (work, bf16)
        if key not in self._checked:
            try:
                n = preflight(self.ray, work, "GPU" if self.device_type == "cuda" else "CPU",
                              bf16)
            except Exception as err:
                self._checked[key] = err
                raise
            log.info("preflight: %d node can train into %s" if n == 1 else
                     "preflight: %d nodes can train into %s", n, work)
            self._checked[key] = None
        if self._checked[key] is not None:
            raise self._checked[key]

    # -- the driver's side ----------------------------------------------------

    def _data(self, spec: Any, job: Job) -> tuple[Any, bool]:
        """The object ref of ``spec``'s token data (put once per data object), and whether
        the spec gave it itself (then it is part of the run's key)."""
        given = spec.data is not None
        data = spec.data if given else job.token_data(spec.config)
        if id(data) not in self._objects:  # the data object is kept, so its id stays its own
            self._objects[id(data)] = (data, self.ray.put(data))
        return self._objects[id(data)][1], given

    def _drain(self, queue: Any, progress: Callable[[dict], None] | None) -> None:
        from ray.exceptions import RayError

        try:
            batch = queue.get_nowait_batch(queue.qsize())
        except RayError as err:  # progress is lost with the queue, never the runs
            log.debug("progress queue unavailable: %s", _line(err))
            return
        for info in batch:
            if info.get("kind") == "start":  # a second start of a run is Ray's retry
                run = info["run"]
                self._starts[run] = attempt = self._starts.get(run, 0) + 1
                if attempt == 1:
                    log.info("training %s on node %s", RunLabel(run), info["node"])
                else:
                    log.info("training %s on node %s (attempt %d: resumes from its "
                             "checkpoint)", RunLabel(run), info["node"], attempt)
            elif progress is not None:
                progress(info)

    def _outcome(self, ref: Any, spec: Any) -> str:
        from ray import exceptions as rx

        try:
            out = self.ray.get(ref)
        except rx.TaskCancelledError:
            return "interrupted"
        except rx.RayTaskError as err:
            cause = getattr(err, "cause", None) or err
            if isinstance(cause, RunInterrupted):
                line = f"interrupted {self.max_retries + 1} times, the last: {_line(cause)}"
            else:
                line = f"{type(cause).__name__}: {_line(cause)}"
        except rx.RayError as err:  # its worker or node died on every attempt, and the like
            line = f"{type(err).__name__} after {self.max_retries + 1} attempts: {_line(err)}"
        else:
            self.records[run_key(spec)] = out["record"]
            self.nodes.add(out["node"])
            return "diverged" if out["record"].get("diverged") else "done"
        log.warning("%s failed on the cluster: %s", RunLabel(spec.label), line)
        self.failed[run_key(spec)] = f"failed: {line}"
        return self.failed[run_key(spec)]

    def _cancel(self, refs: list[Any]) -> None:
        """Cancel ``refs`` (an interrupt in each running task: it checkpoints) and wait."""
        for ref in refs:
            self.ray.cancel(ref, force=False)
        if refs:
            log.warning("interrupted: %d run on the cluster is writing its checkpoint"
                        if len(refs) == 1 else
                        "interrupted: %d runs on the cluster are writing their checkpoints",
                        len(refs))
            self.ray.wait(refs, num_returns=len(refs), timeout=STOP_WAIT_S)


def _line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__


# -- the node's side ----------------------------------------------------------


def _train_task(spec: Any, work: str, data: Any, given: bool, queue: Any) -> dict:
    """One run on a node: wait for a dead attempt's lock, train (or read), return the record."""
    import ray

    from attnlab.running.spec import run_key
    from attnlab.running.train_run import train_spec
    from attnlab.train.trainer import TrainingInterrupted

    ctx = ray.get_runtime_context()
    node = f"{ray.util.get_node_ip_address()} ({ctx.get_node_id()[:6]})"
    if given:
        spec, data = dataclasses.replace(spec, data=data), None
    _put(queue, {"kind": "start", "run": spec.label, "node": node})
    run_dir = Path(work) / run_key(spec)
    wait_for_lock(run_dir)

    def progress(info: dict) -> None:
        _put(queue, {**info, "run": spec.label, "node": node, "pid": os.getpid()})

    try:
        record = train_spec(spec, Path(work), data=data, progress=progress)
    except TrainingInterrupted as err:  # SIGTERM or a cancel: checkpoint written
        raise RunInterrupted(str(err)) from None
    return {"record": record, "node": ctx.get_node_id(), "host": socket.gethostname()}


def _put(queue: Any, info: dict) -> None:
    """Progress is worth a try, never a run: fire and forget, so it never blocks a training
    task, and a lost queue drops lines, not the training.

    Not ``queue.put_nowait``: it waits in ``ray.get`` for the queue actor's answer, and
    Ray lends the CPU of a task blocked in ``ray.get`` to another task, so a one-CPU node
    would train two runs at once. The call to the actor is sent and its answer dropped
    (one caller's calls to an actor run in the order sent: the lines keep their order).
    """
    try:
        queue.actor.put_nowait.remote(info)
    except Exception:  # noqa: BLE001
        log.debug("progress line lost", exc_info=True)


def wait_for_lock(run_dir: Path, timeout_s: float = LOCK_WAIT_S, poll_s: float = 0.5) -> None:
    """Wait until no process holds ``run_dir``'s run lock (a dead attempt's, on a node Ray
    has given up on), at most ``timeout_s``; then one line."""
    import fcntl

    from attnlab.train.rundir import LOCK

    path = run_dir / LOCK
    if not path.is_file():
        return
    deadline = time.monotonic() + timeout_s
    with open(path, "a") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{run_dir} is still locked {timeout_s:.0f} s after its previous "
                        "attempt was lost (a process of a dead node still running?)") from None
                time.sleep(poll_s)
                continue
            fcntl.flock(fh, fcntl.LOCK_UN)
            return
