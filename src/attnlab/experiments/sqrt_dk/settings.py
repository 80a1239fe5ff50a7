"""The settings of "Why divide by √d_k": its name, the attention statistics it keeps, the
settings of each profile and what quick changes (the experiment's other parts import these,
and nothing of theirs is imported here)."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.kit.settings import CorpusSettings

NAME = "sqrt_dk"
NEEDS_CORPUS = True
STATS = ("score_std", "entropy", "eff_tokens", "frozen")


@dataclass(frozen=True)
class Settings(CorpusSettings):
    """The analytic sizes and the two training settings (``CorpusSettings``: width, context,
    rate, data and seeds of both)."""

    dims: tuple[int, ...] = (4, 16, 64, 256, 1024)  # widths d of the analytic part
    n_pairs: int = 20_000  # random (q, k) pairs per width for Var(q·k)
    n_keys: int = 64  # scores per row
    n_rows: int = 2_000  # random rows per width for the frozen fraction and Jacobian
    default_widths: tuple[int, ...] = (32, 128)  # d_k in the default block (n_head = d_model/d_k)
    default_steps: int = 3000  # the spec's default budget
    default_batch: int = 64
    short_widths: tuple[int, ...] = (32, 256, 1024)  # q/k width of the single head, no norm
    short_steps: int = 1500
    short_batch: int = 32
    stats_windows: int = 16  # held-out windows of n_ctx tokens for the attention statistics
    seed: int = 0  # seed of the analytic draws


PROFILES = {
    "full": Settings(),
    "quick": Settings(default_widths=(), short_steps=600, short_batch=4),
    "micro": Settings(dims=(4, 16), n_pairs=500, n_rows=50, d_model=16, n_ctx=16,
                      default_widths=(8,), default_steps=2, default_batch=4,
                      short_widths=(64,), short_steps=2, short_batch=4, stats_windows=2,
                      train_tokens=2_000, seeds=1),
}

