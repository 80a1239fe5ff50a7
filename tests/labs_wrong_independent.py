"""A second set of wrong answers, independent of the mutation table: mistakes a learner makes
that no probe is written for (or that only partly look like one that is).

Each is written as a learner would write it, without looking at the probes. ``INDEPENDENT``
maps ``(exercise name, label)`` to ``(function, keys)``: ``keys`` are the mistakes whose
messages are true of that function (most often none); a probe that names any other is a
misnaming (``tests/test_labs_misnaming.py``).
"""

from __future__ import annotations

import numpy as np


def _soft(s, axis=-1):
    top = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=axis, keepdims=True)
    return e / np.where(t > 0, t, 1)


# -- 1 softmax -------------------------------------------------------------------------------


def softmax_min_shift(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))  # min, not max: a wide row overflows
    return e / e.sum(axis=axis, keepdims=True)


def softmax_axis0_default(x, axis=0):
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0))
    s = e.sum(axis=axis, keepdims=True)
    return e / np.where(s > 0, s, 1)


def softmax_no_keepdims(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


# -- 2 mean ----------------------------------------------------------------------------------


def mean_transposed(n):
    a = np.tril(np.ones((n, n)))
    return (a / a.sum(axis=1, keepdims=True)).T


def mean_divides_columns(n):
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)  # broadcasts over columns, not rows


# -- 3 attention -----------------------------------------------------------------------------


def attention_sqrt_twice(q, k, v, mask=None):
    d = q.shape[-1]
    w = _soft(q @ np.swapaxes(k, -1, -2) / np.sqrt(d) / np.sqrt(d))
    return w @ v, w


def attention_weights_transposed(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    w = _soft(s)
    return w @ v, np.swapaxes(w, -1, -2)


def attention_scale_after(q, k, v, mask=None):
    w = _soft(q @ np.swapaxes(k, -1, -2))
    return w @ v / np.sqrt(q.shape[-1]), w


def attention_mask_times(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s * np.asarray(mask)  # a hidden score becomes 0, not -inf
    w = _soft(s)
    return w @ v, w


# -- 4 masks ---------------------------------------------------------------------------------


def mask_triu(n_query, n_key, dtype=np.float64):
    return np.where(np.triu(np.ones((n_query, n_key))) > 0, 0.0, -np.inf).astype(dtype)


def mask_minus_1e4(n_query, n_key, dtype=np.float64):
    i = np.arange(n_query)[:, None] + n_key - n_query
    return np.where(np.arange(n_key) <= i, 0.0, -1e4).astype(dtype)


def mask_triu_inf(n_query, n_key, dtype=np.float64):
    return np.triu(np.full((n_query, n_key), -np.inf), k=0).astype(dtype)


def mask_window(n_query, n_key, dtype=np.float64):
    i = np.arange(n_query)[:, None] + n_key - n_query
    j = np.arange(n_key)[None, :]
    return np.where((j <= i) & (j > i - 2), 0.0, -np.inf).astype(dtype)


def mask_square_times_inf(n_query, n_key, dtype=np.float64):
    return (np.triu(np.ones((n_query, n_key)), 1) * -np.inf).astype(dtype)


def mask_square_padded(n_query, n_key, dtype=np.float64):
    square = np.where(np.tril(np.ones((n_query, n_query))) > 0, 0.0, -np.inf)
    past = np.full((n_query, n_key - n_query), -np.inf)  # the keys before the queries, hidden
    return np.concatenate([past, square], axis=1).astype(dtype)


# -- 5 heads ---------------------------------------------------------------------------------


def heads_split_straight(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    q, k, v = ((x @ w.T).reshape(b, n_head, n, d // n_head) for w in (w_q, w_k, w_v))
    w = _soft(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // n_head))
    return (w @ v).reshape(b, n, d) @ w_o.T


def heads_reversed(x, w_q, w_k, w_v, w_o, n_head):
    dk = x.shape[-1] // n_head
    outs = []
    for h in range(n_head):
        cols = slice(h * dk, (h + 1) * dk)
        q, k, v = x @ w_q[cols].T, x @ w_k[cols].T, x @ w_v[cols].T
        outs.insert(0, _soft(q @ np.swapaxes(k, -1, -2) / np.sqrt(dk)) @ v)  # front, not back
    return np.concatenate(outs, axis=-1) @ w_o.T


def heads_w_o_untransposed(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    dk = d // n_head
    q, k, v = ((x @ w.T).reshape(b, n, n_head, dk).transpose(0, 2, 1, 3) for w in (w_q, w_k, w_v))
    w = _soft(q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk))
    return (w @ v).transpose(0, 2, 1, 3).reshape(b, n, d) @ w_o


# -- 6 scale ---------------------------------------------------------------------------------


def scale_frozen_half(d, scaled, rng, rows=1000, keys=64):
    q, k = rng.standard_normal((rows, 1, d)), rng.standard_normal((rows, keys, d))
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1.0)
    w = _soft(s)
    return float(s.var()), float((w.max(-1) > 0.5).mean())  # 0.5, not 0.99


# -- 7 sinusoidal ----------------------------------------------------------------------------


def sin_no_two(n, d):
    p = np.arange(n)[:, None]
    freq = 10000.0 ** (-np.arange(d // 2) / d)  # i / d, not 2i / d
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(p * freq), np.cos(p * freq)
    return pe


def sin_base_1000(n, d):
    p = np.arange(n)[:, None]
    freq = 1000.0 ** (-np.arange(0, d, 2) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(p * freq), np.cos(p * freq)
    return pe


# -- 8 rope ----------------------------------------------------------------------------------


def rope_positions_plus_one(x, positions):
    d = x.shape[-1]
    angle = (np.asarray(positions)[:, None] + 1) * 10000.0 ** (-np.arange(0, d, 2) / d)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * np.cos(angle) - x1 * np.sin(angle)
    out[..., 1::2] = x0 * np.sin(angle) + x1 * np.cos(angle)
    return out


# -- 9 backward ------------------------------------------------------------------------------


def _backward(q, k, v, dout, dq_scale=1.0, dk_scale=1.0):
    s = 1.0 / np.sqrt(q.shape[-1])
    p = _soft(q @ k.T * s)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * s * dq_scale, ds.T @ q * s * dk_scale, p.T @ dout


def backward_dq_unscaled(q, k, v, dout):
    return _backward(q, k, v, dout, dq_scale=np.sqrt(q.shape[-1]))  # dq = ds @ k, no s


def backward_dk_scaled_twice(q, k, v, dout):
    return _backward(q, k, v, dout, dk_scale=1.0 / np.sqrt(q.shape[-1]))  # dk = ds.T @ q * s * s


# -- 10 cache --------------------------------------------------------------------------------


def cache_keys_in_front(q_new, k_new, v_new, cache_k, cache_v):
    cache_k = np.concatenate([k_new, cache_k])  # the keys at the front, the values at the end
    cache_v = np.concatenate([cache_v, v_new])
    w = _soft(q_new @ cache_k.T / np.sqrt(q_new.shape[-1]))
    return w @ cache_v, cache_k, cache_v


def cache_no_scale(q_new, k_new, v_new, cache_k, cache_v):
    cache_k, cache_v = np.concatenate([cache_k, k_new]), np.concatenate([cache_v, v_new])
    w = _soft(q_new @ cache_k.T)
    return w @ cache_v, cache_k, cache_v


# -- 13 additive -----------------------------------------------------------------------------


def additive_minus_1e9(s, h, w, u, v, src_mask):
    scores = np.tanh((s @ w)[:, None, :] + h @ u) @ v
    weights = _soft(np.where(src_mask, scores, -1e9))  # a sentence of padding only: uniform
    return np.einsum("bn,bnd->bd", weights, h), weights


def additive_no_new_axis(s, h, w, u, v, src_mask):
    scores = np.tanh(s @ w + h @ u) @ v  # (b, a) + (b, n, a): broadcasts only when b is 1 or n
    weights = _soft(np.where(src_mask, scores, -np.inf))
    return np.einsum("bn,bnd->bd", weights, h), weights


def additive_context_mean(s, h, w, u, v, src_mask):
    weights = _soft(np.where(src_mask, np.tanh((s @ w)[:, None, :] + h @ u) @ v, -np.inf))
    return np.asarray(h).mean(axis=1), weights  # the context forgets the weights


NONE: frozenset[str] = frozenset()

INDEPENDENT = {
    ("softmax", "min_shift"): (softmax_min_shift, NONE),
    ("softmax", "axis0_default"): (softmax_axis0_default, NONE),
    ("softmax", "no_keepdims"): (softmax_no_keepdims, NONE),
    ("mean", "transposed"): (mean_transposed, NONE),
    ("mean", "divides_columns"): (mean_divides_columns, NONE),
    # / √d twice is / d: the output of divides_by_dk exactly, so that message is true of it
    ("attention", "sqrt_twice"): (attention_sqrt_twice, frozenset({"divides_by_dk"})),
    ("attention", "weights_transposed"): (attention_weights_transposed, NONE),
    ("attention", "scale_after"): (attention_scale_after, NONE),
    ("attention", "mask_times"): (attention_mask_times, NONE),
    # square, triu is the causal mask transposed: transposed's message is true of fn(4, 4)
    ("masks", "triu"): (mask_triu, frozenset({"transposed"})),
    ("masks", "minus_1e4"): (mask_minus_1e4, NONE),
    # triu(k=0) of a square hides the diagonal: diagonal_hidden's message is true of fn(4, 4)
    ("masks", "triu_inf"): (mask_triu_inf, frozenset({"diagonal_hidden"})),
    ("masks", "window"): (mask_window, NONE),
    # square, it is a 0/1 matrix times -inf: the NaN that times_inf names is there in fn(3, 3)
    ("masks", "square_times_inf"): (mask_square_times_inf, frozenset({"times_inf"})),
    # the causal square of the last keys, the earlier keys hidden: square_only, exactly
    ("masks", "square_padded"): (mask_square_padded, frozenset({"square_only"})),
    ("heads", "split_straight"): (heads_split_straight, NONE),
    ("heads", "reversed"): (heads_reversed, NONE),
    ("heads", "w_o_untransposed"): (heads_w_o_untransposed, NONE),
    ("scale", "frozen_half"): (scale_frozen_half, NONE),
    ("sinusoidal", "no_two"): (sin_no_two, NONE),
    ("sinusoidal", "base_1000"): (sin_base_1000, NONE),
    ("rope", "positions_plus_one"): (rope_positions_plus_one, NONE),
    ("backward", "dq_unscaled"): (backward_dq_unscaled, NONE),
    ("backward", "dk_scaled_twice"): (backward_dk_scaled_twice, NONE),
    ("cache", "keys_in_front"): (cache_keys_in_front, NONE),
    ("cache", "no_scale"): (cache_no_scale, NONE),
    ("additive", "minus_1e9"): (additive_minus_1e9, NONE),
    ("additive", "no_new_axis"): (additive_no_new_axis, NONE),
    ("additive", "context_mean"): (additive_context_mean, NONE),
}
