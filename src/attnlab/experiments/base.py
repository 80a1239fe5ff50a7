"""What every experiment shares: the analysis context and the table helpers.

An experiment is a module under ``attnlab.experiments`` that defines

    NAME: str                      the name ``attnlab run NAME`` takes
    TITLE: str                     a heading for the report
    NEEDS_CORPUS: bool             skipped with a reason when the corpus is missing
    PROFILES: dict[str, Settings]  "full" (the spec's settings), "quick", "micro" (tests);
                                   a ``seeds`` field where it trains (``--seeds`` replaces it)
    QUICK_CHANGES: str             what "quick" changes from "full", in words (for the report)
    plan(settings) -> [RunSpec]    every training run it needs, every seed included
    analyse(settings, results, ctx) -> dict   the result record (JSON-able)
    table(record) -> str           Markdown
    figure(record) -> Figure       a matplotlib ``Figure`` (no pyplot, no backend switch)
    CLAIMS: list[Claim]            what its record decides (``attnlab.experiments.claims``)

and is listed in ``attnlab.experiments.registry``. Only the runner
(``attnlab.experiments.runner``) trains; ``analyse`` reads the finished runs
through ``Results`` and does its own measurements on ``Context.device``.
Adding an experiment is one file plus its name in the registry.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.errors import DataError

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]



@dataclass
class Context:
    """Where an experiment's analysis runs: the corpus, the device, the cached token data."""

    work: Path  # training runs are cached under work/<hash>
    corpus: str | None = None  # explicit corpus path (None: the spec's search order)
    device: str = "auto"  # auto (CUDA when present) | cpu | cuda: training and analysis
    workers: int = 1  # training worker processes (the runner's pool)
    progress: Progress | None = None  # receives progress dicts (the trainer's, + "run" label)
    _data: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.work = Path(self.work)

    @property
    def torch_device(self) -> Any:
        """The resolved ``torch.device`` models are loaded and measured on."""
        from attnlab.train.runtime import resolve_device

        return resolve_device(self.device)

    def runner(self) -> Any:
        """The ``Runner`` that trains this context's planned runs."""
        from attnlab.experiments.runner import Runner

        return Runner(work=self.work, device=self.device, corpus=self.corpus,
                      workers=self.workers, progress=self.progress)

    def train(self, label: str, model: Any, train: Any, *, data_cfg: Any = None,
              data: Any = None) -> dict:
        """Train (or reuse) one run through the runner and return its record: for callers
        outside an experiment's plan (the explorer's probe models). ``data`` gives token data
        directly (synthetic languages); otherwise ``data_cfg`` names the corpus data."""
        from attnlab.experiments.runner import RunSpec
        from attnlab.train.config import DataConfig, RunConfig

        data_cfg = data_cfg or DataConfig(vocab_size=model.vocab_size)
        spec = RunSpec(label, RunConfig(model=model, train=train, data=data_cfg), data)
        return self.runner().train([spec])[label]

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

    def trained(self, record: dict) -> Any:
        """The trained model of a finished run's record, in eval mode, on ``torch_device``."""
        return self.load_model(record, self.torch_device)

    @staticmethod
    def load_model(record: dict, device: Any = "cpu") -> Any:
        """The trained ``LanguageModel`` of a run's record (``run_dir``), in eval mode, on
        ``device``."""
        from attnlab.nn.model import LanguageModel
        from attnlab.train.checkpoint import find_checkpoint, load_checkpoint
        from attnlab.train.rundir import read_run_config

        run_dir = Path(record["run_dir"])
        model = LanguageModel(read_run_config(run_dir).model).to(device)
        ckpt = find_checkpoint(run_dir)
        if ckpt is None:
            raise DataError(f"run {run_dir} has no checkpoint to load")
        load_checkpoint(ckpt, model)
        return model.eval()


@dataclass(frozen=True)
class SentenceStream:
    """A synthetic language's sentences end to end, as the trainer's token data (it draws
    windows at random offsets, as from the corpus)."""

    train: Any  # (n_train · L,) int64 ids
    held: Any  # (n_held · L,) int64 ids; the trainer reports their perplexity

    @classmethod
    def of(cls, data: Any) -> SentenceStream:
        """From any language with ``train`` and ``held`` sentence rows (n, L)."""
        return cls(train=data.train.reshape(-1), held=data.held.reshape(-1))


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


def model_device(model: Any) -> Any:
    """The device of ``model``'s first parameter (CPU for a function or a parameterless module)."""
    import torch

    params = model.parameters() if isinstance(model, torch.nn.Module) else iter(())
    return next((p.device for p in params), torch.device("cpu"))


def attention_trace(model: Any, idx: Any) -> tuple[Any, list[Any]]:
    """Logits (b, t, v) of ``model`` on ``idx`` (b, t) and, per block, the attention weights
    (b, h, t, s) it used (None for a block without weights): one ``LanguageModel.trace``
    pass, without gradients."""
    import torch

    with torch.no_grad():
        trace = model.trace(idx)
    return trace.logits, trace.weights
