"""The reference solution of exercise 13, as ``attnlab lab solution 13`` prints it:
self-contained, NumPy only. The checker compares against ``attnlab.reference.additive``
(float64, W and U stored transposed there); the tests run every case on it.

Dimension legend: ``b`` batch (one decoder state per sentence), ``n`` source positions,
``d_s`` decoder-state width, ``d_h`` encoder-state width, ``a`` attention width.
"""

from __future__ import annotations

import numpy as np


def additive_attention(s, h, w, u, v, src_mask):
    s, h, w, u, v = (np.asarray(t, dtype=np.float64) for t in (s, h, w, u, v))
    keep = np.asarray(src_mask, dtype=bool)  # (b, n): True where a real source word
    hidden = np.tanh((s @ w)[:, None, :] + h @ u)  # (b, n, a): s W + h_j U for every j
    scores = np.where(keep, hidden @ v, -np.inf)  # (b, n): padded source words hidden
    top = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0.0, total, 1.0)  # (b, n): over the source, per sentence
    context = (weights[:, None, :] @ h)[:, 0]  # (b, d_h): the weighted mean of h
    return context, weights
