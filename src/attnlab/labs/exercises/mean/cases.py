"""The cases of exercise 2 (mean): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case


def _mean_reference(n: int) -> np.ndarray:
    return ref.softmax(ref.additive_mask(ref.causal_mask(n, n)) + np.zeros((n, n)))


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(2)
    three = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    cases = [
        Case("one", "hand", lambda fn: close(fn(1), np.ones((1, 1))), "averaging_matrix(1)", 1),
        Case("three", "hand", lambda fn: close(fn(3), three), "averaging_matrix(3)", 9),
    ]
    for n in (2, 5, 8):
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, n=n: close(fn(n), _mean_reference(n)),
                f"averaging_matrix({n})",
                n * n,
                {"n": n},
            )
        )
    x = rng.normal(size=(6, 3))
    loop = np.stack([x[: i + 1].mean(axis=0) for i in range(6)])
    cases += [
        Case(
            "sums",
            "property",
            lambda fn: close(np.sum(fn(6), axis=1), np.ones(6)),
            "averaging_matrix(6)",
            36,
        ),
        Case(
            "past_only",
            "property",
            lambda fn: close(np.triu(fn(6), 1), np.zeros((6, 6))),
            "averaging_matrix(6)",
            36,
        ),
        Case("loop", "property", lambda fn: close(fn(6) @ x, loop), "averaging_matrix(6) @ x", 36),
        Case(
            "shuffle",
            "property",
            lambda fn: close((fn(6) @ x)[-1], (fn(6) @ x[::-1])[-1]),
            "averaging_matrix(6) @ x[::-1]",
            36,
        ),
    ]
    return cases
