"""The cases of exercise 7 (sinusoidal): the hand-worked table, random sizes against the
float64 reference, then properties: every entry within [-1, 1], and PE(p)·PE(p + 3) the same
for every p."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

S1, C1 = np.sin(1.0), np.cos(1.0)

HAND = (  # title, (n, d), sinusoidal(n, d) worked out by hand
    ("two", (2, 2), [[0.0, 1.0], [S1, C1]]),
    ("first_row", (1, 4), [[0.0, 1.0, 0.0, 1.0]]),
)
RANDOM = ((16, 8), (50, 32))  # n, d


def _bounded(fn: Fn) -> Fail | None:
    pe = np.asarray(fn(30, 16), dtype=np.float64)
    return None if (np.abs(pe) <= 1.0 + 1e-12).all() else Fail("fail.bounded")


def _relative(fn: Fn) -> Fail | None:
    pe = np.asarray(fn(40, 16), dtype=np.float64)
    dots = np.array([pe[p] @ pe[p + 3] for p in range(0, 36, 5)])
    return close(dots, np.full_like(dots, dots[0]))


@cache
def build() -> list[Case]:
    rows = [Row(title, (n, d), want, f"sinusoidal({n}, {d})", n * d)
            for title, (n, d), want in HAND]
    rows += [Row("random", (n, d), ref.sinusoidal(n, d), f"sinusoidal({n}, {d})", n * d,
                 "random", fields={"n": n, "d": d}) for n, d in RANDOM]
    return as_cases(rows + [
        Case("bounded", "property", _bounded, "sinusoidal(30, 16)", 480),
        Case("relative", "property", _relative,
             "PE(p)·PE(p + 3), PE = sinusoidal(40, 16), p = 0, 5, ..., 35", 640),
    ])
