"""The cases of exercise 1 (softmax): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case

INF = np.inf


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(1)
    e = np.e
    hand = [
        ("two", np.array([0.0, 1.0]), np.array([1.0, e]) / (1.0 + e), "[0.0, 1.0]"),
        ("big", np.array([1000.0, 1000.0]), np.array([0.5, 0.5]), "[1000.0, 1000.0]"),
        ("hidden", np.array([0.0, -INF, 0.0]), np.array([0.5, 0.0, 0.5]), "[0.0, -inf, 0.0]"),
        ("all_hidden", np.array([-INF, -INF]), np.zeros(2), "[-inf, -inf]"),
    ]
    cases = [
        Case(t, "hand", lambda fn, x=x, w=w: close(fn(x), w), f"softmax(np.array({s}))", x.size)
        for t, x, w, s in hand
    ]
    for shape, axis in (((5,), -1), ((3, 4), 0), ((2, 3, 5), 1), ((2, 3, 5), -1)):
        x = rng.normal(size=shape) * 3
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, x=x, a=axis: close(fn(x, axis=a), ref.softmax(x, a)),
                f"softmax(rng.normal(size={shape}) * 3, axis={axis})",
                x.size,
                {"shape": shape, "axis": axis},
            )
        )
    x = rng.normal(size=(4, 6))
    cases.append(
        Case(
            "sums",
            "property",
            lambda fn: close(np.sum(fn(x), axis=-1), np.ones(4)),
            "softmax(rng.normal(size=(4, 6)))",
            x.size,
        )
    )
    cases.append(
        Case(
            "shift",
            "property",
            lambda fn: close(fn(x + 100.0), ref.softmax(x)),
            "softmax(rng.normal(size=(4, 6)) + 100)",
            x.size,
        )
    )
    big = rng.normal(size=(3, 5)) * 500 + 1000
    cases.append(
        Case(
            "overflow",
            "property",
            lambda fn: close(fn(big), ref.softmax(big)),
            "softmax(rng.normal(size=(3, 5)) * 500 + 1000)",
            big.size,
        )
    )
    return cases
