"""Additive (Bahdanau) attention in NumPy float64: forward and a hand-written backward.

    A = W s_i + U h_j       T = tanh(A)       e_ij = vᵀ T_ij      (Bahdanau et al. 2015)
    P = softmax_j(e + M)    c_i = Σ_j P_ij h_j

Dimension legend: ``i`` queries (decoder steps), ``j`` source positions, ``d_s`` query
width, ``d_h`` key (encoder state) width, ``a`` scoring width; any leading axes (batch)
ride along and are summed over in the gradients of the shared W, U, v.

The pattern is ``attnlab.reference.backward``'s (llm.c's layernorm.py): the forward keeps
what the backward needs, the backward applies the chain rule by hand, and the tests check
it against central finite differences and against torch autograd. With ``dC`` the
gradient of a scalar loss with respect to the context C (..., i, d_h):

    dP   = dC Hᵀ                                  (..., i, j)
    dH₁  = Pᵀ dC                                  h as the values of the weighted sum
    de   = P ⊙ (dP − rowsum(dP ⊙ P))              the softmax Jacobian, diag(p) − p pᵀ
    dv   = Σ_{…, i, j} de_ij T_ij                 (a,)
    dA   = (de ⊗ v) ⊙ (1 − T²)                    (..., i, j, a), tanh' = 1 − tanh²
    dW   = Σ_{…, i} (Σ_j dA_ij) s_iᵀ              (a, d_s);   ds = (Σ_j dA_ij) W
    dU   = Σ_{…, j} (Σ_i dA_ij) h_jᵀ              (a, d_h);   dH₂ = (Σ_i dA_ij) U
    dh   = dH₁ + dH₂                              h enters twice: as values and in the score

A masked position has P = 0, hence de = 0 and no gradient through either path. A row with
no real position has P = 0 everywhere: its context is zero and it passes no gradient.
Left out: biases (the paper's W_a, U_a have none), dropout.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from attnlab.reference.softmax import softmax


class AdditiveCache(NamedTuple):
    """What the backward needs from the forward."""

    s: np.ndarray  # (..., i, d_s)
    h: np.ndarray  # (..., j, d_h)
    w: np.ndarray  # W (a, d_s)
    u: np.ndarray  # U (a, d_h)
    v: np.ndarray  # v (a,)
    tanh: np.ndarray  # T (..., i, j, a)
    weights: np.ndarray  # P (..., i, j)


class AdditiveGrads(NamedTuple):
    """Gradients of a scalar loss with respect to each input of the forward."""

    s: np.ndarray  # (..., i, d_s)
    h: np.ndarray  # (..., j, d_h)
    w: np.ndarray  # (a, d_s)
    u: np.ndarray  # (a, d_h)
    v: np.ndarray  # (a,)


def additive_attention_forward(
    s: np.ndarray,
    h: np.ndarray,
    w: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, AdditiveCache]:
    """``(context, weights, cache)`` of queries ``s`` (..., i, d_s) over ``h`` (..., j, d_h).

    ``w`` is W (a, d_s), ``u`` is U (a, d_h), ``v`` is (a,); ``mask`` is boolean,
    broadcastable to (..., i, j), True = may attend (a key-padding mask (b, j) becomes
    (b, 1, j)). Returns context (..., i, d_h) and weights (..., i, j).
    """
    s, h, w, u, v = (np.asarray(x, dtype=np.float64) for x in (s, h, w, u, v))
    if w.shape[1] != s.shape[-1] or u.shape[1] != h.shape[-1] or v.shape != (w.shape[0],) \
            or u.shape[0] != w.shape[0]:
        raise ValueError(f"need W (a, {s.shape[-1]}), U (a, {h.shape[-1]}), v (a,); got "
                         f"{w.shape}, {u.shape}, {v.shape}")
    hidden = (s @ w.T)[..., :, None, :] + (h @ u.T)[..., None, :, :]  # (..., i, j, a)
    t = np.tanh(hidden)
    scores = t @ v  # (..., i, j)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must be boolean (True = may attend), got {mask.dtype}")
        scores = np.where(mask, scores, -np.inf)
    p = softmax(scores, axis=-1)  # (..., i, j); a fully masked row is zeros
    return p @ h, p, AdditiveCache(s, h, w, u, v, t, p)


def additive_attention_backward(dcontext: np.ndarray, cache: AdditiveCache) -> AdditiveGrads:
    """Gradients ``(ds, dh, dW, dU, dv)`` given ``dcontext = ∂loss/∂context`` (..., i, d_h)."""
    s, h, w, u, v, t, p = cache
    dc = np.asarray(dcontext, dtype=np.float64)
    expected = p.shape[:-1] + h.shape[-1:]
    if dc.shape != expected:
        raise ValueError(f"dcontext must have the context's shape {expected}, got {dc.shape}")
    dp = dc @ np.swapaxes(h, -1, -2)  # (..., i, j)
    dh = np.swapaxes(p, -1, -2) @ dc  # (..., j, d_h): h as the values
    de = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # (..., i, j)
    dv = (de[..., None] * t).reshape(-1, t.shape[-1]).sum(axis=0)  # (a,), over …, i, j
    da = de[..., None] * v * (1.0 - t * t)  # (..., i, j, a)
    da_s, da_h = da.sum(axis=-2), da.sum(axis=-3)  # (..., i, a), (..., j, a)
    ds = da_s @ w  # (..., i, d_s)
    dw = _outer_sum(da_s, s)  # (a, d_s)
    dh = dh + da_h @ u  # (..., j, d_h): h in the score too
    du = _outer_sum(da_h, h)  # (a, d_h)
    return AdditiveGrads(ds, dh, dw, du, dv)


def _outer_sum(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Σ over every leading axis and the position axis of leftᵀ right: (..., n, a), (..., n, d)
    → (a, d), the gradient of a map shared by every position of every sequence."""
    return left.reshape(-1, left.shape[-1]).T @ right.reshape(-1, right.shape[-1])
