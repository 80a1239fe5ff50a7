"""The mistake probes of exercise 3 (attention): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same

INF = np.inf


def _attend(q, k, v, factor, axis=-1, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) * factor
    if mask is not None:
        scores = np.where(mask, scores, -INF)
    w = ref.softmax(scores, axis)
    return w @ v, w


_RNG = np.random.default_rng(30)
_Q, _K = _RNG.normal(size=(4, 4)), _RNG.normal(size=(4, 4))
_V, _V9 = _RNG.normal(size=(4, 2)), _RNG.normal(size=(4, 9))
_MASK = np.array([[True, True, False, False]] * 2 + [[True, False, True, True]] * 2)


def _out(fn: Fn, *args) -> np.ndarray:
    return np.asarray(fn(*args)[0])


MISTAKES = (
    Mistake(
        "attention.mistake.divides_by_dk",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 1 / 4)[0]),
    ),
    Mistake(
        "attention.mistake.no_scale",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 1.0)[0]),
    ),
    Mistake(
        "attention.mistake.scale_dv",
        lambda fn: same(_out(fn, _Q, _K, _V9), _attend(_Q, _K, _V9, 1 / 3)[0]),
    ),
    Mistake(
        "attention.mistake.wrong_axis",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 0.5, axis=-2)[0]),
    ),
    Mistake(
        "attention.mistake.transposed_scores",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_K, _Q, _V, 0.5)[0]),
    ),
    Mistake(
        "attention.mistake.swapped_return",
        lambda fn: (
            same(fn(_Q[:3], _K, _V)[0], _attend(_Q[:3], _K, _V, 0.5)[1])
            and same(fn(_Q[:3], _K, _V)[1], _attend(_Q[:3], _K, _V, 0.5)[0])
        ),
    ),
    Mistake(
        "attention.mistake.mask_after_softmax",
        lambda fn: same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5)[1] * _MASK),
    ),
    Mistake(
        "attention.mistake.mask_inverted",
        lambda fn: same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5, mask=~_MASK)[1]),
    ),
    Mistake(
        "attention.mistake.mask_ignored",
        lambda fn: (
            same(fn(_Q, _K, _V)[1], _attend(_Q, _K, _V, 0.5)[1])
            and same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5)[1])
        ),
    ),
)
