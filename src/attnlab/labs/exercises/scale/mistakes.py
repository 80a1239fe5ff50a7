"""The mistake probes of exercise 6 (scale): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.exercises.scale.measure import _stats, variance_tolerance


def _near(fn: Fn, d: int, scaled: bool, value: float) -> bool:
    got = _stats(fn, d, scaled)[0]
    return abs(got - value) <= variance_tolerance(d, False) * value / d + 1e-9


MISTAKES = (
    Mistake(
        "scale.mistake.divides_by_d",
        lambda fn: _near(fn, 64, True, 1 / 64) and _near(fn, 64, False, 64.0),
    ),
    Mistake("scale.mistake.std", lambda fn: _near(fn, 64, False, 8.0) and _near(fn, 64, True, 1.0)),
    Mistake(
        "scale.mistake.products",
        lambda fn: _near(fn, 64, False, 1.0) and not _near(fn, 64, True, 1.0),
    ),
    Mistake(
        "scale.mistake.scaled_ignored",
        lambda fn: _near(fn, 64, True, 64.0) and _near(fn, 64, False, 64.0),
    ),
    Mistake("scale.mistake.frozen_count", lambda fn: _stats(fn, 256, False)[1] > 1.0),
    Mistake(
        "scale.mistake.global_rng",
        lambda fn: (
            fn(4, False, np.random.default_rng(3), rows=8, keys=4)
            != fn(4, False, np.random.default_rng(3), rows=8, keys=4)
        ),
    ),
)
