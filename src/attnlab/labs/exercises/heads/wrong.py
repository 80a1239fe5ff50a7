"""The mutation table of exercise 5 (heads): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def _soft(s, axis=-1):
    top = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=axis, keepdims=True)
    return e / np.where(t > 0, t, 1)


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


def heads_softmax_over_heads(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    dk = d // n_head
    q, k, v = ((x @ w.T).reshape(b, n, n_head, dk).transpose(0, 2, 1, 3) for w in (w_q, w_k, w_v))
    w = _soft(q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk), axis=1)  # (b, h, n, n): over h
    return (w @ v).transpose(0, 2, 1, 3).reshape(b, n, d) @ w_o.T


def heads_shared_kv(x, w_q, w_k, w_v, w_o, n_head):
    b, n, d = x.shape
    dk = d // n_head
    q = (x @ w_q.T).reshape(b, n, n_head, dk).transpose(0, 2, 1, 3)  # (b, h, n, d_k)
    k, v = x @ w_k[:dk].T, x @ w_v[:dk].T  # (b, n, d_k): one K and V, for every head
    w = _soft(q @ k[:, None].transpose(0, 1, 3, 2) / np.sqrt(dk))
    return (w @ v[:, None]).transpose(0, 2, 1, 3).reshape(b, n, d) @ w_o.T


WRONG = {  # mistake -> a function that makes it
    "no_w_o": heads_no_wo,
    "merge_order": heads_merge_order,
    "interleaved_split": heads_interleaved,
    "transposed_weights": heads_transposed,
    "scale_d_model": heads_scale_d,
    "softmax_heads": heads_softmax_over_heads,
    "shared_kv": heads_shared_kv,
}
