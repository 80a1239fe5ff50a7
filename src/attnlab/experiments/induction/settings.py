"""The settings of the induction experiment: its name, what "a short stretch of training"
is, the settings of each profile and what quick changes (the experiment's other parts import
these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import Seeded

NAME = "induction"
NEEDS_CORPUS = True  # quick and full also score the ladder's two-block Tiny Shakespeare model
SHORT = 0.2  # "a short stretch of training": one fifth of it at most


@dataclass(frozen=True)
class Settings(Seeded):
    """The language, the two models and the budget."""

    vocab_size: int = 32  # random tokens: few enough to learn the embeddings quickly
    n_ctx: int = 32  # rows of n_ctx + 1 tokens
    min_len: int = 8  # shortest repeated segment
    max_len: int = 16  # longest: the segment fits twice in a row
    d_model: int = 64  # residual width
    n_head: int = 4  # heads per block (width 16 each)
    steps: int = 1200  # AdamW updates of the final models
    snapshots: int = 10  # the two-block model is also trained to steps·i/snapshots
    lr: float = 3e-3  # constant rate (no warmup, no decay: snapshots share one trajectory)
    batch_size: int = 32  # windows per update
    n_train: int = 20_000  # training rows (a stream of n_train · (n_ctx + 1) tokens)
    n_held: int = 256  # held-out rows: the trainer's held split and the measurements
    data_seed: int = 0  # the rows' seed (held-out rows: data_seed + 1)
    ablation: str = "mean"  # zero | mean: what replaces an ablated head's output
    shakespeare: str | None = "quick"  # the ladder profile whose row 10 is scored (None: no)


PROFILES = {
    "full": Settings(seeds=5, shakespeare="full"),
    "quick": Settings(),
    "micro": Settings(d_model=16, steps=8, snapshots=2, batch_size=4, n_train=200, n_held=16,
                      shakespeare=None, seeds=1),
}
