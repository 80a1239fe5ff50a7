"""The settings every experiment that trains shares, written once.

``Seeded`` holds what every experiment that trains sets: its seeds (``--seeds N``
replaces them, ``Experiment.settings``). ``CorpusSettings`` adds what the corpus
runs of ladder, norm, position and sqrt_dk all set (width, context, rate, data);
``OneBudget`` adds the single training budget of those that give every run the
same one (ladder, norm, position), and ``train_config`` the run's training at it.
An experiment's own ``Settings`` extends one of them with its own fields and may
give a shared field another default (norm's higher rate, position's shorter
context). The field names are those the experiments had, so a finished
envelope's settings, compared by name and value, stay reusable; the inherited
fields come first in a settings dict (the report lists them in that order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnlab.train.run_config import DataConfig, TrainConfig


@dataclass(frozen=True)
class Seeded:
    """The seeds of an experiment that trains: every run, every draw, once per seed."""

    seeds: int = 3  # training seeds per run (a claim needs at least 3 for a verdict)


@dataclass(frozen=True)
class CorpusSettings(Seeded):
    """Width, context, rate, data and seeds of an experiment's corpus runs."""

    d_model: int = 128  # residual width of every trained model
    n_ctx: int = 128  # context length in training and evaluation
    lr: float = 1e-3  # AdamW learning rate
    train_tokens: int | None = None  # first N training tokens only (None: the whole 90%)
    vocab_size: int = 1024  # BPE vocabulary

    def data_config(self) -> DataConfig:
        """The corpus data of every run: this vocabulary, these training tokens."""
        return DataConfig(vocab_size=self.vocab_size, train_tokens=self.train_tokens)


@dataclass(frozen=True)
class OneBudget(CorpusSettings):
    """``CorpusSettings`` and the one training budget every run of the experiment gets."""

    steps: int = 3000  # AdamW updates per run
    batch_size: int = 64  # windows per update
    eval_batch_size: int = 64  # windows per forward pass when measuring perplexity

    def train_config(self, **changes: Any) -> TrainConfig:
        """Every run's training at this budget (``train_budget``); ``changes``: the
        ``TrainConfig`` fields an experiment sets besides (norm's warmup)."""
        return train_budget(self.steps, self.lr, self.batch_size,
                            eval_batch_size=self.eval_batch_size, **changes)


def train_budget(steps: int, lr: float, batch_size: int, **changes: Any) -> TrainConfig:
    """A corpus run's training: ``steps`` AdamW updates of ``batch_size`` windows at
    ``lr`` (constant unless ``changes`` say otherwise), perplexity measured only at the
    end, a checkpoint every quarter (a run stopped halfway resumes from the last).

    >>> train_budget(1000, 3e-3, 64).ckpt_every, train_budget(3, 1e-3, 4).ckpt_every
    (250, 1)
    """
    return TrainConfig(steps=steps, lr=lr, batch_size=batch_size, eval_every=0,
                       ckpt_every=max(1, steps // 4), **changes)
