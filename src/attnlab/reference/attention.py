"""Scaled dot-product and multi-head attention in NumPy float64.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k + B + M) V      (Vaswani et al. 2017, eq. 1)

Dimension legend: ``b`` batch, ``h`` heads, ``i`` query positions, ``j`` key
positions, ``n`` sequence length, ``d`` model width, ``d_k``/``d_v`` head widths.

This is the readable reference the torch modules are checked against: every
step is one line of NumPy in float64. Left out: dropout, KV caching and
anything done for speed.
"""

from __future__ import annotations

import numpy as np

from attnlab.reference.positions import rope as apply_rope
from attnlab.reference.softmax import causal_mask, softmax


def _masked_scores(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Apply a boolean (True = keep) or additive (0 / -inf) mask to scores."""
    if mask is None:
        return scores
    mask = np.asarray(mask)
    if mask.dtype == np.bool_:
        return np.where(mask, scores, -np.inf)
    if not np.issubdtype(mask.dtype, np.floating):
        raise ValueError(f"mask must be boolean (True = keep) or additive float, got {mask.dtype}")
    if np.isnan(mask).any() or np.isposinf(mask).any():
        raise ValueError("an additive mask may hold finite values and -inf only")
    return scores + mask


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: bool = True,
    bias: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(Q Kᵀ · s + bias + mask) V`` with ``s = 1/√d_k`` (or 1 when ``scale=False``).

    Args:
        q: (..., i, d_k) queries.  k: (..., j, d_k) keys.  v: (..., j, d_v) values.
            The leading axes (batch, heads) must broadcast.
        mask: broadcastable to (..., i, j); either boolean (``True`` = may attend)
            or additive float (``0`` = may attend, ``-inf`` = forbidden). Both
            forms give bit-identical weights.
        scale: divide the scores by √d_k (Vaswani et al.); ``False`` is the
            undivided variant of (docs/experiments.md, "Why divide by √d_k").
        bias: optional additive scores broadcastable to (..., i, j), e.g. ALiBi.

    Returns:
        ``(out, weights)``: out (..., i, d_v) and weights (..., i, j). A query
        whose every key is forbidden gets zero weights and a zero output.
    """
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"q, k, v must be at least 2-D, got {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their width, got {q.shape} and {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must share their positions, got {k.shape} and {v.shape}")
    factor = 1.0 / np.sqrt(q.shape[-1]) if scale else 1.0
    scores = (q @ np.swapaxes(k, -1, -2)) * factor  # (..., i, j)
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    weights = softmax(_masked_scores(scores, mask), axis=-1)  # (..., i, j)
    return weights @ v, weights  # (..., i, d_v), (..., i, j)


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    b_o: np.ndarray | None,
    n_head: int,
    *,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    causal: bool = False,
    mask: np.ndarray | None = None,
    bias: np.ndarray | None = None,
    scale: bool = True,
    rope: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention: project, split into heads, attend, concat, ``W_o``.

    Weights follow the torch ``nn.Linear`` layout, ``y = x @ W.T + b``, so a
    weight copied from a torch module fits as is: ``w_q``, ``w_k``, ``w_v`` are
    (d_attn, d) and ``w_o`` is (d, d_attn), usually with ``d_attn = d``. Head
    ``h`` owns columns ``h*d_k : (h+1)*d_k`` of the projected q, k and v, with
    ``d_k = d_attn / n_head``. From ``torch.nn.MultiheadAttention``:
    ``w_q, w_k, w_v = in_proj_weight.chunk(3)`` and ``w_o = out_proj.weight``.

    Args:
        x: (b, n, d) input sequence.
        b_o: output bias (d,) or None; b_q, b_k, b_v: optional (d_attn,) biases.
        n_head: number of heads; must divide d_attn.
        causal: forbid each position from seeing later ones.
        mask: extra mask (boolean or additive) broadcastable to (b, h, n, n).
        bias: additive scores broadcastable to (b, h, n, n), e.g. ALiBi (h, n, n).
        scale: divide scores by √d_k.
        rope: rotate q and k by RoPE at positions 0..n-1 after the projections.

    Returns:
        ``(out, weights)``: out (b, n, d) and the per-head weights (b, h, n, n).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"multi_head_attention expects x shaped (b, n, d), got {x.shape}")
    b, n, d = x.shape
    d_attn = np.shape(w_q)[0]
    for name, w, shape in (("w_q", w_q, (d_attn, d)), ("w_k", w_k, (d_attn, d)),
                           ("w_v", w_v, (d_attn, d)), ("w_o", w_o, (d, d_attn))):
        if np.shape(w) != shape:
            raise ValueError(f"{name} must be {shape} (nn.Linear layout), got {np.shape(w)}")
    if n_head <= 0 or d_attn % n_head:
        raise ValueError(f"n_head={n_head} must be positive and divide the width {d_attn}")
    d_k = d_attn // n_head

    def project(w: np.ndarray, bias_: np.ndarray | None) -> np.ndarray:
        y = x @ np.asarray(w, dtype=np.float64).T  # (b, n, d_attn)
        if bias_ is not None:
            y = y + np.asarray(bias_, dtype=np.float64)
        return y.reshape(b, n, n_head, d_k).transpose(0, 2, 1, 3)  # (b, h, n, d_k)

    q, k, v = project(w_q, b_q), project(w_k, b_k), project(w_v, b_v)
    if rope:
        q, k = apply_rope(q, np.arange(n)), apply_rope(k, np.arange(n))
    full_mask = mask
    if causal:
        allowed = causal_mask(n, n)  # (n, n)
        full_mask = allowed if mask is None else _and_masks(allowed, np.asarray(mask))
    heads, weights = scaled_dot_product_attention(q, k, v, mask=full_mask, scale=scale, bias=bias)
    concat = heads.transpose(0, 2, 1, 3).reshape(b, n, d_attn)  # (b, n, h * d_k)
    out = concat @ np.asarray(w_o, dtype=np.float64).T  # (b, n, d)
    if b_o is not None:
        out = out + np.asarray(b_o, dtype=np.float64)
    return out, weights


def _and_masks(allowed: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Combine a boolean causal mask with a boolean or additive user mask."""
    if mask.dtype == np.bool_:
        return allowed & mask
    return np.where(allowed, mask.astype(np.float64), -np.inf)
