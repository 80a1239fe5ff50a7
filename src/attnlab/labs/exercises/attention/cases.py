"""The cases of exercise 3 (attention): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close, pair
from attnlab.labs.core import Case, Fail

INF = np.inf


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(3)
    q, k, v = (
        np.array([[1.0, 0.0]]),
        np.array([[1.0, 0.0], [0.0, 1.0]]),
        np.array([[1.0, 2.0], [3.0, 4.0]]),
    )
    w1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # logistic of the score gap 1/√2
    hand_w = np.array([[w1, 1 - w1]])
    # `I work , you work , he`: each word's key and value say [pronoun, verb]; the query at
    # `he` asks for pronouns with a score of ln 4 (after the division by √2).
    words = np.array([[1, 0], [0, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]], dtype=float)
    he_q = np.array([[np.sqrt(2.0) * np.log(4.0), 0.0]])
    shown = "attention(q=[[1, 0]], k=[[1, 0], [0, 1]], v=[[1, 2], [3, 4]])"

    def out_of(fn, *args, **kw):
        result = fn(*args, **kw)
        if (bad := pair(result)) is not None:
            raise _Unpaired(bad)
        return result

    def run(check):
        def case(fn):
            try:
                return check(lambda *a, **kw: out_of(fn, *a, **kw))
            except _Unpaired as err:
                return err.fail

        return case

    cases = [
        Case("hand_weights", "hand", run(lambda f: close(f(q, k, v)[1], hand_w)), shown, 8),
        Case("hand_output", "hand", run(lambda f: close(f(q, k, v)[0], hand_w @ v)), shown, 8),
        Case(
            "hand_mask",
            "hand",
            run(lambda f: close(f(q, k, v, np.array([[True, False]]))[1], np.array([[1.0, 0.0]]))),
            shown[:-1] + ", mask=[[True, False]])",
            10,
        ),
        Case(
            "agreement",
            "hand",
            run(lambda f: close(f(he_q, words, words)[0], [[0.75, 0.125]])),
            "attention(q=[[√2·ln 4, 0]], k=w, v=w), "
            "w = [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]]",
            16,
        ),
    ]
    shapes = [((3, 2), (4, 2), (4, 3)), ((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3))]
    for sq, sk, sv in shapes:
        a, b, c = rng.normal(size=sq), rng.normal(size=sk), rng.normal(size=sv)
        cases += [
            Case(
                "random_out",
                "random",
                run(
                    lambda f, a=a, b=b, c=c: close(
                        f(a, b, c)[0], ref.scaled_dot_product_attention(a, b, c)[0]
                    )
                ),
                f"q {sq}, k {sk}, v {sv}",
                a.size + b.size + c.size,
                {"shape": sq},
            ),
            Case(
                "random_weights",
                "random",
                run(
                    lambda f, a=a, b=b, c=c: close(
                        f(a, b, c)[1], ref.scaled_dot_product_attention(a, b, c)[1]
                    )
                ),
                f"q {sq}, k {sk}, v {sv}",
                a.size + b.size + c.size,
                {"shape": sq},
            ),
        ]
    a, b, c = (rng.normal(size=(2, 1, 5, 4)) for _ in range(3))
    pad = ref.padding_mask([5, 3], 5)  # (b, 1, 1, n): sequence 2 has 2 padded keys
    causal = ref.additive_mask(ref.causal_mask(5, 5))
    perm = rng.permutation(5)
    big_q = rng.normal(size=(3, 4)) * 60.0
    cases += [
        Case(
            "padding",
            "random",
            run(
                lambda f: close(
                    f(a, b, c, pad)[0], ref.scaled_dot_product_attention(a, b, c, mask=pad)[0]
                )
            ),
            "q, k, v (2, 1, 5, 4), mask=padding_mask([5, 3], 5)",
            120,
        ),
        Case(
            "additive",
            "random",
            run(
                lambda f: close(
                    f(a, b, c, causal)[0], ref.scaled_dot_product_attention(a, b, c, mask=causal)[0]
                )
            ),
            "q, k, v (2, 1, 5, 4), mask=np.where(causal, 0.0, -np.inf)",
            120,
        ),
        Case(
            "sums",
            "property",
            run(lambda f: close(np.sum(f(a, b, c)[1], -1), np.ones((2, 1, 5)))),
            "q, k, v (2, 1, 5, 4)",
            120,
        ),
        Case(
            "permute_keys",
            "property",
            run(lambda f: close(f(a, b[..., perm, :], c[..., perm, :])[0], f(a, b, c)[0])),
            "attention(q, k[..., perm, :], v[..., perm, :]), q, k, v (2, 1, 5, 4)",
            120,
        ),
        Case(
            "overflow",
            "property",
            run(
                lambda f: close(
                    f(big_q, big_q, big_q)[0],
                    ref.scaled_dot_product_attention(big_q, big_q, big_q)[0],
                )
            ),
            "attention(x, x, x), x = rng.normal(size=(3, 4)) * 60",
            12,
        ),
        Case(
            "hidden_row",
            "property",
            run(lambda f: close(f(q, k, v, np.array([[False, False]]))[0], np.zeros((1, 2)))),
            shown[:-1] + ", mask=[[False, False]])",
            10,
        ),
    ]
    return cases


class _Unpaired(Exception):
    def __init__(self, fail: Fail) -> None:
        self.fail = fail
