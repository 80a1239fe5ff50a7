"""The settings of "Pre-norm or post-norm": its name, the two placements, the deep stack
and its high-rate budget per profile, and what quick changes (the experiment's other parts
import these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import OneBudget

NAME = "norm"
NEEDS_CORPUS = True
PLACEMENTS = ("pre", "post")


@dataclass(frozen=True)
class Settings(OneBudget):
    """The deep stack and its high-rate training budget (``OneBudget``; seeds per cell)."""

    lr: float = 3e-3  # a high constant rate (after warmup)
    steps: int = 1000  # AdamW updates per run
    n_layer: int = 12  # blocks: depth is what makes post-norm fragile
    n_head: int = 4  # heads of width d_model / n_head
    warmup_steps: int = 200  # linear warmup of the "with warmup" runs


PROFILES = {
    "full": Settings(),
    "quick": Settings(d_model=32, steps=600, batch_size=2, warmup_steps=120),
    "micro": Settings(n_layer=3, d_model=16, n_ctx=32, steps=3, batch_size=4, warmup_steps=2,
                      train_tokens=2_000, eval_batch_size=1024, seeds=1),
}

