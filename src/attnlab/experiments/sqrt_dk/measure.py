"""The numbers behind "why divide by √d_k": dot-product variance, peaked softmax rows,
and the attention statistics of a model.

Dimension legend: ``n`` random draws (pairs or rows), ``d`` vector width (d_k),
``j`` keys in a row, ``b`` windows, ``h`` heads, ``i``/``j`` query/key positions.

Vaswani et al. 2017 (§3.2.1, footnote 4): if q and k have independent entries of
mean 0 and variance 1, then q·k = Σ_d q_d k_d has mean 0 and variance d, so the
scores of a row spread like √d; softmax of widely spread scores puts almost all
its weight on one key, where its gradient vanishes. Dividing by √d_k brings the
variance back to 1 at any width. The analytic part uses NumPy and a seeded
``numpy.random.Generator``; the model part reads a trained (or freshly
initialised) ``LanguageModel`` through its one trace API (``model.trace``): the
scores and weights each attention block computed, on a fixed batch of held-out windows
(``stats_windows``); ``gaps`` is the cost of dropping the division, seed by seed.

Left out: other score normalisations (QK-norm, a learned temperature) and any
analysis of the value path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from attnlab.nn.model_config import ModelConfig
from attnlab.reference.softmax import effective_tokens as tokens_of
from attnlab.reference.softmax import softmax
from attnlab.train.run_config import RunConfig, TrainConfig
from attnlab.train.runtime import build_model

FROZEN = 0.99  # a row whose largest weight exceeds this is "frozen" on one key


def _check_dims(dims: Sequence[int]) -> None:
    if not dims or any(int(d) < 1 for d in dims):
        raise ValueError(f"widths must be a non-empty list of positive integers, got {list(dims)}")


def effective_tokens(scores: np.ndarray) -> np.ndarray:
    """exp(entropy of softmax(scores)) (``attnlab.reference``): 1 for a one-hot row, j for a
    uniform row of j.

    >>> float(effective_tokens(np.zeros(64)))
    64.0
    """
    return tokens_of(softmax(scores))


def jacobian_trace(weights: np.ndarray) -> np.ndarray:
    """Trace of the softmax Jacobian diag(w) − w wᵀ per row: Σ_j w_j (1 − w_j).

    It is 1 − 1/j for a uniform row of j keys and 0 for a one-hot row: how much
    the weights can still move when the scores move.
    """
    w = np.asarray(weights, dtype=np.float64)
    return (w * (1.0 - w)).sum(axis=-1)


def dot_variance(dims: Sequence[int], n_pairs: int = 20_000, seed: int = 0) -> list[dict]:
    """Var and std of q·k for q, k ~ N(0, I_d), one row per d, against √d."""
    _check_dims(dims)
    if n_pairs < 2:
        raise ValueError(f"n_pairs must be at least 2, got {n_pairs}")
    rng = np.random.default_rng(seed)
    rows = []
    for d in dims:
        q = rng.standard_normal((n_pairs, d))  # (n, d)
        k = rng.standard_normal((n_pairs, d))  # (n, d)
        dots = (q * k).sum(axis=1)  # (n,)
        var = float(dots.var(ddof=1))
        rows.append({"d": int(d), "var": var, "std": var**0.5, "sqrt_d": float(d) ** 0.5})
    return rows


def one_row(dims: Sequence[int], n_keys: int = 64, seed: int = 0) -> list[dict]:
    """One query against ``n_keys`` random keys at each d: effective tokens with and
    without the division by √d."""
    _check_dims(dims)
    rng = np.random.default_rng(seed)
    rows = []
    for d in dims:
        q = rng.standard_normal(d)  # (d,)
        k = rng.standard_normal((n_keys, d))  # (j, d)
        s = k @ q  # (j,)
        rows.append({
            "d": int(d),
            "score_std": float(s.std()),
            "eff_scaled": float(effective_tokens(s / np.sqrt(d))),
            "eff_unscaled": float(effective_tokens(s)),
        })
    return rows


def frozen_rows(
    dims: Sequence[int], n_rows: int = 2_000, n_keys: int = 64, seed: int = 0
) -> list[dict]:
    """Over ``n_rows`` random rows of ``n_keys`` scores at each d: the fraction of
    frozen rows (max weight > 0.99) and the mean Jacobian trace, scaled and unscaled."""
    _check_dims(dims)
    if n_rows < 1 or n_keys < 1:
        raise ValueError(f"n_rows and n_keys must be >= 1, got {n_rows} and {n_keys}")
    rng = np.random.default_rng(seed)
    rows = []
    for d in dims:
        q = rng.standard_normal((n_rows, 1, d))  # (n, 1, d)
        k = rng.standard_normal((n_rows, n_keys, d))  # (n, j, d)
        s = (q * k).sum(axis=-1)  # (n, j)
        row: dict = {"d": int(d)}
        for name, scores in (("scaled", s / np.sqrt(d)), ("unscaled", s)):
            w = softmax(scores)  # (n, j)
            row[f"frozen_{name}"] = float((w.max(axis=-1) > FROZEN).mean())
            row[f"jac_{name}"] = float(jacobian_trace(w).mean())
        rows.append(row)
    return rows


@torch.no_grad()
def attention_stats(model: torch.nn.Module, idx: torch.Tensor) -> dict:
    """Score spread and peakedness of every attention block of ``model`` on ``idx`` (b, t).

    - ``score_std``: std of the pre-softmax scores (as the model scales them) over
      the causally allowed entries (j <= i) of every head, block and window;
    - ``entropy`` and ``eff_tokens``: mean entropy (nats) of the weight rows and
      the mean of exp(entropy);
    - ``frozen``: fraction of rows whose largest weight exceeds 0.99.
    Query position 0 sees one key and is always "frozen", so rows are taken from
    positions 1..t-1. Raises ValueError for a model without attention blocks.
    """
    was_training = model.training
    model.eval()
    try:
        blocks = model.trace(idx).blocks
        if not any(b.scores is not None for b in blocks):
            raise ValueError("the model has no attention blocks (mixer head or mha) to measure")
        t = idx.shape[1]
        allowed = torch.ones(t, t, dtype=torch.bool, device=idx.device).tril()  # (i, j)
        scores = [b.scores[..., allowed].flatten() for b in blocks if b.scores is not None]
        w = torch.cat([b.weights[:, :, 1:, :].reshape(-1, t) for b in blocks
                       if b.weights is not None]).double()  # (rows, j)
        ent = -(w * torch.log(torch.where(w > 0, w, torch.ones_like(w)))).sum(-1)  # (rows,)
        return {
            "score_std": float(torch.cat(scores).double().std()),
            "entropy": float(ent.mean()),
            "eff_tokens": float(ent.exp().mean()),
            "frozen": float((w.max(-1).values > FROZEN).double().mean()),
        }
    finally:
        model.train(was_training)


def stats_windows(held: np.ndarray, n_windows: int, n_ctx: int) -> torch.Tensor:
    """The fixed batch (b, t) of the first ``n_windows`` held-out windows."""
    n = min(n_windows, len(held) // n_ctx)
    if n < 1:
        raise ValueError(f"the held-out split ({len(held)} tokens) has no window of {n_ctx}")
    return torch.from_numpy(np.asarray(held[: n * n_ctx], dtype=np.int64).reshape(n, n_ctx))


def initial_model(cfg: ModelConfig, tc: TrainConfig, device: Any = "cpu") -> torch.nn.Module:
    """The run's model before its first step: the trainer's own seeded construction."""
    return build_model(RunConfig(model=cfg, train=tc), torch.device(device)).eval()


def gaps(row: dict) -> list[float]:
    """ppl(unscaled) / ppl(scaled) − 1 of held-out perplexity, per seed."""
    return [u / c - 1 for u, c in zip(row["unscaled"]["held_ppl"], row["scaled"]["held_ppl"],
                                      strict=True)]
