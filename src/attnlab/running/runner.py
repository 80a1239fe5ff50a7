"""The one place that trains: planned runs, cached, in order or on an executor.

An experiment lists its training runs in ``plan(settings)`` as ``RunSpec``\\ s
(``attnlab.running.spec``) and reads them back in ``analyse(settings, results,
ctx)``. Between the two, ``Runner.train`` trains exactly the planned runs:

- each spec is resolved once (``resolve``: the device, the precision and the
  corpus it really uses, ``attnlab.train.runtime.resolve_run``) and keyed by the
  hash of that resolved config, so a run directory ``<work>/<key>`` names them,
  and a run started in fp32 on the CPU is never resumed in bf16 on a GPU. Runs
  given their token data directly (synthetic languages) add a hash of that
  data to the key;
- a finished run (its ``result.json``) is read, not trained again; an
  interrupted one resumes from its checkpoint; two specs with the same key
  train once;
- the pending runs, longest first, go to the runner's executor
  (``attnlab.running.executors``: local worker processes, one thread each on the
  CPU, one per GPU on CUDA); whatever it did not finish, and everything when it
  offers one slot, is trained here in order. Every path trains through
  ``attnlab.running.train_run.train_spec`` on the same thread count, so the results are
  bitwise those of training the runs one after another;
- a run whose spec says ``may_diverge`` and whose loss diverges is recorded as
  diverged (the trainer's ``diverged.json``, so a rerun does not train it
  again); for any other spec divergence raises, like every failure.

``Results`` maps each label to the trainer's result record (with
``run_dir``), or to ``{"diverged": True, ...}``; ``Results.seeds(label)`` gives
the records of ``label seed 0``, ``label seed 1``, … in seed order.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.i18n.labels import RunLabel, split
from attnlab.running import train_run as worker_side
from attnlab.running.cluster import RunFailed
from attnlab.running.executors import FAILED, FAILED_DIVERGED, Executor, Job, LocalPool
from attnlab.running.spec import RunSpec, run_key, seeded, train_cost
from attnlab.train.progress import Progress
from attnlab.train.rundir import DIVERGED

log = logging.getLogger(__name__)

__all__ = ["DIVERGED", "Results", "RunSpec", "Runner", "seeded", "train_cost"]


class Results(Mapping[str, dict]):
    """Finished runs by label."""

    def __init__(self, records: dict[str, dict]) -> None:
        self._records = dict(records)

    def __getitem__(self, label: str) -> dict:
        try:
            return self._records[label]
        except KeyError:
            raise KeyError(f"no planned run is labelled {label!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def seeds(self, label: str) -> list[dict]:
        """The records of ``"<label> seed <s>"`` in seed order (at least one)."""
        found = sorted((seed, rec) for key, rec in self._records.items()
                       for phrase, seed in [split(key)] if phrase == label and seed is not None)
        if not found:
            raise KeyError(f"no planned run is labelled {label!r} seed N")
        return [rec for _, rec in found]


@dataclass
class Runner:
    """Trains planned runs under ``work``; see the module docstring. Built once per
    command: it holds the one token-data cache of that command."""

    work: Path  # runs live in work/<key>
    device: str = "auto"  # train.device of every run: auto | cpu | cuda
    corpus: str | None = None  # data.corpus of every corpus run (None: the spec's search order)
    executor: Executor = field(default_factory=LocalPool)  # where pending runs train side by side
    progress: Progress | None = None  # receives the trainer's progress dicts (+ "run": label)
    precision: str = "auto"  # train.precision of every run that leaves it auto: auto | fp32 | bf16

    def __post_init__(self) -> None:
        self.work = Path(self.work)
        self.job = Job(self.work, self.corpus, self.progress)

    # -- keys -----------------------------------------------------------------

    def resolve(self, spec: RunSpec) -> RunSpec:
        """``spec`` with this runner's device, precision and corpus where the spec leaves
        them open ("auto", None), then device, precision and kernel resolved."""
        from attnlab.train.runtime import resolve_run

        cfg = spec.config
        device = self.device if cfg.train.device == "auto" else cfg.train.device
        precision = self.precision if cfg.train.precision == "auto" else cfg.train.precision
        train = dataclasses.replace(cfg.train, device=device, precision=precision)
        data = cfg.data if spec.data is not None else \
            dataclasses.replace(cfg.data, corpus=cfg.data.corpus or self.corpus)
        resolve = getattr(self.executor, "resolve_run", resolve_run)  # a cluster's devices
        return dataclasses.replace(spec, config=resolve(cfg.replace(train=train, data=data)))

    def precision_used(self) -> str:
        """The precision runs that leave it open train in (``fp32``/``bf16``), for the report."""
        from attnlab.train.run_config import RunConfig

        return self.resolve(RunSpec("precision", RunConfig(), data=())).config.train.precision

    def resolve_all(self, specs: list[RunSpec]) -> list[RunSpec]:
        """Every spec resolved; labels must be unique."""
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            dup = sorted({x for x in labels if labels.count(x) > 1})
            raise ValueError(f"planned runs must have unique labels; repeated: {dup[:3]}")
        return [self.resolve(s) for s in specs]

    def key(self, spec: RunSpec) -> str:
        """The run directory name of a resolved ``spec``."""
        return run_key(spec)

    def finished(self, spec: RunSpec) -> dict | None:
        """The stored record of a resolved ``spec`` if it finished, or if it diverged and its
        spec allows that (``{"diverged": True, ...}``); else None."""
        return worker_side.finished(spec, self.work)

    def pending(self, resolved: list[RunSpec]) -> list[RunSpec]:
        """The resolved specs that have not finished, each run once, longest first (the
        order the executor takes them)."""
        todo: dict[str, RunSpec] = {}
        for spec in resolved:
            if self.finished(spec) is None:
                todo.setdefault(self.key(spec), spec)  # the same run planned twice trains once
        return sorted(todo.values(), key=lambda s: -train_cost(s.config))

    def slots(self, n_pending: int) -> int:
        """How many runs the executor trains at once (1: in this process, in order)."""
        return self.executor.slots(n_pending)

    def resolve_device(self) -> Any:
        """The ``torch.device`` this runner's runs train on."""
        from attnlab.train.runtime import resolve_device

        return resolve_device(self.device)

    # -- training -------------------------------------------------------------

    def train(self, specs: list[RunSpec], *, resolved: bool = False,
              retry: bool = True) -> Results:
        """Train every planned run that has not finished; the records of all, by label.

        Runs the executor did not finish (a failure, no executor slots) are trained here
        in order, where a failure raises. ``resolved``: ``specs`` come from
        ``resolve_all`` already. ``retry=False`` stops after the executor, leaving
        failures for a later ``train`` (a whole suite's runs at once, whose experiments
        then retry and report their own) and returns the finished records only.
        """
        specs = specs if resolved else self.resolve_all(specs)
        pending = self.pending(specs)
        status: dict[str, str] = {}
        local = getattr(self.executor, "local", True)  # False: a cluster; nothing trains here
        if pending and (self.slots(len(pending)) > 1 or not local):
            status = self.executor.run(pending, self.job)
        # A cluster's tasks return their records: no reliance on the shared storage's caching.
        records = getattr(self.executor, "records", {})

        def done(s: RunSpec) -> dict | None:
            return records.get(self.key(s)) or self.finished(s)

        if not retry:
            return Results({s.label: rec for s in specs if (rec := done(s))})
        for spec in pending:
            if done(spec) is None:
                if spec.label in status:
                    if not local:  # a cluster's failure: reported, not trained here
                        raise RunFailed(f"{spec.label}: {status[spec.label]} (on the "
                                        f"{self.executor.name} executor; not trained here)")
                    self._again(spec, status[spec.label])
                self.train_one(spec)
        return Results({s.label: done(s) or self.train_one(s) for s in specs})

    def _again(self, spec: RunSpec, outcome: str) -> None:
        """Say that ``spec``, which ended ``outcome`` on the executor, is trained here (a
        template per outcome, so that a language says "failed" in its words)."""
        name = self.executor.name
        if outcome == FAILED_DIVERGED:
            log.info("%s: failed: diverged on the %s executor; training it here, in order",
                     RunLabel(spec.label), name)
        elif outcome.startswith(FAILED):
            log.info("%s: failed: %s on the %s executor; training it here, in order",
                     RunLabel(spec.label), outcome.removeprefix(FAILED), name)
        else:
            log.info("%s: %s on the %s executor; training it here, in order",
                     RunLabel(spec.label), outcome, name)

    def train_one(self, spec: RunSpec) -> dict:
        """Train one resolved ``spec`` in this process (or read it if it finished)."""
        done = self.finished(spec)
        if done is not None:
            return done
        data = self.token_data(spec.config) if spec.data is None else None
        return worker_side.train_spec(spec, self.work, data=data, progress=self.progress)

    def token_data(self, cfg: Any) -> Any:
        """The tokenised corpus of ``cfg.data`` (loaded once per runner)."""
        return self.job.token_data(cfg)
