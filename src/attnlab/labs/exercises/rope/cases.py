"""The cases of exercise 8 (rope): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(8)
    s1, c1 = np.sin(1.0), np.cos(1.0)
    cases = [
        Case(
            "zero",
            "hand",
            lambda fn: close(fn(np.array([[1.0, 0.0]]), np.array([0])), [[1.0, 0.0]]),
            "rope(np.array([[1.0, 0.0]]), np.array([0]))",
            2,
        ),
        Case(
            "one",
            "hand",
            lambda fn: close(fn(np.array([[1.0, 0.0]]), np.array([1])), [[c1, s1]]),
            "rope(np.array([[1.0, 0.0]]), np.array([1]))",
            2,
        ),
        Case(
            "one_y",
            "hand",
            lambda fn: close(fn(np.array([[0.0, 1.0]]), np.array([1])), [[-s1, c1]]),
            "rope(np.array([[0.0, 1.0]]), np.array([1]))",
            2,
        ),
    ]
    for shape, pos in (((5, 8), np.arange(5)), ((2, 3, 6, 4), np.arange(3, 9))):
        x = rng.normal(size=shape)
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, x=x, pos=pos: close(fn(x, pos), ref.rope(x, pos)),
                f"rope(rng.normal(size={shape}), {pos.tolist()})",
                x.size,
                {"shape": shape},
            )
        )
    x = rng.normal(size=(6, 8))
    q, k = rng.normal(size=(1, 16)), rng.normal(size=(1, 16))

    def relative(fn):
        dots = np.array(
            [
                (np.asarray(fn(q, np.array([p]))) @ np.asarray(fn(k, np.array([p + 3]))).T).item()
                for p in range(0, 40, 7)
            ]
        )
        return close(dots, np.full_like(dots, dots[0]))

    cases += [
        Case(
            "norm",
            "property",
            lambda fn: close(
                np.linalg.norm(fn(x, np.arange(6)), axis=-1), np.linalg.norm(x, axis=-1)
            ),
            "rope(rng.normal(size=(6, 8)), range(6))",
            48,
        ),
        Case(
            "relative",
            "property",
            relative,
            "rope(q, [p]) · rope(k, [p + 3]), q, k (1, 16), p = 0, 7, ..., 35",
            32,
        ),
    ]
    return cases
