"""The reference solution of exercise 2, as ``attnlab lab solution 2`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


def averaging_matrix(n):
    lower = np.tril(np.ones((n, n)))  # row i keeps columns 0..i
    return lower / lower.sum(axis=1, keepdims=True)  # row i: 1/(i+1) on each kept column
