"""What several experiment commands share (``run``, ``reproduce``, ``report``): their
options, their progress lines, and the runner they build once per command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from attnlab.errors import UsageError
from attnlab.running.cluster import add_cluster_options
from attnlab.train.progress import ProgressPrinter, format_duration


class SuiteProgress:
    """Progress sink: a line per experiment event, the trainer's lines via ProgressPrinter."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.printer = ProgressPrinter(stream)

    def __call__(self, info: dict[str, Any]) -> None:
        kind = info.get("kind")
        if kind in ("experiment", "suite"):
            self.stream.write((experiment_line(info) if kind == "experiment" else
                               suite_line(info)) + "\n")
            self.stream.flush()
        elif kind in ("train", "eval"):
            self.printer(info)


def experiment_line(info: dict[str, Any]) -> str:
    """``[2/7] sqrt_dk: done in 4m05s`` and the like.

    >>> experiment_line({"index": 1, "total": 2, "name": "params", "event": "skipped",
    ...                  "reason": "no corpus"})
    '[1/2] params: skipped (no corpus)'
    """
    head = f"[{info['index']}/{info['total']}] {info['name']}"
    event = info["event"]
    if event == "start":
        return f"{head}: {info.get('title', '')} ..."
    if event == "done":
        how = "reused the finished record" if info.get("reused") else \
            f"done in {format_duration(info.get('wall_s', 0.0))}"
        return f"{head}: {how}"
    if event == "failed":
        return f"{head}: FAILED ({info.get('reason', '')})"
    return f"{head}: {event} ({info.get('reason', '')})"


def suite_line(info: dict[str, Any]) -> str:
    """``training 36 of 120 planned runs on 2 worker processes`` and the like.

    >>> suite_line({"event": "train", "runs": 4, "pending": 0, "workers": 1})
    'training: all 4 planned runs finished earlier'
    """
    if info.get("event") == "plan":
        return f"planning the runs of {len(info['experiments'])} experiment(s)"
    if info.get("event") == "train":
        if not info["pending"]:
            return f"training: all {info['runs']} planned runs finished earlier"
        where = f"{info['workers']} worker processes" if info["workers"] > 1 else "this process"
        if info.get("executor") == "ray":
            where = f"the Ray cluster ({info['workers']} at once)"
        return f"training {info['pending']} of {info['runs']} planned runs on {where}"
    if info.get("event") == "extra":
        because = "; ".join(f"{name}: {', '.join(ids)}" for name, ids in info["because"].items())
        where = f"{info['workers']} worker processes" if info["workers"] > 1 else "this process"
        what = f"training {info['pending']} of {info['runs']} runs on {where}" \
            if info["pending"] else f"all {info['runs']} runs finished earlier"
        return f"extra seeds: {what}; inconclusive on the planned seeds: {because}"
    if info.get("event") == "estimate":
        return info["text"]
    return str(info)


def add_common(p: argparse.ArgumentParser, profiles: list[str]) -> None:
    """Options shared by ``run`` and ``reproduce``."""
    from attnlab.bounds import whole
    from attnlab.kit.extra_seeds import EXTRA_SEEDS

    p.add_argument("--profile", choices=profiles, default="quick",
                   help="full: the chapter's settings; quick: scaled down for a 2-core CPU "
                   "(default); micro: seconds, for tests")
    p.add_argument("--seeds", type=whole("--seeds"), default=None,
                   help="repeat every training run with seeds 0..N-1 (tables show mean ± std; "
                   "default: the profile's, 3 for quick and full; a claim needs 3; 1 to 1,000)")
    p.add_argument("--extra-seeds", type=whole("--extra-seeds"), default=None, metavar="N",
                   help="once, give every experiment with a training claim inconclusive on 3 "
                   f"or more seeds N more seeds and decide its claims again (default "
                   f"{EXTRA_SEEDS}, and 0 at quick, whose verdicts stay on its planned seeds "
                   "to keep its wall time; 0 turns this off; at most 1,000)")
    p.add_argument("--out", default=None,
                   help="folder for results and the report (default: reports/<profile>)")
    p.add_argument("--work", default="runs",
                   help="folder caching the training runs as <work>/<hash> (default: runs)")
    p.add_argument("--corpus", default=None,
                   help="corpus text file (default: $ATTNLAB_DATA, the cache, or a download)")
    p.add_argument("--jobs", type=whole("--jobs"), default=None,
                   help="train on N one-thread worker processes side by side (default: one "
                   "per CPU core; with CUDA one per GPU, and more share the GPUs "
                   "round-robin; 1 = in this process; at most 512); with reproduce "
                   "--estimate: the wall time on N workers side by side (a cluster's size), "
                   "each run's steps still timed on this machine")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where runs train and analyses measure (default auto: CUDA when "
                   "present)")
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto",
                   help="arithmetic of training (default auto: bf16 autocast on CUDA, fp32 on "
                   "the CPU); bf16 on a CPU needs bf16 units (AVX512-BF16 or AMX)")
    add_cluster_options(p)  # --cluster ray and its options (attnlab.running.cluster)
    from attnlab.cli.confirm import add_yes

    add_yes(p)  # more than CONFIRM_RUNS runs: asked, or refused with no terminal
    from attnlab.cli.outputs import add_replace

    add_replace(p)  # --out holding another profile's results: refused, or with it replaced


def check_seeds(seeds: int | None, extra_seeds: int | None = 0) -> None:
    """``--seeds`` and ``--extra-seeds`` in their ranges (``attnlab.bounds``): else one
    UsageError line (argparse checks them too; this is for callers that build ``args``)."""
    from attnlab.bounds import WHOLE
    from attnlab.kit.extra_seeds import check_extra_seeds

    lo, hi = WHOLE["--seeds"]
    if seeds is not None and not lo <= seeds <= hi:
        raise UsageError(f"--seeds must be in [{lo}, {hi:,}], got {seeds:,}")
    if extra_seeds is not None:
        check_extra_seeds(extra_seeds)


def resolve_jobs(jobs: int | None, device: str = "auto") -> int:
    """``--jobs``: the number given (at least 1), or one per core (per GPU on CUDA)."""
    from attnlab.running.executors import default_workers

    if jobs is None:
        return default_workers(device)
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    return jobs


def cluster_executor(args: argparse.Namespace) -> Any | None:
    """The Ray executor when ``--cluster``/``ATTNLAB_CLUSTER`` says ray (connected, its device
    resolved from the cluster's resources, every node's preflight passed once, before any
    run: a node that cannot train into ``--work`` is one line, exit 2), else None (the local
    pool)."""
    from attnlab.running.cluster import (
        cluster_address,
        cluster_device,
        cluster_kind,
        connect,
        task_resources,
    )

    if cluster_kind(getattr(args, "cluster", None)) != "ray":
        return None
    runs_per_gpu = getattr(args, "runs_per_gpu", 1)
    task_resources("cuda", runs_per_gpu)  # a bad --runs-per-gpu before any connection
    address = cluster_address(getattr(args, "address", None))  # parsed before any use
    ray = connect(address)
    from attnlab.running.ray_executor import RayExecutor

    device = cluster_device(args.device, ray.cluster_resources())
    executor = RayExecutor(ray, device, runs_per_gpu)
    if not (getattr(args, "report_only", False) or getattr(args, "estimate", False)):
        executor.preflight(Path(args.work).resolve(),  # once, before any run
                           getattr(args, "precision", "auto"))
    return executor


def build_runner(args: argparse.Namespace, progress: Any = None) -> Any:
    """The command's one ``Runner``: ``--work``, ``--device``, ``--corpus``, and ``--jobs``
    local worker processes."""
    from attnlab.running.executors import LocalPool
    from attnlab.running.runner import Runner

    precision = getattr(args, "precision", "auto")
    cluster = cluster_executor(args)  # --cluster ray: runs on the Ray cluster
    if cluster is not None:
        return Runner(Path(args.work), args.device, args.corpus, cluster, progress, precision)
    if not getattr(args, "report_only", False):  # a report trains nothing
        check_local_precision(precision, args.device)
    workers = resolve_jobs(args.jobs, args.device)
    return Runner(Path(args.work), args.device, args.corpus, LocalPool(workers, args.device),
                  progress, precision)


def check_local_precision(precision: str, device: str) -> None:
    """``--precision bf16`` training on this machine's CPU: refused in one line where the
    CPU has no bf16 units (``attnlab.train.runtime.check_precision``)."""
    from attnlab.train.runtime import check_precision, resolve_device, resolve_precision

    kind = resolve_device(device)
    check_precision(resolve_precision(precision, kind), kind.type)


def out_dir(args: argparse.Namespace) -> Path:
    """``--out``, or ``reports/<profile>``."""
    return Path(args.out) if args.out else Path("reports") / args.profile
