"""The mutation table of exercise 8 (rope): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def _rope(x, positions, freq_sign=-1.0, sin_sign=1.0, halves=False, one=False):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freq = np.ones(d // 2) if one else 10000.0 ** (freq_sign * np.arange(0, d, 2) / d)
    angle = np.asarray(positions)[:, None] * freq
    c, s = np.cos(angle), sin_sign * np.sin(angle)
    a, b = (x[..., : d // 2], x[..., d // 2 :]) if halves else (x[..., 0::2], x[..., 1::2])
    r0, r1 = a * c - b * s, a * s + b * c
    if halves:
        return np.concatenate([r0, r1], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = r0, r1
    return out


def rope_direction(x, positions):
    return _rope(x, positions, sin_sign=-1.0)


def rope_halves(x, positions):
    return _rope(x, positions, halves=True)


def rope_one_frequency(x, positions):
    return _rope(x, positions, one=True)


def rope_inverse(x, positions):
    return _rope(x, positions, freq_sign=1.0)


def rope_ignores_positions(x, positions):
    return _rope(x, np.arange(np.shape(x)[-2]))


WRONG = {  # mistake -> a function that makes it
    "direction": rope_direction,
    "halves": rope_halves,
    "one_frequency": rope_one_frequency,
    "inverse_frequency": rope_inverse,
    "ignores_positions": rope_ignores_positions,
}
