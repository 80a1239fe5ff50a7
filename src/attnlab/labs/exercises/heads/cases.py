"""The cases of exercise 5 (heads): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case


def _weights(rng: np.random.Generator, d: int) -> tuple[np.ndarray, ...]:
    return tuple(rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4))


def _mha(x, w_q, w_k, w_v, w_o, h):
    return ref.multi_head_attention(x, w_q, w_k, w_v, w_o, None, h)[0]


@cache
def _random_inputs() -> tuple[tuple[np.ndarray, tuple[np.ndarray, ...], int], ...]:
    """The random cases' ``(x, (w_q, w_k, w_v, w_o), n_head)``, drawn from seed 5."""
    rng = np.random.default_rng(5)
    drawn = []
    for shape, h in (((1, 3, 4), 2), ((2, 5, 8), 4), ((2, 4, 6), 3)):
        drawn.append((rng.normal(size=shape), _weights(rng, shape[-1]), h))
    return tuple(drawn)


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(6)
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    eye = np.eye(2)
    w1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # logistic of the score gap 1/√2
    by_hand = np.array([[[w1, 1 - w1], [1 - w1, w1]]])
    cases = [
        Case(
            "hand",
            "hand",
            lambda fn: close(fn(x, eye, eye, eye, eye, 1), by_hand),
            "multi_head_attention(x=[[[1, 0], [0, 1]]], I, I, I, I, n_head=1)",
            4,
        )
    ]
    for xs, ws, h in _random_inputs():
        shape = xs.shape
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, xs=xs, ws=ws, h=h: close(fn(xs, *ws, h), _mha(xs, *ws, h)),
                f"x {shape}, n_head={h}",
                xs.size,
                {"shape": shape, "h": h},
            )
        )
    xs, ws = rng.normal(size=(2, 5, 6)), _weights(rng, 6)
    w_q, w_k, w_v, w_o = ws
    one = ref.scaled_dot_product_attention(xs @ w_q.T, xs @ w_k.T, xs @ w_v.T)[0] @ w_o.T
    perm = rng.permutation(5)
    cases += [
        Case(
            "one_head",
            "property",
            lambda fn: close(fn(xs, *ws, 1), one),
            "x (2, 5, 6), n_head=1",
            60,
        ),
        Case(
            "width_one",
            "property",
            lambda fn: close(fn(xs, *ws, 6), _mha(xs, *ws, 6)),
            "x (2, 5, 6), n_head=6 (d_k = 1)",
            60,
        ),
        Case(
            "permute",
            "property",
            lambda fn: close(fn(xs[:, perm], *ws, 2), fn(xs, *ws, 2)[:, perm]),
            "multi_head_attention(x[:, perm], ...), x (2, 5, 6), n_head=2",
            60,
        ),
    ]
    return cases
