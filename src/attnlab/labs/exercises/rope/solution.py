"""The reference solution of exercise 8, as ``attnlab lab solution 8`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


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
