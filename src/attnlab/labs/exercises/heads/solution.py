"""The reference solution of exercise 5, as ``attnlab lab solution 5`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


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
