"""The cases of exercise 4 (masks): the hand-worked table, random sizes against the float64
reference, then properties: hidden weights exactly zero, the same bits as the boolean mask,
float16, causality."""

from __future__ import annotations

from functools import cache, partial

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

INF = np.inf

HAND = (  # title, (n_query, n_key), causal_mask(n_query, n_key) worked out by hand
    ("three", (3, 3), [[0.0, -INF, -INF], [0.0, 0.0, -INF], [0.0, 0.0, 0.0]]),
    ("decode", (1, 3), [[0.0, 0.0, 0.0]]),
    ("two_of_three", (2, 3), [[0.0, 0.0, -INF], [0.0, 0.0, 0.0]]),
)
RANDOM = ((4, 4), (3, 6), (7, 7))  # n_query, n_key


def _exact_zero(fn: Fn, scores: np.ndarray) -> Fail | None:
    weights = ref.softmax(scores + np.asarray(fn(5, 5), dtype=np.float64))
    hidden = weights[~ref.causal_mask(5, 5)]
    return None if (hidden == 0.0).all() else Fail("fail.leak", {"leak": float(hidden.max())})


def _same_bits(fn: Fn, scores: np.ndarray) -> Fail | None:
    a = ref.softmax(scores + np.asarray(fn(5, 5), dtype=np.float64))
    b = ref.softmax(np.where(ref.causal_mask(5, 5), scores, -INF))
    return None if np.array_equal(a, b) else Fail("fail.bits", {}, a, b)


def _float16(fn: Fn, scores: np.ndarray) -> Fail | None:
    m = fn(4, 4, np.float16)
    if not isinstance(m, np.ndarray):  # a list has no dtype to be float16
        return Fail("fail.not_ndarray", {"kind": type(m).__name__})
    if m.dtype != np.float16:
        return Fail("fail.dtype", {"got": np.asarray(m).dtype, "want": "float16"})
    half = scores[:4, :4].astype(np.float16)
    w = ref.softmax((half + m).astype(np.float64))
    return close(w, ref.softmax(np.where(ref.causal_mask(4, 4), half.astype(np.float64), -INF)))


def _causal(fn: Fn, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Fail | None:
    m = np.asarray(fn(5, 5), dtype=np.float64)
    k2, v2 = k.copy(), v.copy()
    k2[4], v2[4] = 9.0, -9.0  # change the last token only
    before = ref.scaled_dot_product_attention(q, k, v, mask=m)[0][:4]
    after = ref.scaled_dot_product_attention(q, k2, v2, mask=m)[0][:4]
    return close(after, before)


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(4)
    rows = [Row(title, (nq, nk), want, f"causal_mask({nq}, {nk})", nq * nk)
            for title, (nq, nk), want in HAND]
    rows += [Row("random", (nq, nk), ref.additive_mask(ref.causal_mask(nq, nk)),
                 f"causal_mask({nq}, {nk})", nq * nk, "random", fields={"nq": nq, "nk": nk})
             for nq, nk in RANDOM]
    scores = rng.normal(size=(5, 5))
    q, k, v = (rng.normal(size=(5, 3)) for _ in range(3))
    return as_cases(rows + [
        Case("exact_zero", "property", partial(_exact_zero, scores=scores),
             "softmax(scores + causal_mask(5, 5))", 25),
        Case("same_bits", "property", partial(_same_bits, scores=scores),
             "softmax(s + causal_mask(5, 5)) == softmax(np.where(keep, s, -np.inf))", 25),
        Case("float16", "property", partial(_float16, scores=scores),
             "causal_mask(4, 4, np.float16)", 16),
        Case("causal", "property", partial(_causal, q=q, k=k, v=v),
             "attention(q, k2, v2, causal_mask(5, 5)), k2[4] = 9, v2[4] = -9", 25),
    ])
