"""Exercises 1-2, the curriculum's first: a stable softmax, and the mean as attention.

Every expected number comes from ``attnlab.reference`` (float64) or is worked out by hand in
the statement; every probe compares the learner's output with what one mistake would give.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs import solutions
from attnlab.labs.compare import close, same
from attnlab.labs.core import Case, Exercise, Fn, Mistake

INF = np.inf


# -- 1. softmax ------------------------------------------------------------------------------


@cache
def _softmax_cases() -> list[Case]:
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


def _softmax_right(fn: Fn, x: np.ndarray, axis: int = -1) -> bool:
    return same(fn(x, axis=axis), ref.softmax(x, axis))


_WIDE = np.array([[0.0, 1.0], [1000.0, 1001.0], [-800.0, 0.0]])  # x - x.min() overflows
_SMALL = np.array([[0.0, 1.0, -2.0, 0.5], [1.5, -1.0, 0.0, 2.0], [0.3, 0.2, 0.1, -0.4]])


def _unnormalised(x: np.ndarray) -> np.ndarray:
    return np.exp(x - x.max(axis=-1, keepdims=True))


SOFTMAX_MISTAKES = (
    Mistake(
        "softmax.mistake.no_max",
        lambda fn: (
            _softmax_right(fn, np.array([0.0, 1.0]))
            and not np.isfinite(fn(np.array([1000.0, 1000.0]))).all()
        ),
    ),
    Mistake(
        "softmax.mistake.nan_hidden_row",
        lambda fn: (
            _softmax_right(fn, _WIDE)  # rows of their own: the maximum is subtracted
            and np.isnan(fn(np.array([-INF, -INF]))).any()
        ),
    ),
    Mistake(
        "softmax.mistake.global_max",
        lambda fn: (
            _softmax_right(fn, np.array([[0.0, 1.0], [2.0, 4.0]]))
            and not _softmax_right(fn, np.array([[0.0, 1.0], [1000.0, 1001.0]]))
            and same(
                fn(np.array([[0.0, 1.0], [1000.0, 1001.0]]))[1],
                ref.softmax(np.array([1000.0, 1001.0])),
            )
        ),
    ),
    Mistake(
        "softmax.mistake.ignores_axis", lambda fn: same(fn(_SMALL, axis=0), ref.softmax(_SMALL, -1))
    ),
    Mistake(
        "softmax.mistake.whole_array",
        lambda fn: (
            same(fn(_SMALL), _unnormalised(_SMALL) / _unnormalised(_SMALL).sum())
            or same(fn(_SMALL), np.exp(_SMALL - _SMALL.max()) / np.exp(_SMALL - _SMALL.max()).sum())
        ),
    ),
    Mistake(
        "softmax.mistake.not_normalised",
        lambda fn: same(fn(_SMALL), _unnormalised(_SMALL)) or same(fn(_SMALL), np.exp(_SMALL)),
    ),
)


# -- 2. the mean as attention ----------------------------------------------------------------


def _tril_rows(n: int, keep: np.ndarray) -> np.ndarray:
    total = keep.sum(axis=1, keepdims=True)
    return keep / np.where(total > 0, total, 1.0)


def _mean_reference(n: int) -> np.ndarray:
    return ref.softmax(ref.additive_mask(ref.causal_mask(n, n)) + np.zeros((n, n)))


@cache
def _mean_cases() -> list[Case]:
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


_N = 4
_LOWER = np.tril(np.ones((_N, _N)))
MEAN_MISTAKES = (
    Mistake(
        "mean.mistake.future", lambda fn: same(fn(_N), _tril_rows(_N, np.triu(np.ones((_N, _N)))))
    ),
    Mistake("mean.mistake.divides_by_n", lambda fn: same(fn(_N), _LOWER / _N)),
    Mistake(
        "mean.mistake.excludes_self",
        lambda fn: same(np.asarray(fn(_N))[1:], _tril_rows(_N, np.tril(np.ones((_N, _N)), -1))[1:]),
    ),
    Mistake("mean.mistake.no_mask", lambda fn: same(fn(_N), np.full((_N, _N), 1 / _N))),
    Mistake("mean.mistake.not_normalised", lambda fn: same(fn(_N), _LOWER)),
)


EXERCISES = (
    Exercise(
        1,
        "softmax",
        "softmax",
        "(x, axis=-1)",
        3,
        solutions.softmax,
        _softmax_cases,
        SOFTMAX_MISTAKES,
    ),
    Exercise(
        2,
        "mean",
        "averaging_matrix",
        "(n)",
        2,
        solutions.averaging_matrix,
        _mean_cases,
        MEAN_MISTAKES,
    ),
)
