"""The cases of exercise 10 (cache): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case


def _attend_one(q, k, v):
    return ref.scaled_dot_product_attention(q, k, v)[0]


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(10)
    empty = np.zeros((0, 2))
    cases = [
        Case(
            "first",
            "hand",
            lambda fn: close(
                fn(
                    np.array([[1.0, 0.0]]),
                    np.array([[0.0, 1.0]]),
                    np.array([[3.0, 4.0]]),
                    empty,
                    empty,
                )[0],
                [[3.0, 4.0]],
            ),
            "decode_step(q=[[1, 0]], k=[[0, 1]], v=[[3, 4]], cache_k=cache_v=np.zeros((0, 2)))",
            6,
        ),
        Case(
            "two",
            "hand",
            lambda fn: close(
                fn(
                    np.array([[1.0, 0.0]]),
                    np.array([[0.0, 1.0]]),
                    np.array([[3.0, 4.0]]),
                    np.array([[1.0, 0.0]]),
                    np.array([[1.0, 2.0]]),
                )[0],
                _attend_one(np.array([[1.0, 0.0]]), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])),
            ),
            "decode_step(q=[[1, 0]], k=[[0, 1]], v=[[3, 4]], cache_k=[[1, 0]], cache_v=[[1, 2]])",
            10,
        ),
    ]
    for t, d in ((3, 4), (7, 8)):
        q, k, v = rng.normal(size=(1, d)), rng.normal(size=(1, d)), rng.normal(size=(1, d))
        ck, cv = rng.normal(size=(t, d)), rng.normal(size=(t, d))
        all_k, all_v = np.concatenate([ck, k]), np.concatenate([cv, v])
        want = _attend_one(q, all_k, all_v)
        cases += [
            Case(
                "random_out",
                "random",
                lambda fn, a=(q, k, v, ck, cv), w=want: close(fn(*a)[0], w),
                f"decode_step(q, k, v, cache_k, cache_v), cache ({t}, {d})",
                t * 2 * d,
                {"t": t},
            ),
            Case(
                "random_cache",
                "random",
                lambda fn, a=(q, k, v, ck, cv), w=(all_k, all_v): (
                    close(fn(*a)[1], w[0]) or close(fn(*a)[2], w[1])
                ),
                f"decode_step(q, k, v, cache_k, cache_v), cache ({t}, {d})",
                t * 2 * d,
                {"t": t},
            ),
        ]
    x_q, x_k, x_v = (rng.normal(size=(6, 4)) for _ in range(3))
    full = ref.scaled_dot_product_attention(x_q, x_k, x_v, mask=ref.causal_mask(6, 6))[0]

    def recompute(fn):
        ck, cv, rows = np.zeros((0, 4)), np.zeros((0, 4)), []
        for p in range(6):
            out, ck, cv = fn(x_q[p : p + 1], x_k[p : p + 1], x_v[p : p + 1], ck, cv)
            rows.append(np.asarray(out).reshape(-1))
        return close(np.stack(rows), full)

    cases.append(
        Case(
            "recompute",
            "property",
            recompute,
            "decode_step(q[p], k[p], v[p], cache_k, cache_v) for p in range(6), q, k, v (6, 4)",
            72,
        )
    )
    return cases
