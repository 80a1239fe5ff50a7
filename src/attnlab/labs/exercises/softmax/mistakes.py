"""The mistake probes of exercise 1 (softmax): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same

INF = np.inf


def _softmax_right(fn: Fn, x: np.ndarray, axis: int = -1) -> bool:
    return same(fn(x, axis=axis), ref.softmax(x, axis))


_WIDE = np.array([[0.0, 1.0], [1000.0, 1001.0], [-800.0, 0.0]])  # x - x.min() overflows
_SMALL = np.array([[0.0, 1.0, -2.0, 0.5], [1.5, -1.0, 0.0, 2.0], [0.3, 0.2, 0.1, -0.4]])


def _unnormalised(x: np.ndarray) -> np.ndarray:
    return np.exp(x - x.max(axis=-1, keepdims=True))


MISTAKES = (
    Mistake(
        "softmax.mistake.no_max",
        lambda fn: (
            _softmax_right(fn, np.array([0.0, 1.0]))
            and not np.isfinite(fn(np.array([1000.0, 1000.0]))).all()
        ),
    ),
    Mistake(
        "softmax.mistake.nan_hidden_row",
        lambda fn: (
            _softmax_right(fn, _WIDE)  # rows of their own: the maximum is subtracted
            and np.isnan(fn(np.array([-INF, -INF]))).any()
        ),
    ),
    Mistake(
        "softmax.mistake.global_max",
        lambda fn: (
            _softmax_right(fn, np.array([[0.0, 1.0], [2.0, 4.0]]))
            and not _softmax_right(fn, np.array([[0.0, 1.0], [1000.0, 1001.0]]))
            and same(
                fn(np.array([[0.0, 1.0], [1000.0, 1001.0]]))[1],
                ref.softmax(np.array([1000.0, 1001.0])),
            )
        ),
    ),
    Mistake(
        "softmax.mistake.ignores_axis", lambda fn: same(fn(_SMALL, axis=0), ref.softmax(_SMALL, -1))
    ),
    Mistake(
        "softmax.mistake.whole_array",
        lambda fn: (
            same(fn(_SMALL), _unnormalised(_SMALL) / _unnormalised(_SMALL).sum())
            or same(fn(_SMALL), np.exp(_SMALL - _SMALL.max()) / np.exp(_SMALL - _SMALL.max()).sum())
        ),
    ),
    Mistake(
        "softmax.mistake.not_normalised",
        lambda fn: same(fn(_SMALL), _unnormalised(_SMALL)) or same(fn(_SMALL), np.exp(_SMALL)),
    ),
)
