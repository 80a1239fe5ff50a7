"""The cases of exercise 4 (masks): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case, Fail

INF = np.inf


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(4)
    three = np.array([[0.0, -INF, -INF], [0.0, 0.0, -INF], [0.0, 0.0, 0.0]])
    cases = [
        Case("three", "hand", lambda fn: close(fn(3, 3), three), "causal_mask(3, 3)", 9),
        Case(
            "decode", "hand", lambda fn: close(fn(1, 3), np.zeros((1, 3))), "causal_mask(1, 3)", 3
        ),
        Case(
            "two_of_three",
            "hand",
            lambda fn: close(fn(2, 3), np.array([[0.0, 0.0, -INF], [0.0, 0.0, 0.0]])),
            "causal_mask(2, 3)",
            6,
        ),
    ]
    for nq, nk in ((4, 4), (3, 6), (7, 7)):
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, nq=nq, nk=nk: close(
                    fn(nq, nk), ref.additive_mask(ref.causal_mask(nq, nk))
                ),
                f"causal_mask({nq}, {nk})",
                nq * nk,
                {"nq": nq, "nk": nk},
            )
        )
    scores = rng.normal(size=(5, 5))

    def exact_zero(fn):
        weights = ref.softmax(scores + np.asarray(fn(5, 5), dtype=np.float64))
        return (
            None
            if (weights[~ref.causal_mask(5, 5)] == 0.0).all()
            else Fail("fail.leak", {"leak": float(weights[~ref.causal_mask(5, 5)].max())})
        )

    def same_bits(fn):
        a = ref.softmax(scores + np.asarray(fn(5, 5), dtype=np.float64))
        b = ref.softmax(np.where(ref.causal_mask(5, 5), scores, -INF))
        return None if np.array_equal(a, b) else Fail("fail.bits", {}, a, b)

    def half(fn):
        m = fn(4, 4, np.float16)
        if np.asarray(m).dtype != np.float16:
            return Fail("fail.dtype", {"got": np.asarray(m).dtype, "want": "float16"})
        w = ref.softmax((scores[:4, :4].astype(np.float16) + m).astype(np.float64))
        return close(
            w,
            ref.softmax(
                np.where(
                    ref.causal_mask(4, 4),
                    scores[:4, :4].astype(np.float16).astype(np.float64),
                    -INF,
                )
            ),
        )

    q, k, v = (rng.normal(size=(5, 3)) for _ in range(3))

    def causal(fn):
        m = np.asarray(fn(5, 5), dtype=np.float64)
        k2, v2 = k.copy(), v.copy()
        k2[4], v2[4] = 9.0, -9.0  # change the last token only
        before = ref.scaled_dot_product_attention(q, k, v, mask=m)[0][:4]
        after = ref.scaled_dot_product_attention(q, k2, v2, mask=m)[0][:4]
        return close(after, before)

    cases += [
        Case("exact_zero", "property", exact_zero, "softmax(scores + causal_mask(5, 5))", 25),
        Case(
            "same_bits",
            "property",
            same_bits,
            "softmax(s + causal_mask(5, 5)) == softmax(np.where(keep, s, -np.inf))",
            25,
        ),
        Case("float16", "property", half, "causal_mask(4, 4, np.float16)", 16),
        Case(
            "causal",
            "property",
            causal,
            "attention(q, k2, v2, causal_mask(5, 5)), k2[4] = 9, v2[4] = -9",
            25,
        ),
    ]
    return cases
