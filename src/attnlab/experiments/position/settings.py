"""The settings of "Position": its name, the position schemes, the block and its budget per
profile, the evaluation lengths, and what quick changes (the experiment's other parts import
these, and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import OneBudget

NAME = "position"
NEEDS_CORPUS = True
SCHEMES = ("learned", "sinusoidal", "rope", "alibi", "none")


@dataclass(frozen=True)
class Settings(OneBudget):
    """The block, its training budget (``OneBudget``: per scheme, a constant rate, and the
    batch of every evaluation, the trainer's too) and the evaluation lengths."""

    n_ctx: int = 64  # training context
    schemes: tuple[str, ...] = SCHEMES  # position schemes, one model each
    eval_lengths: tuple[int, ...] = (64, 128, 256)  # held-out window lengths
    n_head: int = 4  # heads of the block
    perm_tokens: int = 12  # tokens in the permutation check
    perm_d_model: int = 32  # width of the attention layer in the permutation check


PROFILES = {
    "full": Settings(),
    "quick": Settings(steps=2000, batch_size=2),
    "micro": Settings(n_ctx=16, eval_lengths=(16, 32), d_model=16, steps=2, batch_size=4,
                      train_tokens=2_000, eval_batch_size=256, perm_tokens=6, perm_d_model=8,
                      seeds=1),
}

