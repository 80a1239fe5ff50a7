"""The reference solution of exercise 10, as ``attnlab lab solution 10`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


def decode_step(q_new, k_new, v_new, cache_k, cache_v):
    cache_k = np.concatenate([cache_k, k_new], axis=0)  # (t + 1, d): the new token sees itself
    cache_v = np.concatenate([cache_v, v_new], axis=0)
    scores = q_new @ cache_k.T / np.sqrt(q_new.shape[-1])  # (1, t + 1)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ cache_v, cache_k, cache_v  # (1, d_v), (t + 1, d), (t + 1, d_v)
