"""Exercises 7-8: the sinusoidal table and RoPE, with the relative property checked.

Dimension legend: ``n`` positions, ``d`` width. Conventions are ``attnlab.reference``'s:
interleaved pairs (2i, 2i+1), frequency ``10000^(-2i/d)``, positions from 0.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs import solutions
from attnlab.labs.compare import close, same
from attnlab.labs.core import Case, Exercise, Fail, Fn, Mistake

# -- 7. sinusoidal table ---------------------------------------------------------------------


@cache
def _sin_cases() -> list[Case]:
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


def _table(
    n: int, d: int, freq: np.ndarray, start: int = 0, swap: bool = False, halves: bool = False
) -> np.ndarray:
    angle = np.arange(start, start + n)[:, None] * freq[None, :]
    a, b = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    if halves:
        return np.concatenate([a, b], axis=1)
    pe = np.zeros((n, d))
    pe[:, 0::2], pe[:, 1::2] = a, b
    return pe


_FREQ = 10000.0 ** (-np.arange(0, 8, 2) / 8)


def _per_column(n: int, d: int) -> np.ndarray:
    c = np.arange(d)
    angle = np.arange(n)[:, None] * 10000.0 ** (-2 * c / d)[None, :]
    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle))


SIN_MISTAKES = (
    Mistake(
        "sinusoidal.mistake.swapped", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, swap=True))
    ),
    Mistake(
        "sinusoidal.mistake.halves", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, halves=True))
    ),
    Mistake(
        "sinusoidal.mistake.inverse_frequency", lambda fn: same(fn(6, 8), _table(6, 8, 1 / _FREQ))
    ),
    Mistake("sinusoidal.mistake.per_column", lambda fn: same(fn(6, 8), _per_column(6, 8))),
    Mistake("sinusoidal.mistake.from_one", lambda fn: same(fn(6, 8), _table(6, 8, _FREQ, start=1))),
)


# -- 8. RoPE ---------------------------------------------------------------------------------


@cache
def _rope_cases() -> list[Case]:
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


_RX = np.random.default_rng(80).normal(size=(5, 8))
_POS = np.arange(2, 7)


def _rotate(
    x: np.ndarray, positions: np.ndarray, freq: np.ndarray, halves: bool = False, sign: float = 1.0
) -> np.ndarray:
    angle = positions[:, None] * freq[None, :]
    cos, sin = np.cos(angle), sign * np.sin(angle)
    d = x.shape[-1]
    x0, x1 = (x[..., : d // 2], x[..., d // 2 :]) if halves else (x[..., 0::2], x[..., 1::2])
    a, b = x0 * cos - x1 * sin, x0 * sin + x1 * cos
    if halves:
        return np.concatenate([a, b], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a, b
    return out


def _rope_out(fn: Fn) -> np.ndarray:
    return np.asarray(fn(_RX, _POS))


ROPE_MISTAKES = (
    Mistake(
        "rope.mistake.direction",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, _FREQ, sign=-1.0)),
    ),
    Mistake(
        "rope.mistake.halves",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, _FREQ, halves=True)),
    ),
    Mistake(
        "rope.mistake.one_frequency", lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, np.ones(4)))
    ),
    Mistake(
        "rope.mistake.inverse_frequency",
        lambda fn: same(_rope_out(fn), _rotate(_RX, _POS, 1 / _FREQ)),
    ),
    Mistake(
        "rope.mistake.ignores_positions",
        lambda fn: same(_rope_out(fn), _rotate(_RX, np.arange(5), _FREQ)),
    ),
)


EXERCISES = (
    Exercise(
        7, "sinusoidal", "sinusoidal", "(n, d)", 3, solutions.sinusoidal, _sin_cases, SIN_MISTAKES
    ),
    Exercise(8, "rope", "rope", "(x, positions)", 3, solutions.rope, _rope_cases, ROPE_MISTAKES),
)
