"""The mutation table's wrong implementations for exercises 5-10 (see labs_wrong.py)."""

from __future__ import annotations

import numpy as np
from labs_wrong import _soft

# -- 5 heads ---------------------------------------------------------------------------------


def _heads_core(x, w_q, w_k, w_v, n_head, split="block", factor=None):
    b, n, d = x.shape
    dk = d // n_head

    def cut(w):
        y = x @ w.T
        if split == "block":
            return y.reshape(b, n, n_head, dk).transpose(0, 2, 1, 3)
        return y.reshape(b, n, dk, n_head).transpose(0, 3, 1, 2)

    q, k, v = cut(w_q), cut(w_k), cut(w_v)
    w = _soft(q @ k.transpose(0, 1, 3, 2) * (factor or 1 / np.sqrt(dk)))
    return w @ v


def heads_no_wo(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    return _heads_core(x, w_q, w_k, w_v, n_head).transpose(0, 2, 1, 3).reshape(b, n, d)


def heads_merge_order(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    return _heads_core(x, w_q, w_k, w_v, n_head).reshape(b, n, d) @ w_o.T


def heads_interleaved(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    h = _heads_core(x, w_q, w_k, w_v, n_head, split="interleaved")
    return h.transpose(0, 2, 3, 1).reshape(b, n, d) @ w_o.T


def heads_transposed(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    h = _heads_core(x, w_q.T, w_k.T, w_v.T, n_head)
    return h.transpose(0, 2, 1, 3).reshape(b, n, d) @ w_o


def heads_scale_d(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    h = _heads_core(x, w_q, w_k, w_v, n_head, factor=1 / np.sqrt(d))
    return h.transpose(0, 2, 1, 3).reshape(b, n, d) @ w_o.T


# -- 6 scale ---------------------------------------------------------------------------------


def _draw(d, rng, rows, keys):
    return rng.standard_normal((rows, 1, d)), rng.standard_normal((rows, keys, d))


def _frozen(scores):
    return float((_soft(scores).max(-1) > 0.99).mean())


def scale_by_d(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (d if scaled else 1)
    return float(s.var()), _frozen(s)


def scale_std(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.std()), _frozen(s)


def scale_products(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    products = q * k / (np.sqrt(d) if scaled else 1)
    s = products.sum(-1)
    return float(products.var()), _frozen(s)


def scale_ignored(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1)
    return float(s.var()), _frozen(s)


def scale_count(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.var()), float((_soft(s).max(-1) > 0.99).sum())


def scale_global_rng(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, np.random, rows, keys)  # the module's global generator, not rng
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.var()), _frozen(s)


# -- 7 sinusoidal ----------------------------------------------------------------------------


def sin_swapped(n, d):
    angle = np.arange(n)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angle), np.sin(angle)
    return pe


def sin_halves(n, d):
    angle = np.arange(n)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


def sin_inverse(n, d):
    angle = np.arange(n)[:, None] * 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def sin_per_column(n, d):
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(d):
            angle = p / 10000 ** (2 * i / d)
            pe[p, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    return pe


def sin_from_one(n, d):
    angle = np.arange(1, n + 1)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


# -- 8 rope ----------------------------------------------------------------------------------


def _rope(x, positions, freq_sign=-1.0, sin_sign=1.0, halves=False, one=False):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freq = np.ones(d // 2) if one else 10000.0 ** (freq_sign * np.arange(0, d, 2) / d)
    angle = np.asarray(positions)[:, None] * freq
    c, s = np.cos(angle), sin_sign * np.sin(angle)
    a, b = (x[..., : d // 2], x[..., d // 2 :]) if halves else (x[..., 0::2], x[..., 1::2])
    r0, r1 = a * c - b * s, a * s + b * c
    if halves:
        return np.concatenate([r0, r1], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = r0, r1
    return out


def rope_direction(x, positions):
    return _rope(x, positions, sin_sign=-1.0)


def rope_halves(x, positions):
    return _rope(x, positions, halves=True)


def rope_one_frequency(x, positions):
    return _rope(x, positions, one=True)


def rope_inverse(x, positions):
    return _rope(x, positions, freq_sign=1.0)


def rope_ignores_positions(x, positions):
    return _rope(x, np.arange(np.shape(x)[-2]))


# -- 9 backward ------------------------------------------------------------------------------


def _forward(q, k):
    s = 1 / np.sqrt(q.shape[-1])
    return s, _soft(q @ k.T * s)


def backward_no_rowsum(q, k, v, dout):
    s, p = _forward(q, k)
    ds = p * (dout @ v.T)
    return ds @ k * s, ds.T @ q * s, p.T @ dout


def backward_no_scale(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k, ds.T @ q, p.T @ dout


def backward_sign(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * ((dp * p).sum(-1, keepdims=True) - dp)
    return ds @ k * s, ds.T @ q * s, p.T @ dout


def backward_dv(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * s, ds.T @ q * s, p @ dout


def backward_dk(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * s, ds @ q * s, p.T @ dout


# -- 10 cache --------------------------------------------------------------------------------


def _look(q, k, v):
    w = _soft(q @ k.T / np.sqrt(q.shape[-1]))
    return w @ v


def cache_before_append(q_new, k_new, v_new, cache_k, cache_v):
    out = _look(q_new, cache_k, cache_v) if len(cache_k) else np.zeros_like(v_new)
    return out, np.concatenate([cache_k, k_new]), np.concatenate([cache_v, v_new])


def cache_prepends(q_new, k_new, v_new, cache_k, cache_v):
    k, v = np.concatenate([k_new, cache_k]), np.concatenate([v_new, cache_v])
    return _look(q_new, k, v), k, v


def cache_forgets(q_new, k_new, v_new, cache_k, cache_v):
    return _look(q_new, k_new, v_new), k_new, v_new


def cache_old(q_new, k_new, v_new, cache_k, cache_v):
    k, v = np.concatenate([cache_k, k_new]), np.concatenate([cache_v, v_new])
    return _look(q_new, k, v), cache_k, cache_v


WRONG_MORE = {
    ("heads", "no_w_o"): heads_no_wo,
    ("heads", "merge_order"): heads_merge_order,
    ("heads", "interleaved_split"): heads_interleaved,
    ("heads", "transposed_weights"): heads_transposed,
    ("heads", "scale_d_model"): heads_scale_d,
    ("scale", "divides_by_d"): scale_by_d,
    ("scale", "std"): scale_std,
    ("scale", "products"): scale_products,
    ("scale", "scaled_ignored"): scale_ignored,
    ("scale", "frozen_count"): scale_count,
    ("scale", "global_rng"): scale_global_rng,
    ("sinusoidal", "swapped"): sin_swapped,
    ("sinusoidal", "halves"): sin_halves,
    ("sinusoidal", "inverse_frequency"): sin_inverse,
    ("sinusoidal", "per_column"): sin_per_column,
    ("sinusoidal", "from_one"): sin_from_one,
    ("rope", "direction"): rope_direction,
    ("rope", "halves"): rope_halves,
    ("rope", "one_frequency"): rope_one_frequency,
    ("rope", "inverse_frequency"): rope_inverse,
    ("rope", "ignores_positions"): rope_ignores_positions,
    ("backward", "no_rowsum"): backward_no_rowsum,
    ("backward", "no_scale"): backward_no_scale,
    ("backward", "sign"): backward_sign,
    ("backward", "dv_transpose"): backward_dv,
    ("backward", "dk_transpose"): backward_dk,
    ("cache", "attends_before_append"): cache_before_append,
    ("cache", "prepends"): cache_prepends,
    ("cache", "forgets_cache"): cache_forgets,
    ("cache", "old_cache"): cache_old,
}
