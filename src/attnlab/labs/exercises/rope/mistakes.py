"""The mistake probes of exercise 8 (rope): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same

_FREQ = 10000.0 ** (-np.arange(0, 8, 2) / 8)


_RX = np.random.default_rng(80).normal(size=(5, 8))
_POS = np.arange(2, 7)


def _rotate(
    x: np.ndarray, positions: np.ndarray, freq: np.ndarray, halves: bool = False, sign: float = 1.0
) -> np.ndarray:
    angle = positions[:, None] * freq[None, :]
    cos, sin = np.cos(angle), sign * np.sin(angle)
    d = x.shape[-1]
    x0, x1 = (x[..., : d // 2], x[..., d // 2 :]) if halves else (x[..., 0::2], x[..., 1::2])
    a, b = x0 * cos - x1 * sin, x0 * sin + x1 * cos
    if halves:
        return np.concatenate([a, b], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a, b
    return out


def _rope_out(fn: Fn) -> np.ndarray:
    return np.asarray(fn(_RX, _POS))


MISTAKES = (
    Mistake(
        "rope.mistake.direction",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, _FREQ, sign=-1.0)),
    ),
    Mistake(
        "rope.mistake.halves",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, _FREQ, halves=True)),
    ),
    Mistake(
        "rope.mistake.one_frequency", lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, np.ones(4)))
    ),
    Mistake(
        "rope.mistake.inverse_frequency",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, 1 / _FREQ)),
    ),
    Mistake(
        "rope.mistake.ignores_positions",
        lambda fn: same(_rope_out(fn), _rotate(_RX, np.arange(5), _FREQ)),
    ),
)
