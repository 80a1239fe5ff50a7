"""The cases of exercise 7 (sinusoidal): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case, Fail


@cache
def build() -> list[Case]:
    s1, c1 = np.sin(1.0), np.cos(1.0)
    cases = [
        Case(
            "two",
            "hand",
            lambda fn: close(fn(2, 2), np.array([[0.0, 1.0], [s1, c1]])),
            "sinusoidal(2, 2)",
            4,
        ),
        Case(
            "first_row",
            "hand",
            lambda fn: close(fn(1, 4), np.array([[0.0, 1.0, 0.0, 1.0]])),
            "sinusoidal(1, 4)",
            4,
        ),
    ]
    for n, d in ((16, 8), (50, 32)):
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, n=n, d=d: close(fn(n, d), ref.sinusoidal(n, d)),
                f"sinusoidal({n}, {d})",
                n * d,
                {"n": n, "d": d},
            )
        )

    def bounded(fn):
        pe = np.asarray(fn(30, 16), dtype=np.float64)
        return None if (np.abs(pe) <= 1.0 + 1e-12).all() else Fail("fail.bounded")

    def relative(fn):
        pe = np.asarray(fn(40, 16), dtype=np.float64)
        dots = np.array([pe[p] @ pe[p + 3] for p in range(0, 36, 5)])
        return close(dots, np.full_like(dots, dots[0]))

    cases += [
        Case("bounded", "property", bounded, "sinusoidal(30, 16)", 480),
        Case(
            "relative",
            "property",
            relative,
            "PE(p)·PE(p + 3), PE = sinusoidal(40, 16), p = 0, 5, ..., 35",
            640,
        ),
    ]
    return cases
