"""Hand-written backward pass of single-head attention, in NumPy float64.

    S = Q Kᵀ · s + M        P = softmax(S)        O = P V

Dimension legend: ``i`` query positions, ``j`` key positions, ``d_k`` q/k
width, ``d_v`` value width; any leading axes (batch, heads) ride along.

The pattern is llm.c's ``layernorm.py``: the forward returns a cache of what
the backward needs, the backward applies the chain rule by hand, and a test
checks it against central finite differences. With ``dO`` the gradient of a
scalar loss with respect to O:

    dV = Pᵀ dO
    dP = dO Vᵀ
    dS = P ⊙ (dP − rowsum(dP ⊙ P))        (softmax Jacobian: diag(p) − p pᵀ)
    dQ = dS K · s,   dK = dSᵀ Q · s

A fully masked row has P = 0, hence dS = 0: it passes no gradient. The mask
is a constant, so it gets none. Left out: gradients for a bias, dropout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from attnlab.reference.attention import scaled_dot_product_attention


class AttentionCache(NamedTuple):
    """What the backward needs from the forward."""

    q: np.ndarray  # (..., i, d_k)
    k: np.ndarray  # (..., j, d_k)
    v: np.ndarray  # (..., j, d_v)
    weights: np.ndarray  # P, (..., i, j)
    factor: float  # s = 1/√d_k, or 1 without scaling


def attention_forward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: bool = True,
) -> tuple[np.ndarray, AttentionCache]:
    """``O = softmax(Q Kᵀ · s + M) V``; returns ``(out, cache)`` for :func:`attention_backward`.

    The mask is boolean (True = keep) or additive (0 / -inf), as in
    :func:`attnlab.reference.attention.scaled_dot_product_attention`.
    """
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    factor = 1.0 / np.sqrt(q.shape[-1]) if scale else 1.0
    return out, AttentionCache(q, k, v, weights, float(factor))


def attention_backward(
    dout: np.ndarray, cache: AttentionCache
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dQ, dK, dV)`` of a scalar loss, given ``dout = ∂loss/∂O`` (..., i, d_v)."""
    q, k, v, p, factor = cache
    dout = np.asarray(dout, dtype=np.float64)
    expected = p.shape[:-1] + v.shape[-1:]
    if dout.shape != expected:
        raise ValueError(f"dout must have the output's shape {expected}, got {dout.shape}")
    dv = np.swapaxes(p, -1, -2) @ dout  # (..., j, d_v)
    dp = dout @ np.swapaxes(v, -1, -2)  # (..., i, j)
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # (..., i, j)
    dq = (ds @ k) * factor  # (..., i, d_k)
    dk = (np.swapaxes(ds, -1, -2) @ q) * factor  # (..., j, d_k)
    return dq, dk, dv


def finite_difference_grad(
    f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """Central-difference gradient of a scalar function: ``(f(x + ε) − f(x − ε)) / 2ε``.

    One pair of calls per entry of x, so keep x small. The truncation error
    is O(ε²) and the rounding error O(1e-16/ε); ε = 1e-6 balances them for
    float64 inputs of order one. x is not modified.

    >>> finite_difference_grad(lambda t: float(np.sum(t ** 2)), np.array([1.0, 2.0])).round(6)
    array([2., 4.])
    """
    x = np.array(x, dtype=np.float64)  # a copy we may poke
    grad = np.empty_like(x)
    flat, flat_grad = x.reshape(-1), grad.reshape(-1)
    for n in range(flat.size):
        original = flat[n]
        flat[n] = original + eps
        up = f(x)
        flat[n] = original - eps
        down = f(x)
        flat[n] = original
        flat_grad[n] = (up - down) / (2.0 * eps)
    return grad
