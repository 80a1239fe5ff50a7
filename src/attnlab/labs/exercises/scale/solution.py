"""The reference solution of exercise 6, as ``attnlab lab solution 6`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


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
