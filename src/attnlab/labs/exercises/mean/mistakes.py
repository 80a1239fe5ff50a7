"""The mistake probes of exercise 2 (mean): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Mistake
from attnlab.labs.compare import same


def _tril_rows(n: int, keep: np.ndarray) -> np.ndarray:
    total = keep.sum(axis=1, keepdims=True)
    return keep / np.where(total > 0, total, 1.0)


_N = 4
_LOWER = np.tril(np.ones((_N, _N)))
MISTAKES = (
    Mistake(
        "mean.mistake.future", lambda fn: same(fn(_N), _tril_rows(_N, np.triu(np.ones((_N, _N)))))
    ),
    Mistake("mean.mistake.divides_by_n", lambda fn: same(fn(_N), _LOWER / _N)),
    Mistake(
        "mean.mistake.excludes_self",
        lambda fn: same(np.asarray(fn(_N))[1:], _tril_rows(_N, np.tril(np.ones((_N, _N)), -1))[1:]),
    ),
    Mistake("mean.mistake.no_mask", lambda fn: same(fn(_N), np.full((_N, _N), 1 / _N))),
    Mistake("mean.mistake.not_normalised", lambda fn: same(fn(_N), _LOWER)),
)
