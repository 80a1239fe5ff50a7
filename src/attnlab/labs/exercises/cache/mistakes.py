"""The mistake probes of exercise 10 (cache): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same
from attnlab.labs.exercises.cache.cases import _attend_one

_CR = np.random.default_rng(100)
_CQ, _CK, _CV = (_CR.normal(size=(1, 4)) for _ in range(3))
_OK, _OV = _CR.normal(size=(3, 4)), _CR.normal(size=(3, 4))


def _step(fn: Fn) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(a) for a in fn(_CQ, _CK, _CV, _OK.copy(), _OV.copy()))


MISTAKES = (
    Mistake(
        "cache.mistake.attends_before_append",
        lambda fn: same(_step(fn)[0], _attend_one(_CQ, _OK, _OV)),
    ),
    Mistake(
        "cache.mistake.prepends",
        lambda fn: (
            same(_step(fn)[1], np.concatenate([_CK, _OK]))
            and same(_step(fn)[2], np.concatenate([_CV, _OV]))
        ),
    ),
    Mistake("cache.mistake.forgets_cache", lambda fn: same(_step(fn)[0], _CV)),
    Mistake(
        "cache.mistake.old_cache",
        lambda fn: (
            same(_step(fn)[1], _OK)
            and same(
                _step(fn)[0],
                _attend_one(_CQ, np.concatenate([_OK, _CK]), np.concatenate([_OV, _CV])),
            )
        ),
    ),
)
