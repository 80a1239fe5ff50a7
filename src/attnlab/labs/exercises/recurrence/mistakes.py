"""The mistake probes of exercise 11 (recurrence): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same
from attnlab.labs.exercises.recurrence.measure import _dh, _parts, rate_of

_R = np.random.default_rng(110)
_PROBE = (_R.normal(size=(3, 3)) * 0.8, _R.normal(size=(3, 2)) * 1.5, _R.normal(size=(6, 2)),
          _R.normal(size=3))


def _learner(fn: Fn) -> tuple[np.ndarray, float, tuple]:
    return _parts(fn(*_PROBE))


def _wrong_dh(jacobian) -> np.ndarray:
    return _dh(*_PROBE, jacobian=jacobian)


def _total(dh: np.ndarray) -> float:
    return float(np.linalg.norm(dh[0]) / np.linalg.norm(dh[-1]))


MISTAKES = (
    Mistake("recurrence.mistake.no_tanh", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: _PROBE[0]))),
    Mistake("recurrence.mistake.transpose", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: (1.0 - h[t] ** 2)[:, None] * _PROBE[0].T))),
    Mistake("recurrence.mistake.earlier_state", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: (1.0 - h[t - 1] ** 2)[:, None] * _PROBE[0]))),
    Mistake("recurrence.mistake.fit_against_t", lambda fn: np.isclose(
        _learner(fn)[1], 1.0 / rate_of(_dh(*_PROBE)), rtol=1e-6)),
    Mistake("recurrence.mistake.total_decay", lambda fn: np.isclose(
        _learner(fn)[1], _total(_dh(*_PROBE)), rtol=1e-6)),
    Mistake("recurrence.mistake.attention_sequential",
            lambda fn: _learner(fn)[2][1] == len(_PROBE[2])),
)
