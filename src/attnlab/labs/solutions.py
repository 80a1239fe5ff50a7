"""The reference solutions, one self-contained function per exercise (NumPy only).

``attnlab lab solution N`` prints one of these as it stands, so each needs nothing but
``import numpy as np``: no attnlab helper, no other solution. They agree with the package's
float64 reference (``attnlab.reference``), which the checkers compare against; the tests
prove it by running every checker on every solution.
"""

from __future__ import annotations

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # a row of all -inf: exp(-inf) = 0 everywhere
    e = np.exp(x - top)  # every exponent <= 0: nothing overflows
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0.0, total, 1.0)  # a row of all -inf: zeros, not 0/0


def averaging_matrix(n):
    lower = np.tril(np.ones((n, n)))  # row i keeps columns 0..i
    return lower / lower.sum(axis=1, keepdims=True)  # row i: 1/(i+1) on each kept column


def attention(q, k, v, mask=None):
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (..., i, j)
    if mask is not None:
        mask = np.asarray(mask)
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0.0, total, 1.0)  # (..., i, j); a hidden row: zeros
    return weights @ v, weights  # (..., i, d_v), (..., i, j)


def causal_mask(n_query, n_key, dtype=np.float64):
    i = np.arange(n_query)[:, None] + (n_key - n_query)  # queries are the last positions
    j = np.arange(n_key)[None, :]
    return np.where(j <= i, 0.0, -np.inf).astype(dtype)  # (i, j): 0 may attend, -inf not


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_head):
    x = np.asarray(x, dtype=np.float64)
    b, n, d = x.shape
    d_k = d // n_head

    def heads(w):
        return (x @ w.T).reshape(b, n, n_head, d_k).transpose(0, 2, 1, 3)  # (b, h, n, d_k)

    q, k, v = heads(w_q), heads(w_k), heads(w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)  # (b, h, n, n)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    merged = (weights @ v).transpose(0, 2, 1, 3).reshape(b, n, d)  # (b, n, h * d_k)
    return merged @ w_o.T  # (b, n, d)


def score_statistics(d, scaled, rng, rows=1000, keys=64):
    q = rng.standard_normal((rows, 1, d))  # one query per row
    k = rng.standard_normal((rows, keys, d))  # its keys
    scores = (q * k).sum(axis=-1)  # (rows, keys): q·k
    if scaled:
        scores = scores / np.sqrt(d)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    frozen = (weights.max(axis=-1) > 0.99).mean()  # rows with more than 0.99 on one key
    return float(scores.var()), float(frozen)


def sinusoidal(n, d):
    p = np.arange(n)[:, None]  # (n, 1) positions 0..n-1
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,) one frequency per pair
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(p * freq)
    pe[:, 1::2] = np.cos(p * freq)
    return pe


def rope(x, positions):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    angle = np.asarray(positions)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)  # (n, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]  # the pairs (2i, 2i+1)
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def attention_backward(q, k, v, dout):
    s = 1.0 / np.sqrt(q.shape[-1])
    scores = q @ k.T * s  # (i, j)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)  # (i, j)
    dv = p.T @ dout  # (j, d_v)
    dp = dout @ v.T  # (i, j)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))  # softmax Jacobian: diag(p) - p pᵀ
    dq = ds @ k * s  # (i, d_k)
    dk = ds.T @ q * s  # (j, d_k)
    return dq, dk, dv


def decode_step(q_new, k_new, v_new, cache_k, cache_v):
    cache_k = np.concatenate([cache_k, k_new], axis=0)  # (t + 1, d): the new token sees itself
    cache_v = np.concatenate([cache_v, v_new], axis=0)
    scores = q_new @ cache_k.T / np.sqrt(q_new.shape[-1])  # (1, t + 1)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ cache_v, cache_k, cache_v  # (1, d_v), (t + 1, d), (t + 1, d_v)
