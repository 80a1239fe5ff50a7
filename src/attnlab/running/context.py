"""Where an experiment's analysis runs: the command's one runner and the device.

``analyse(settings, results, ctx)`` reads its finished runs through
``Results`` and measures on ``ctx.device``. ``Context`` holds nothing of its
own: the corpus, the token data and the training all belong to the runner the
command built once (``attnlab.running.runner.Runner``), and a trained model is
loaded through the loader the CLI uses (``attnlab.train.runtime.load_trained``:
the run's reader lock, a diverged run refused, the weights checked finite).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.running.executors import LocalPool
from attnlab.running.runner import Runner, RunSpec
from attnlab.train.progress import Progress


@dataclass(frozen=True)
class Context:
    """The runner of this command and the ``torch.device`` analyses measure on."""

    runner: Runner
    device: Any  # torch.device, resolved once from runner.device

    @classmethod
    def of(cls, runner: Runner) -> Context:
        """The context of ``runner``; a device that does not resolve is one UsageError."""
        return cls(runner, runner.resolve_device())

    @classmethod
    def local(cls, work: Path, *, device: str = "auto", corpus: str | None = None,
              workers: int = 1, progress: Progress | None = None) -> Context:
        """A context on a runner with local worker processes (tests, the explorer's probes)."""
        return cls.of(Runner(Path(work), device, corpus, LocalPool(workers, device), progress))

    def train(self, label: str, model: Any, train: Any, *, data_cfg: Any = None,
              data: Any = None) -> dict:
        """Train (or reuse) one run through the runner and return its record: for callers
        outside an experiment's plan (the explorer's probe models). ``data`` gives token data
        directly (synthetic languages); otherwise ``data_cfg`` names the corpus data."""
        from attnlab.train.run_config import DataConfig, RunConfig

        data_cfg = data_cfg or DataConfig(vocab_size=model.vocab_size)
        spec = RunSpec(label, RunConfig(model=model, train=train, data=data_cfg), data)
        return self.runner.train([spec])[label]

    def token_data(self, vocab_size: int = 1024, train_tokens: int | None = None) -> Any:
        """The runner's tokenised corpus (the one cache of the command)."""
        from attnlab.train.run_config import DataConfig, RunConfig

        cfg = RunConfig(data=DataConfig(corpus=self.runner.corpus, vocab_size=vocab_size))
        data = self.runner.token_data(cfg)
        if train_tokens is not None:
            data = dataclasses.replace(data, train=data.train[:train_tokens])
        return data

    def trained(self, record: dict) -> Any:
        """The trained model of a finished run's record, in eval mode, on ``device``."""
        return self.load_model(record, self.device)

    def kept(self, record: dict, step: int) -> Any:
        """The model of a finished run's record with the weights it kept after ``step``
        (``train.keep_steps``), in eval mode, on ``device``."""
        from attnlab.nn.model import LanguageModel
        from attnlab.train.kept_steps import load_kept
        from attnlab.train.rundir import read_run_config

        run_dir = Path(record["run_dir"])
        with self.device:  # parameters are created on the device, not copied there
            model = LanguageModel(read_run_config(run_dir).model)
        return load_kept(run_dir, step, model)

    @staticmethod
    def load_model(record: dict, device: Any = "cpu") -> Any:
        """The trained ``LanguageModel`` of a run's record (``run_dir``), in eval mode, on
        ``device``, through ``attnlab.train.runtime.load_trained``."""
        from attnlab.train.runtime import load_trained

        return load_trained(Path(record["run_dir"]), str(device))[1]


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
