"""The cases of exercise 1 (softmax): the hand-worked table, random inputs against the float64
reference (``fn(x, axis=a)``), then properties: rows sum to one, a shift changes nothing, no
overflow at 1000."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case
from attnlab.labs.rows import Row, as_cases

INF, E = np.inf, np.e

HAND = (  # title, x, softmax(x) worked out by hand (the call: softmax(np.array(x)))
    ("two", [0.0, 1.0], np.array([1.0, E]) / (1.0 + E)),
    ("big", [1000.0, 1000.0], [0.5, 0.5]),
    ("hidden", [0.0, -INF, 0.0], [0.5, 0.0, 0.5]),
    ("all_hidden", [-INF, -INF], [0.0, 0.0]),
)
RANDOM = (((5,), -1), ((3, 4), 0), ((2, 3, 5), 1), ((2, 3, 5), -1))  # shape, axis; × 3


def _row_sums(out):
    return np.sum(out, axis=-1)


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(1)
    rows = [Row(title, (np.array(x),), want, f"softmax(np.array({x}))", len(x))
            for title, x, want in HAND]
    for shape, axis in RANDOM:
        x = rng.normal(size=shape) * 3
        rows.append(Row("random", (x,), ref.softmax(x, axis),
                        f"softmax(rng.normal(size={shape}) * 3, axis={axis})", x.size, "random",
                        kwargs={"axis": axis}, fields={"shape": shape, "axis": axis}))
    x = rng.normal(size=(4, 6))
    big = rng.normal(size=(3, 5)) * 500 + 1000
    rows += [
        Row("sums", (x,), np.ones(4), "softmax(rng.normal(size=(4, 6)))", x.size, "property",
            part=_row_sums),
        Row("shift", (x + 100.0,), ref.softmax(x), "softmax(rng.normal(size=(4, 6)) + 100)",
            x.size, "property"),
        Row("overflow", (big,), ref.softmax(big), "softmax(rng.normal(size=(3, 5)) * 500 + 1000)",
            big.size, "property"),
    ]
    return as_cases(rows)
