"""Perplexity over a whole split, in non-overlapping windows, deterministically.

Dimension legend: ``B`` windows per batch, ``T`` context length (``n_ctx``),
``V`` vocabulary, ``N`` tokens in the split.

    perplexity = exp( -(1 / (N - 1)) · Σ_{i=1}^{N-1} log p(tokens[i] | window context) )

Windows (docs/data.md): the split is cut at positions 0, T, 2T, ...; the window
starting at ``s`` feeds ``tokens[s : s + T]`` and predicts ``tokens[s + 1 :
s + T + 1]``. The last window is shorter when ``N - 1`` is not a multiple of
``T`` (it feeds the remaining ``(N - 1) mod T`` tokens), so every token after
the first is predicted exactly once and the mean is over ``N - 1`` targets.
Each prediction sees only the tokens of its own window (a token at the start
of a window has no context), which is what "non-overlapping" costs compared
with a sliding window. Full windows go through the model in batches of
``batch_size``, the short one alone; the result does not depend on the batch
size beyond float rounding.

Left out: sliding-window (strided) evaluation and bits-per-character.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

LogitsFn = Callable[[torch.Tensor], torch.Tensor]  # (B, T) int64 -> (B, T, V) logits


def _windows(tokens: np.ndarray, n_ctx: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (inputs, targets) blocks: one (n_full, T) pair, then a (1, rem) pair if any."""
    n_targets = len(tokens) - 1
    n_full = n_targets // n_ctx
    blocks = []
    if n_full:
        x = tokens[: n_full * n_ctx].reshape(n_full, n_ctx)  # (n_full, T)
        y = tokens[1 : n_full * n_ctx + 1].reshape(n_full, n_ctx)  # (n_full, T)
        blocks.append((x, y))
    rem = n_targets - n_full * n_ctx
    if rem:
        start = n_full * n_ctx
        blocks.append((tokens[start : start + rem][None], tokens[start + 1 :][None]))  # (1, rem)
    return blocks


def _device_of(logits_fn: LogitsFn) -> torch.device:
    if isinstance(logits_fn, torch.nn.Module):
        for p in logits_fn.parameters():
            return p.device
    return torch.device("cpu")


def nll_sum_and_count(
    logits_fn: LogitsFn,
    tokens: np.ndarray,
    n_ctx: int,
    batch_size: int = 64,
    device: torch.device | str | None = None,
) -> tuple[float, int]:
    """Summed negative log-likelihood (nats, float64) of every target, and their number ``N - 1``.

    Runs under ``torch.no_grad()``; an ``nn.Module`` is put in eval mode for
    the call (dropout off) and given back in the mode it had. Inputs go to
    ``device`` (default: the module's parameters' device, else CPU).
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tokens.shape}")
    if len(tokens) < 2:
        raise ValueError(f"perplexity needs at least 2 tokens, got {len(tokens)}")
    if n_ctx < 1 or batch_size < 1:
        raise ValueError(f"n_ctx and batch_size must be >= 1, got {n_ctx} and {batch_size}")
    tokens = tokens.astype(np.int64)
    device = torch.device(device) if device is not None else _device_of(logits_fn)
    was_training = isinstance(logits_fn, torch.nn.Module) and logits_fn.training
    if isinstance(logits_fn, torch.nn.Module):
        logits_fn.eval()
    total = 0.0
    count = 0
    try:
        with torch.no_grad():
            for x_all, y_all in _windows(tokens, n_ctx):
                for lo in range(0, len(x_all), batch_size):
                    x = torch.from_numpy(x_all[lo : lo + batch_size]).to(device)  # (B, T)
                    y = torch.from_numpy(y_all[lo : lo + batch_size]).to(device)  # (B, T)
                    logits = logits_fn(x)
                    if logits.ndim != 3 or logits.shape[:2] != x.shape:
                        raise ValueError(
                            f"logits_fn must map {tuple(x.shape)} ids to (B, T, V) logits, "
                            f"got shape {tuple(logits.shape)}"
                        )
                    if int(y.max()) >= logits.shape[-1]:
                        raise ValueError(
                            f"token id {int(y.max())} is outside the {logits.shape[-1]} logits"
                        )
                    nll = F.cross_entropy(
                        logits.reshape(-1, logits.shape[-1]).float(),  # (B·T, V)
                        y.reshape(-1),  # (B·T,)
                        reduction="none",
                    )
                    total += float(nll.double().sum())
                    count += nll.numel()
    finally:
        if isinstance(logits_fn, torch.nn.Module):
            logits_fn.train(was_training)
    return total, count


def perplexity(
    logits_fn: LogitsFn,
    tokens: np.ndarray,
    n_ctx: int,
    batch_size: int = 64,
    device: torch.device | str | None = None,
) -> float:
    """``exp(mean NLL)`` over the whole of ``tokens`` (see the module docstring for the windows);
    ``inf`` for a model whose loss has overflowed it (``exp_nll``).

    >>> uniform = lambda x: torch.zeros(*x.shape, 7)
    >>> round(perplexity(uniform, np.arange(7).repeat(3), n_ctx=4), 6)
    7.0
    """
    total, count = nll_sum_and_count(logits_fn, tokens, n_ctx, batch_size, device)
    return exp_nll(total / count)


def exp_nll(mean_nll: float) -> float:
    """``exp(mean_nll)``, and ``inf`` where that exceeds the largest float.

    A model whose loss has exploded (a mean NLL above ~709.8 nats) has a
    perplexity too large for a float: ``inf`` says exactly that, where
    ``math.exp`` would raise ``OverflowError`` and lose the whole result. NaN
    stays NaN (a model that gives NaN logits has no perplexity).

    >>> exp_nll(0.0), exp_nll(800.0)
    (1.0, inf)
    """
    try:
        return math.exp(mean_nll)
    except OverflowError:
        return math.inf


def train_eval_slice(train: np.ndarray, n_tokens: int) -> np.ndarray:
    """The fixed slice of the train split on which training perplexity is measured.

    It is the *first* ``n_tokens`` of the split (pass the held-out length), so
    train and held-out perplexity average over the same number of targets and
    the slice never changes between runs.
    """
    train = np.asarray(train)
    if train.ndim != 1:
        raise ValueError(f"train tokens must be 1-D, got shape {train.shape}")
    if not 2 <= n_tokens <= len(train):
        raise ValueError(f"n_tokens must be in [2, {len(train)}], got {n_tokens}")
    return train[:n_tokens]
