"""The cases of exercise 2 (mean): the hand-worked table, random sizes against the softmax of
masked zeros, then properties: rows sum to one, nothing of the future, a loop of means, and
the last row blind to the order."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

HAND = (  # title, n, averaging_matrix(n) worked out by hand
    ("one", 1, np.ones((1, 1))),
    ("three", 3, np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])),
)
RANDOM = (2, 5, 8)  # n


def _mean_reference(n: int) -> np.ndarray:
    return ref.softmax(ref.additive_mask(ref.causal_mask(n, n)) + np.zeros((n, n)))


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(2)
    rows = [Row(title, (n,), want, f"averaging_matrix({n})", n * n) for title, n, want in HAND]
    rows += [Row("random", (n,), _mean_reference(n), f"averaging_matrix({n})", n * n, "random",
                 fields={"n": n}) for n in RANDOM]
    x = rng.normal(size=(6, 3))
    loop = np.stack([x[: i + 1].mean(axis=0) for i in range(6)])
    shown = "averaging_matrix(6)"
    rows += [
        Row("sums", (6,), np.ones(6), shown, 36, "property", part=lambda a: np.sum(a, axis=1)),
        Row("past_only", (6,), np.zeros((6, 6)), shown, 36, "property",
            part=lambda a: np.triu(a, 1)),
        Row("loop", (6,), loop, "averaging_matrix(6) @ x", 36, "property", part=lambda a: a @ x),
    ]

    def shuffle(fn):
        return close((fn(6) @ x)[-1], (fn(6) @ x[::-1])[-1])

    return as_cases(rows + [
        Case("shuffle", "property", shuffle, "averaging_matrix(6) @ x[::-1]", 36)])
