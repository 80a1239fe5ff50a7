"""The mutation table of exercise 7 (sinusoidal): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


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


WRONG = {  # mistake -> a function that makes it
    "swapped": sin_swapped,
    "halves": sin_halves,
    "inverse_frequency": sin_inverse,
    "per_column": sin_per_column,
    "from_one": sin_from_one,
}
