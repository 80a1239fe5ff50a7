"""What every experiment shares: profiles, the run context, caching and seeds.

An experiment is a module under ``attnlab.experiments`` that defines

    NAME: str                      the name ``attnlab run NAME`` takes
    TITLE: str                     a heading for the report
    NEEDS_CORPUS: bool             skipped with a reason when the corpus is missing
    PROFILES: dict[str, Settings]  "full" (the spec's settings), "quick", "micro" (tests)
    QUICK_CHANGES: str             what "quick" changes from "full", in words (for the report)
    run(settings, ctx) -> dict     the result record (JSON-able)
    table(record) -> str           Markdown
    figure(record, path) -> None   a PNG

and is listed in ``attnlab.experiments.registry``. The claims that its record
decides live in ``attnlab.experiments.claims``.

Training runs inside an experiment go through ``Context.train``: each is keyed
by the hash of its resolved ``RunConfig`` and lives in ``<work>/<hash>``,
so a rerun skips finished runs and resumes interrupted ones from their last
checkpoint. ``Context.seeds`` repeats a run with seeds 0..N-1; ``mean_std``
summarises the repeats for the tables.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.nn.config import ModelConfig
from attnlab.train.config import DataConfig, RunConfig, TrainConfig, run_hash

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]


@dataclass
class Context:
    """Where and how an experiment runs; shared by every experiment of a suite."""

    work: Path  # training runs are cached under work/<hash>
    seeds: int = 1  # repeat each training run with seeds 0..seeds-1
    corpus: str | None = None  # explicit corpus path (None: the spec's search order)
    progress: Progress | None = None  # receives trainer progress dicts (+ "run" name)
    workers: int = 1  # >1: ``prefetch`` trains independent runs side by side, 1 thread each
    _data: dict[Any, Any] = field(default_factory=dict, repr=False)

    def token_data(self, vocab_size: int = 1024, train_tokens: int | None = None) -> Any:
        """The tokenised corpus (loaded once per context)."""
        from attnlab.data.dataset import load_token_data

        key = vocab_size
        if key not in self._data:
            self._data[key] = load_token_data(self.corpus, vocab_size=vocab_size)
        data = self._data[key]
        if train_tokens is not None:
            data = dataclasses.replace(data, train=data.train[:train_tokens])
        return data

    def corpus_data(self, vocab_size: int, train_tokens: int | None = None) -> DataConfig:
        """The ``DataConfig`` of a run on this context's corpus (``train_tokens``: a prefix)."""
        return DataConfig(corpus=self.corpus, vocab_size=vocab_size, train_tokens=train_tokens)

    def train(
        self,
        label: str,
        model: ModelConfig,
        train: TrainConfig,
        *,
        data_cfg: DataConfig | None = None,
        data: Any = None,
    ) -> dict:
        """Train (or reuse) one run; returns the trainer's result record.

        ``data`` may be given directly (synthetic languages); otherwise the corpus
        named by ``data_cfg`` is used. The run directory is keyed by the config hash
        (plus a hash of directly given data), so identical runs are shared.
        """
        from attnlab.train.trainer import train as train_run

        data_cfg = data_cfg or self.corpus_data(model.vocab_size)
        cfg = RunConfig(model=model, train=train, data=data_cfg)
        key = run_hash(cfg)
        if data is not None:
            key += "-" + data_fingerprint(data)
        run_dir = self.work / key
        result_path = run_dir / "result.json"
        if result_path.is_file():
            return {**json.loads(result_path.read_text()), "run_dir": str(run_dir)}
        if data is None:
            data = self.token_data(model.vocab_size, data_cfg.train_tokens)

        def progress(info: dict) -> None:
            if self.progress is not None:
                self.progress({**info, "run": label})

        log.info("training %s (%s)", label, run_dir)
        record = train_run(cfg, run_dir, data=data, progress=progress)
        return {**record, "run_dir": str(run_dir)}

    def prefetch(self, jobs: list[tuple[str, ModelConfig, TrainConfig, DataConfig]]) -> None:
        """Train the runs an experiment is about to ask ``train_seeds`` for, in parallel.

        ``jobs`` are ``(label, model, train, data_cfg)`` as the experiment will pass
        them; each is expanded over ``seeds`` as ``train_seeds`` does. With one
        worker, or when every run is already finished, this does nothing; the
        experiment's own calls then train (or reuse) each run in order.
        """
        from attnlab.experiments.parallel import Job, run_jobs

        todo = [
            Job(seeded_label, model, seeded_train, data_cfg)
            for label, model, train, data_cfg in jobs
            for seeded_label, seeded_train in self.seeded(label, train)
            if not (self.work / run_hash(RunConfig(model=model, train=seeded_train,
                                                   data=data_cfg)) / "result.json").is_file()
        ]
        if self.workers > 1 and len(todo) > 1:
            log.info("training %d runs on %d one-thread workers", len(todo), self.workers)
            run_jobs(todo, self.work, self.workers, self.progress)

    @staticmethod
    def load_model(record: dict) -> Any:
        """The trained ``LanguageModel`` of a record returned by ``train`` (eval mode)."""
        from attnlab.nn.model import LanguageModel
        from attnlab.train.checkpoint import find_checkpoint, load_checkpoint
        from attnlab.train.rundir import read_run_config

        run_dir = Path(record["run_dir"])
        model = LanguageModel(read_run_config(run_dir).model)
        ckpt = find_checkpoint(run_dir)
        if ckpt is None:
            raise ValueError(f"run {run_dir} has no checkpoint to load")
        load_checkpoint(ckpt, model)
        return model.eval()

    def train_seeds(
        self, label: str, model: ModelConfig, train: TrainConfig, **kwargs: Any
    ) -> list[dict]:
        """The same run with seeds 0..seeds-1."""
        return [self.train(seeded_label, model, seeded_train, **kwargs)
                for seeded_label, seeded_train in self.seeded(label, train)]

    def seeded(self, label: str, train: TrainConfig) -> list[tuple[str, TrainConfig]]:
        """``(label seed s, train with seed s)`` for s in 0..seeds-1."""
        return [(f"{label} seed {s}", dataclasses.replace(train, seed=s))
                for s in range(self.seeds)]


def data_fingerprint(data: Any) -> str:
    """A short content hash of directly given token data (train + held arrays)."""
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    for part in (data.train, data.held):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()[:8]


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def fmt_ms(values: list[float], digits: int = 2) -> str:
    """'12.34 ± 0.56' for several seeds, '12.34' for one."""
    mean, std = mean_std(values)
    if len(values) <= 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def settings_dict(settings: Any) -> dict:
    """A profile's settings as plain JSON."""
    return json.loads(json.dumps(dataclasses.asdict(settings)))


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; numbers right-aligned."""
    def align(i: int) -> str:
        cells = [r[i] for r in rows if i < len(r)]
        numeric = cells and all(isinstance(c, int | float) for c in cells)
        return "---:" if numeric else "---"

    rule = "|" + "|".join(align(i) for i in range(len(header))) + "|"
    out = ["| " + " | ".join(header) + " |", rule]
    for r in rows:
        out.append("| " + " | ".join(_cell(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:,.2f}" if abs(c) >= 0.01 or c == 0 else f"{c:.2e}"
    if isinstance(c, int):
        return f"{c:,}"
    return str(c)


def timed(fn: Callable[[], dict]) -> tuple[dict, float]:
    """Run ``fn`` and return its record with the wall time in seconds."""
    start = time.perf_counter()
    record = fn()
    return record, time.perf_counter() - start
