"""The cases of exercise 6 (scale): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab.labs.core import Case, Fail
from attnlab.labs.exercises.scale.measure import (
    KEYS,
    ROWS,
    _stats,
    frozen_tolerance,
    variance_tolerance,
)
from attnlab.labs.exercises.scale.solution import score_statistics


@cache
def build() -> list[Case]:
    cases = []
    for d, scaled in ((1, False), (4, False), (64, False), (256, False), (64, True), (256, True)):
        want = 1.0 if scaled else float(d)
        tol = variance_tolerance(d, scaled)

        def variance(fn, d=d, scaled=scaled, want=want, tol=tol):
            got = _stats(fn, d, scaled)[0]
            if abs(got - want) <= tol:
                return None
            return Fail("fail.sampled", {"got": got, "want": want, "tol": tol}, [got], [want])

        cases.append(
            Case(
                "variance",
                "hand" if d == 1 else "random",
                variance,
                f"score_statistics({d}, scaled={scaled}, rng, rows={ROWS}, keys={KEYS})",
                d,
                {"d": d, "scaled": scaled, "want": want, "tol": tol},
            )
        )
    for d, scaled in ((256, False), (256, True), (16, False)):
        want = score_statistics(d, scaled, np.random.default_rng(99), ROWS, KEYS)[1]
        tol = frozen_tolerance(want)

        def frozen(fn, d=d, scaled=scaled, want=want, tol=tol):
            got = _stats(fn, d, scaled)[1]
            if abs(got - want) <= tol:
                return None
            return Fail("fail.sampled", {"got": got, "want": want, "tol": tol}, [got], [want])

        cases.append(
            Case(
                "frozen",
                "random",
                frozen,
                f"score_statistics({d}, scaled={scaled}, rng, rows={ROWS}, keys={KEYS})",
                d,
                {"d": d, "scaled": scaled, "want": round(want, 3), "tol": tol},
            )
        )

    def seeded(fn):  # calls fn itself: a remembered answer would prove nothing here
        a, b, c = (
            tuple(fn(16, False, np.random.default_rng(s), rows=ROWS, keys=KEYS)) for s in (7, 7, 8)
        )
        return None if a == b and c != a else Fail("fail.seed")

    cases.append(
        Case(
            "seeded",
            "property",
            seeded,
            "score_statistics(16, False, np.random.default_rng(s)), s = 7, 7, 8",
            16,
        )
    )
    return cases
