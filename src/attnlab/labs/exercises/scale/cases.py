"""The cases of exercise 6 (scale): the variance of q·k sampled at each width, unscaled and
scaled, against its value within 5 standard errors; the share of frozen rows against the
solution's; the same seed giving the same numbers."""

from __future__ import annotations

from functools import cache, partial

import numpy as np

from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.exercises.scale.measure import (
    KEYS,
    ROWS,
    _stats,
    frozen_tolerance,
    variance_tolerance,
)
from attnlab.labs.exercises.scale.solution import score_statistics

VARIANCE = ((1, False), (4, False), (64, False), (256, False), (64, True), (256, True))  # d, scaled
FROZEN = ((256, False), (256, True), (16, False))  # d, scaled: against the solution's, seed 99


def _within(fn: Fn, d: int, scaled: bool, index: int, want: float, tol: float) -> Fail | None:
    """The learner's sampled statistic (0: the variance, 1: the frozen share) within ``tol``."""
    got = _stats(fn, d, scaled)[index]
    if abs(got - want) <= tol:
        return None
    return Fail("fail.sampled", {"got": got, "want": want, "tol": tol}, [got], [want])


def _sampled(title: str, kind: str, d: int, scaled: bool, index: int, want: float, tol: float,
             said: float) -> Case:
    """A case on one sampled statistic; ``said`` is the expected value its sentence gives."""
    run = partial(_within, d=d, scaled=scaled, index=index, want=want, tol=tol)
    return Case(title, kind, run,
                f"score_statistics({d}, scaled={scaled}, rng, rows={ROWS}, keys={KEYS})", d,
                {"d": d, "scaled": scaled, "want": said, "tol": tol})


def _seeded(fn: Fn) -> Fail | None:  # calls fn itself: a remembered answer would prove nothing
    a, b, c = (tuple(fn(16, False, np.random.default_rng(s), rows=ROWS, keys=KEYS))
               for s in (7, 7, 8))
    return None if a == b and c != a else Fail("fail.seed")


@cache
def build() -> list[Case]:
    cases = []
    for d, scaled in VARIANCE:
        want = 1.0 if scaled else float(d)  # Var(q·k) = d, and 1 once divided by √d
        cases.append(_sampled("variance", "hand" if d == 1 else "random", d, scaled, 0, want,
                              variance_tolerance(d, scaled), want))
    for d, scaled in FROZEN:
        want = score_statistics(d, scaled, np.random.default_rng(99), ROWS, KEYS)[1]
        cases.append(_sampled("frozen", "random", d, scaled, 1, want, frozen_tolerance(want),
                              round(want, 3)))
    return cases + [Case("seeded", "property", _seeded,
                         "score_statistics(16, False, np.random.default_rng(s)), s = 7, 7, 8", 16)]
