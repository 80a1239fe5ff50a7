"""The one place that trains: an experiment's planned runs, cached, in order or side by side.

An experiment lists its training runs in ``plan(settings)`` as ``RunSpec``\\ s
(the full ``RunConfig`` of every run, every seed included, plus a label), and
reads them back in ``analyse(settings, results, ctx)``. Between the two,
``Runner.train`` trains exactly the planned runs:

- each run is keyed by the hash of its *resolved* config: the device, the
  precision and the corpus it really uses (``attnlab.train.runtime.resolve_run``),
  so a run directory ``<work>/<hash>`` names them, and a run started in fp32 on
  the CPU is never resumed in bf16 on a GPU. Runs given their token data
  directly (synthetic languages) add a hash of that data to the key;
- a finished run (``result.json``) is read, not trained again; an interrupted
  one resumes from its checkpoint; two specs with the same key train once;
- in order in this process (``workers=1``), or on a pool of worker processes
  (``attnlab.experiments.pool``): one thread each on the CPU, one per visible
  GPU on CUDA. The pool gets the longest runs first, so no worker idles at
  the end while another finishes a long run; the results are bitwise those of
  training in order (each run seeds itself and runs on one thread);
- a run whose spec says ``may_diverge`` and whose loss diverges is recorded as
  diverged (from ``diverged.json`` beside its checkpoint, so a rerun does not
  train it again); for any other spec divergence raises, like every failure.

``Results`` maps each label to the trainer's result record (with
``run_dir``), or to ``{"diverged": True, ...}``; ``Results.seeds(label)`` gives
the records of ``label seed 0``, ``label seed 1``, … in seed order.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.errors import UsageError
from attnlab.files import write_json
from attnlab.train.config import RunConfig, run_hash

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]
DIVERGED = "diverged.json"  # the trainer's marker of a run that stopped for divergence


@dataclass(frozen=True)
class RunSpec:
    """One planned training run."""

    label: str  # unique within an experiment, e.g. "ladder row 5 seed 0"
    config: RunConfig  # everything that defines the run (device "auto": the runner decides)
    data: Any = None  # token data given directly (synthetic languages): .train, .held arrays
    may_diverge: bool = False  # a non-finite loss is a result (recorded), not an error


def seeded(label: str, config: RunConfig, seeds: int, *, data: Any = None,
           may_diverge: bool = False) -> list[RunSpec]:
    """The run ``config`` with seeds 0..seeds-1, labelled ``"<label> seed <s>"``.

    >>> [s.label for s in seeded("row 1", RunConfig(), 2)]
    ['row 1 seed 0', 'row 1 seed 1']
    """
    if seeds < 1:
        raise UsageError(f"seeds must be at least 1, got {seeds}")
    return [RunSpec(f"{label} seed {s}",
                    config.replace(train=dataclasses.replace(config.train, seed=s)),
                    data, may_diverge) for s in range(seeds)]


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
        pattern = re.compile(re.escape(label) + r" seed (\d+)$")
        found = sorted((int(m.group(1)), rec) for key, rec in self._records.items()
                       if (m := pattern.match(key)))
        if not found:
            raise KeyError(f"no planned run is labelled {label!r} seed N")
        return [rec for _, rec in found]


def data_fingerprint(data: Any) -> str:
    """A short content hash of directly given token data (train + held arrays)."""
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    for part in (data.train, data.held):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()[:8]


def train_cost(cfg: RunConfig) -> float:
    """A rough FLOP count of a run (6 · parameters + attention, per token, times tokens):
    only used to hand the pool its longest runs first."""
    m, t = cfg.model, cfg.train
    per_block = 12 * m.d_model**2 if m.mlp else 4 * m.d_model**2
    flops_per_token = 6 * (m.n_layer * per_block + m.d_model * m.vocab_size) \
        + 12 * m.n_layer * m.n_ctx * m.d_model
    return float(t.steps * t.batch_size * m.n_ctx * flops_per_token)


@dataclass
class Runner:
    """Trains planned runs under ``work``; see the module docstring."""

    work: Path  # runs live in work/<key>
    device: str = "auto"  # train.device of every run: auto | cpu | cuda
    corpus: str | None = None  # data.corpus of every corpus run (None: the spec's search order)
    workers: int = 1  # >1: a pool of that many processes (on CUDA shared round-robin by GPUs)
    progress: Progress | None = None  # receives the trainer's progress dicts (+ "run": label)

    def __post_init__(self) -> None:
        self.work = Path(self.work)
        self._data: dict[Any, Any] = {}

    # -- keys -----------------------------------------------------------------

    def resolve(self, spec: RunSpec) -> RunSpec:
        """``spec`` with this runner's device and corpus where the spec leaves them open
        ("auto", None), then device and precision resolved."""
        from attnlab.train.runtime import resolve_run

        cfg = spec.config
        device = self.device if cfg.train.device == "auto" else cfg.train.device
        train = dataclasses.replace(cfg.train, device=device)
        data = cfg.data if spec.data is not None else \
            dataclasses.replace(cfg.data, corpus=cfg.data.corpus or self.corpus)
        return dataclasses.replace(spec, config=resolve_run(cfg.replace(train=train, data=data)))

    def key(self, spec: RunSpec) -> str:
        """The run directory name of ``spec`` (after ``resolve``)."""
        key = run_hash(spec.config)
        return key if spec.data is None else f"{key}-{data_fingerprint(spec.data)}"

    def finished(self, spec: RunSpec) -> dict | None:
        """The stored record of a resolved ``spec`` if it finished, or if it diverged and its
        spec allows that (``{"diverged": True, ...}``); else None."""
        from attnlab.train.rundir import read_json_object

        run_dir = self.work / self.key(spec)
        names = ("result.json", DIVERGED) if spec.may_diverge else ("result.json",)
        for name in names:
            path = run_dir / name
            if path.is_file():
                record = read_json_object(path)  # damaged: one DataError naming the file
                if name == DIVERGED:
                    record = {**record, "diverged": True}
                return {**record, "run_dir": str(run_dir)}
        return None

    # -- training -------------------------------------------------------------

    def train(self, specs: list[RunSpec]) -> Results:
        """Train every planned run that has not finished; the records of all, by label.

        Runs the pool did not finish (none, a failure, no pool) are trained here in order,
        where a failure raises.
        """
        resolved = self._resolved(specs)
        pending = self._pending(resolved)
        if self.pool_size(len(pending)) > 1:
            self._train_on_pool(pending)
        for spec in pending:
            if self.finished(spec) is None:
                self.train_one(spec)
        return Results({s.label: self.finished(s) or self.train_one(s) for s in resolved})

    def prefetch(self, specs: list[RunSpec]) -> int:
        """Train the pending runs of ``specs`` on the pool (a whole suite's at once, so no
        core idles between experiments); failures are left for ``train`` to raise. Returns
        how many runs were pending."""
        pending = self._pending(self._resolved(specs))
        if self.pool_size(len(pending)) > 1:
            self._train_on_pool(pending)
        return len(pending)

    def pending(self, specs: list[RunSpec]) -> list[RunSpec]:
        """The resolved specs of ``specs`` that have not finished, each run once, longest
        first (the order the pool takes them)."""
        return self._pending([self.resolve(s) for s in specs])

    def _resolved(self, specs: list[RunSpec]) -> list[RunSpec]:
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            dup = sorted({x for x in labels if labels.count(x) > 1})
            raise ValueError(f"planned runs must have unique labels; repeated: {dup[:3]}")
        return [self.resolve(s) for s in specs]

    def _pending(self, resolved: list[RunSpec]) -> list[RunSpec]:
        todo: dict[str, RunSpec] = {}
        for spec in resolved:
            if self.finished(spec) is None:
                todo.setdefault(self.key(spec), spec)  # the same run planned twice trains once
        return sorted(todo.values(), key=lambda s: -train_cost(s.config))

    def resolve_device(self) -> Any:
        """The ``torch.device`` this runner's runs train on."""
        from attnlab.train.runtime import resolve_device

        return resolve_device(self.device)

    def pool_size(self, n_runs: int) -> int:
        """How many worker processes ``n_runs`` pending runs get (1: train in this process)."""
        from attnlab.experiments.pool import gpu_count

        if n_runs < 2:
            return 1
        if self.resolve_device().type == "cuda" and not gpu_count():
            return 1  # nothing to place workers on: train here, where the error is plain
        return min(self.workers, n_runs)

    def _train_on_pool(self, pending: list[RunSpec]) -> None:
        from attnlab.experiments.pool import run_pool

        n = self.pool_size(len(pending))
        log.info("training %d runs on %d worker processes", len(pending), n)
        run_pool(pending, self, n)

    def train_one(self, spec: RunSpec) -> dict:
        """Train one resolved ``spec`` in this process (or read it if it finished)."""
        from attnlab.train.trainer import TrainingDiverged
        from attnlab.train.trainer import train as train_run

        done = self.finished(spec)
        if done is not None:
            return done
        run_dir = self.work / self.key(spec)
        data = spec.data if spec.data is not None else self.token_data(spec.config)

        def progress(info: dict) -> None:
            if self.progress is not None:
                self.progress({**info, "run": spec.label})

        log.info("training %s (%s)", spec.label, run_dir)
        try:
            record = train_run(spec.config, run_dir, data=data, progress=progress)
        except TrainingDiverged as err:
            if not spec.may_diverge:
                raise
            log.warning("%s diverged: %s", spec.label, err)
            if not (run_dir / DIVERGED).is_file():  # a trainer that does not write it itself
                write_json(run_dir / DIVERGED, {"message": str(err).splitlines()[0],
                                                "run_hash": run_hash(spec.config)})
            return self.finished(spec) or {}
        return {**record, "run_dir": str(run_dir)}

    def token_data(self, cfg: RunConfig) -> Any:
        """The tokenised corpus of ``cfg.data`` (loaded once per runner)."""
        from attnlab.data.dataset import load_token_data

        key = (cfg.data.corpus, cfg.data.vocab_size)
        if key not in self._data:
            self._data[key] = load_token_data(cfg.data.corpus, vocab_size=cfg.data.vocab_size)
        return self._data[key]
