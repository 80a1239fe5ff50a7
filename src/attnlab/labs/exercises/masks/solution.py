"""The reference solution of exercise 4, as ``attnlab lab solution 4`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


def causal_mask(n_query, n_key, dtype=np.float64):
    i = np.arange(n_query)[:, None] + (n_key - n_query)  # queries are the last positions
    j = np.arange(n_key)[None, :]
    return np.where(j <= i, 0.0, -np.inf).astype(dtype)  # (i, j): 0 may attend, -inf not
