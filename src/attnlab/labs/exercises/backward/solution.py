"""The reference solution of exercise 9, as ``attnlab lab solution 9`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


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
