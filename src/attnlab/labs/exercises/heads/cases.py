"""The cases of exercise 5 (heads): one head by hand, random shapes against the float64
reference, then properties: one head is exercise 3 plus W_o, width-one heads, a token
permutation permutes the output."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases


def _weights(rng: np.random.Generator, d: int) -> tuple[np.ndarray, ...]:
    return tuple(rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4))


def _mha(x, w_q, w_k, w_v, w_o, h):
    return ref.multi_head_attention(x, w_q, w_k, w_v, w_o, None, h)[0]


X, EYE = np.array([[[1.0, 0.0], [0.0, 1.0]]]), np.eye(2)  # by hand: one head, identity weights
W1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # logistic of the score gap 1/√2


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
    rows = [Row("hand", (X, EYE, EYE, EYE, EYE, 1), [[[W1, 1 - W1], [1 - W1, W1]]],
                "multi_head_attention(x=[[[1, 0], [0, 1]]], I, I, I, I, n_head=1)", 4)]
    rows += [Row("random", (xs, *ws, h), _mha(xs, *ws, h), f"x {xs.shape}, n_head={h}", xs.size,
                 "random", fields={"shape": xs.shape, "h": h}) for xs, ws, h in _random_inputs()]
    xs, ws = rng.normal(size=(2, 5, 6)), _weights(rng, 6)
    w_q, w_k, w_v, w_o = ws
    one = ref.scaled_dot_product_attention(xs @ w_q.T, xs @ w_k.T, xs @ w_v.T)[0] @ w_o.T
    perm = rng.permutation(5)

    def permute(fn: Fn) -> Fail | None:
        return close(fn(xs[:, perm], *ws, 2), fn(xs, *ws, 2)[:, perm])

    return as_cases(rows + [
        Row("one_head", (xs, *ws, 1), one, "x (2, 5, 6), n_head=1", 60, "property"),
        Row("width_one", (xs, *ws, 6), _mha(xs, *ws, 6), "x (2, 5, 6), n_head=6 (d_k = 1)", 60,
            "property"),
        Case("permute", "property", permute,
             "multi_head_attention(x[:, perm], ...), x (2, 5, 6), n_head=2", 60),
    ])
