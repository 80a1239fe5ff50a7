"""The mistake probes of exercise 9 (backward): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same

_BR = np.random.default_rng(90)
_BQ, _BK, _BV, _BD = (_BR.normal(size=(3, 3)) for _ in range(4))


def _bwd_parts():
    s = 1.0 / np.sqrt(3.0)
    p = ref.softmax(_BQ @ _BK.T * s)
    dp = _BD @ _BV.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return s, p, dp, ds


def _axis0() -> np.ndarray:
    _, p, dp, _ = _bwd_parts()
    return p * (dp - (dp * p).sum(0, keepdims=True))


def _learner(fn: Fn) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(g) for g in fn(_BQ, _BK, _BV, _BD))


def _dq_dk(fn: Fn, ds: np.ndarray, s: float) -> bool:
    """The learner's dq and dk are both what the softmax gradient ``ds`` gives, times ``s``."""
    dq, dk = _learner(fn)[:2]
    return same(dq, ds @ _BK * s) and same(dk, ds.T @ _BQ * s)


def _swapped(fn: Fn) -> bool:
    """The learner's first gradient is dK and their second dQ (q and k are both (3, 3) here)."""
    s, _, _, ds = _bwd_parts()
    dq, dk = _learner(fn)[:2]
    return same(dq, ds.T @ _BQ * s) and same(dk, ds @ _BK * s)


MISTAKES = (
    Mistake("backward.mistake.no_rowsum",
            lambda fn: _dq_dk(fn, _bwd_parts()[1] * _bwd_parts()[2], _bwd_parts()[0])),
    Mistake("backward.mistake.no_scale", lambda fn: _dq_dk(fn, _bwd_parts()[3], 1.0)),
    Mistake("backward.mistake.sign", lambda fn: _dq_dk(fn, -_bwd_parts()[3], _bwd_parts()[0])),
    Mistake(
        "backward.mistake.dv_transpose", lambda fn: same(_learner(fn)[2], _bwd_parts()[1] @ _BD)
    ),
    Mistake(
        "backward.mistake.dk_transpose",
        lambda fn: same(_learner(fn)[1], _bwd_parts()[3] @ _BQ * _bwd_parts()[0]),
    ),
    Mistake(  # dP ⊙ P summed down each column (over the queries), not along each row
        "backward.mistake.rowsum_axis0",
        lambda fn: _dq_dk(fn, _axis0(), _bwd_parts()[0]),
    ),
    Mistake("backward.mistake.dq_dk_swapped", _swapped),
)
