"""The mistake probes of exercise 7 (sinusoidal): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Mistake
from attnlab.labs.compare import same


def _table(
    n: int, d: int, freq: np.ndarray, start: int = 0, swap: bool = False, halves: bool = False
) -> np.ndarray:
    angle = np.arange(start, start + n)[:, None] * freq[None, :]
    a, b = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    if halves:
        return np.concatenate([a, b], axis=1)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = a, b
    return pe


_FREQ = 10000.0 ** (-np.arange(0, 8, 2) / 8)


def _per_column(n: int, d: int) -> np.ndarray:
    c = np.arange(d)
    angle = np.arange(n)[:, None] * 10000.0 ** (-2 * c / d)[None, :]
    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle))


MISTAKES = (
    Mistake(
        "sinusoidal.mistake.swapped", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, swap=True))
    ),
    Mistake(
        "sinusoidal.mistake.halves", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, halves=True))
    ),
    Mistake(
        "sinusoidal.mistake.inverse_frequency", lambda fn: same(fn(6, 8), _table(6, 8, 1 / _FREQ))
    ),
    Mistake("sinusoidal.mistake.per_column", lambda fn: same(fn(6, 8), _per_column(6, 8))),
    Mistake("sinusoidal.mistake.from_one", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, start=1))),
)
