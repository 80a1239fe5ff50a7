"""The cases of exercise 8 (rope): the hand-worked table, random shapes against the float64
reference, then properties: lengths kept, and the score of two rotated vectors depending only
on their distance."""

from __future__ import annotations

from functools import cache, partial

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

S1, C1 = np.sin(1.0), np.cos(1.0)

HAND = (  # title, x, positions, rope(np.array(x), np.array(positions)) worked out by hand
    ("zero", [[1.0, 0.0]], [0], [[1.0, 0.0]]),
    ("one", [[1.0, 0.0]], [1], [[C1, S1]]),
    ("one_y", [[0.0, 1.0]], [1], [[-S1, C1]]),
)
RANDOM = (((5, 8), np.arange(5)), ((2, 3, 6, 4), np.arange(3, 9)))  # the shape of x, positions


def _norms(out):
    return np.linalg.norm(out, axis=-1)


def _relative(fn: Fn, q: np.ndarray, k: np.ndarray) -> Fail | None:
    def score(p: int) -> float:
        return (np.asarray(fn(q, np.array([p]))) @ np.asarray(fn(k, np.array([p + 3]))).T).item()

    dots = np.array([score(p) for p in range(0, 40, 7)])
    return close(dots, np.full_like(dots, dots[0]))


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(8)
    rows = [Row(title, (np.array(x), np.array(p)), want, f"rope(np.array({x}), np.array({p}))", 2)
            for title, x, p, want in HAND]
    for shape, pos in RANDOM:
        x = rng.normal(size=shape)
        rows.append(Row("random", (x, pos), ref.rope(x, pos),
                        f"rope(rng.normal(size={shape}), {pos.tolist()})", x.size, "random",
                        fields={"shape": shape}))
    x = rng.normal(size=(6, 8))
    q, k = rng.normal(size=(1, 16)), rng.normal(size=(1, 16))
    return as_cases(rows + [
        Row("norm", (x, np.arange(6)), np.linalg.norm(x, axis=-1),
            "rope(rng.normal(size=(6, 8)), range(6))", 48, "property", part=_norms),
        Case("relative", "property", partial(_relative, q=q, k=k),
             "rope(q, [p]) · rope(k, [p + 3]), q, k (1, 16), p = 0, 7, ..., 35", 32),
    ])
