"""What several experiment commands share (``run``, ``reproduce``, ``report``): their
options, their progress lines, and the runner they build once per command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from attnlab.cli.words import Words
from attnlab.errors import UsageError
from attnlab.running.cluster import add_cluster_options
from attnlab.train.progress import ProgressPrinter, format_duration


class SuiteProgress:
    """Progress sink: a line per experiment event, the trainer's lines via ProgressPrinter."""

    def __init__(self, stream: TextIO, say: Words | None = None) -> None:
        self.stream = stream
        self.say = say or Words("en")
        self.printer = ProgressPrinter(stream, lang=self.say.lang)

    def __call__(self, info: dict[str, Any]) -> None:
        kind = info.get("kind")
        if kind in ("experiment", "suite"):
            self.stream.write((experiment_line(info, self.say) if kind == "experiment" else
                               suite_line(info, self.say)) + "\n")
            self.stream.flush()
        elif kind in ("train", "eval"):
            self.printer(info)


def experiment_line(info: dict[str, Any], say: Words | None = None) -> str:
    """``[2/7] sqrt_dk: done in 4m05s`` and the like, in ``say``'s language (English).

    >>> experiment_line({"index": 1, "total": 2, "name": "params", "event": "skipped",
    ...                  "reason": "no corpus"})
    '[1/2] params: skipped (no corpus)'
    """
    say = say or Words("en")
    head = f"[{info['index']}/{info['total']}] {info['name']}"
    event = info["event"]
    if event == "start":
        return say("progress.start", head=head, title=_title(info, say.lang))
    if event == "done":
        if info.get("reused"):
            return say("progress.reused", head=head)
        return say("progress.done", head=head, time=format_duration(info.get("wall_s", 0.0)))
    if event == "failed":
        return say("progress.failed", head=head, reason=info.get("reason", ""))
    event = say(f"progress.{event}") if event == "skipped" else event
    return say("progress.other", head=head, event=event, reason=info.get("reason", ""))


def _title(info: dict[str, Any], lang: str) -> str:
    """The experiment's title in ``lang`` where the report's catalogue has it (a title that is
    not the experiment's English one, the extra round's say, stays as it is)."""
    title = info.get("title", "")
    if lang == "en":
        return title
    from attnlab.report.words import has, t

    key = f"title.{info['name']}"
    return t(key, lang) if has(key) and t(key, "en") == title else title


def suite_line(info: dict[str, Any], say: Words | None = None) -> str:
    """``training 36 of 120 planned runs on 2 worker processes`` and the like.

    >>> suite_line({"event": "train", "runs": 4, "pending": 0, "workers": 1})
    'training: all 4 planned runs finished earlier'
    """
    say = say or Words("en")
    event = info.get("event")
    if event == "plan":
        return say("progress.plan", count=len(info["experiments"]))
    if event in ("train", "extra"):
        where = say("progress.workers", workers=info["workers"]) if info["workers"] > 1 \
            else say("progress.this_process")
    if event == "train":
        if not info["pending"]:
            return say("progress.all_finished", runs=info["runs"])
        if info.get("executor") == "ray":
            where = say("progress.ray", workers=info["workers"])
        return say("progress.training", pending=info["pending"], runs=info["runs"], where=where)
    if event == "extra":
        because = "; ".join(f"{name}: {', '.join(ids)}" for name, ids in info["because"].items())
        what = say("progress.extra_training", pending=info["pending"], runs=info["runs"],
                   where=where) if info["pending"] else \
            say("progress.extra_finished", runs=info["runs"])
        return say("progress.extra", what=what, because=because)
    if event == "estimate":
        return info["text"]
    return str(info)


def add_common(p: argparse.ArgumentParser, profiles: list[str],
               say: Words | None = None) -> None:
    """Options shared by ``run`` and ``reproduce``, their help in ``say``'s language."""
    from attnlab.bounds import whole
    from attnlab.kit.extra_seeds import EXTRA_SEEDS

    say = say or Words("en")
    p.add_argument("--profile", choices=profiles, default="quick", help=say("common.profile"))
    p.add_argument("--seeds", type=whole("--seeds"), default=None, help=say("common.seeds"))
    p.add_argument("--extra-seeds", type=whole("--extra-seeds"), default=None, metavar="N",
                   help=say("common.extra_seeds", default=EXTRA_SEEDS))
    p.add_argument("--out", default=None, help=say("common.out"))
    p.add_argument("--work", default="runs", help=say("common.work"))
    p.add_argument("--corpus", default=None, help=say("common.corpus"))
    p.add_argument("--jobs", type=whole("--jobs"), default=None, help=say("common.jobs"))
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help=say("common.device"))
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto",
                   help=say("common.precision"))
    add_cluster_options(p)  # --cluster ray and its options (attnlab.running.cluster)
    cluster_words(p, say)
    from attnlab.cli.confirm import add_yes

    add_yes(p, say)  # more than CONFIRM_RUNS runs: asked, or refused with no terminal
    from attnlab.cli.outputs import add_replace

    add_replace(p, say)  # --out holding another profile's results: refused, or replaced


CLUSTER_OPTIONS = ("cluster", "address", "runs_per_gpu")  # add_cluster_options's, by dest


def cluster_words(p: argparse.ArgumentParser, say: Words) -> None:
    """The help of ``add_cluster_options``'s options in ``say``'s language: its own English
    (which the catalogue's ``cluster.*`` English repeats; a test keeps them equal), else the
    catalogue's."""
    from attnlab.running.cluster import INSTALL

    if say.lang == "en":
        return
    for action in p._actions:
        if action.dest in CLUSTER_OPTIONS:
            action.help = say(f"cluster.{action.dest}", install=INSTALL)


def check_seeds(seeds: int | None, extra_seeds: int | None = 0,
                say: Words | None = None) -> None:
    """``--seeds`` and ``--extra-seeds`` in their ranges (``attnlab.bounds``): else one
    UsageError line (argparse checks them too; this is for callers that build ``args``)."""
    from attnlab.bounds import WHOLE
    from attnlab.kit.extra_seeds import check_extra_seeds

    lo, hi = WHOLE["--seeds"]
    if seeds is not None and not lo <= seeds <= hi:
        say = say or Words("en")
        raise UsageError(say("common.seeds_range", low=lo, high=say.count(hi),
                             value=say.count(seeds)))
    if extra_seeds is not None:
        check_extra_seeds(extra_seeds)


def resolve_jobs(jobs: int | None, device: str = "auto", say: Words | None = None) -> int:
    """``--jobs``: the number given (at least 1), or one per core (per GPU on CUDA)."""
    from attnlab.running.executors import default_workers

    if jobs is None:
        return default_workers(device)
    if jobs < 1:
        raise UsageError((say or Words("en"))("common.jobs_low", value=jobs))
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
    local worker processes. In a language other than English every experiment's words are
    owned first: the runs' labels are said from them, and a plan may hold another
    experiment's run (induction trains ladder's row 10)."""
    from attnlab.cli.words import lang_of
    from attnlab.kit.registry import own_all_words
    from attnlab.running.executors import LocalPool
    from attnlab.running.runner import Runner

    say = lang_of(args)
    if say.lang != "en":
        own_all_words()
    precision = getattr(args, "precision", "auto")
    cluster = cluster_executor(args)  # --cluster ray: runs on the Ray cluster
    if cluster is not None:
        return Runner(Path(args.work), args.device, args.corpus, cluster, progress, precision)
    if not getattr(args, "report_only", False):  # a report trains nothing
        check_local_precision(precision, args.device)
    workers = resolve_jobs(args.jobs, args.device, say)
    return Runner(Path(args.work), args.device, args.corpus,
                  LocalPool(workers, args.device, lang=say.lang), progress, precision)


def check_local_precision(precision: str, device: str) -> None:
    """``--precision bf16`` training on this machine's CPU: refused in one line where the
    CPU has no bf16 units (``attnlab.train.runtime.check_precision``)."""
    from attnlab.train.runtime import check_precision, resolve_device, resolve_precision

    kind = resolve_device(device)
    check_precision(resolve_precision(precision, kind), kind.type)


def out_dir(args: argparse.Namespace) -> Path:
    """``--out``, or ``reports/<profile>``."""
    return Path(args.out) if args.out else Path("reports") / args.profile
