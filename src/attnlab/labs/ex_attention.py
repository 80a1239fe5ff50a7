"""Exercises 3-4, the curriculum's: scaled dot-product attention, and causal masks.

Every expected number comes from ``attnlab.reference`` (float64) or is worked out by hand in
the statement; every probe compares the learner's output with what one mistake would give.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs import solutions
from attnlab.labs.compare import close, pair, same
from attnlab.labs.core import Case, Exercise, Fail, Fn, Mistake
from attnlab.labs.describe import MASKS

INF = np.inf


# -- 3. scaled dot-product attention ---------------------------------------------------------


def _attend(q, k, v, factor, axis=-1, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) * factor
    if mask is not None:
        scores = np.where(mask, scores, -INF)
    w = ref.softmax(scores, axis)
    return w @ v, w


@cache
def _attention_cases() -> list[Case]:
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


_RNG = np.random.default_rng(30)
_Q, _K = _RNG.normal(size=(4, 4)), _RNG.normal(size=(4, 4))
_V, _V9 = _RNG.normal(size=(4, 2)), _RNG.normal(size=(4, 9))
_MASK = np.array([[True, True, False, False]] * 2 + [[True, False, True, True]] * 2)


def _out(fn: Fn, *args) -> np.ndarray:
    return np.asarray(fn(*args)[0])


ATTENTION_MISTAKES = (
    Mistake(
        "attention.mistake.divides_by_dk",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 1 / 4)[0]),
    ),
    Mistake(
        "attention.mistake.no_scale",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 1.0)[0]),
    ),
    Mistake(
        "attention.mistake.scale_dv",
        lambda fn: same(_out(fn, _Q, _K, _V9), _attend(_Q, _K, _V9, 1 / 3)[0]),
    ),
    Mistake(
        "attention.mistake.wrong_axis",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_Q, _K, _V, 0.5, axis=-2)[0]),
    ),
    Mistake(
        "attention.mistake.transposed_scores",
        lambda fn: same(_out(fn, _Q, _K, _V), _attend(_K, _Q, _V, 0.5)[0]),
    ),
    Mistake(
        "attention.mistake.swapped_return",
        lambda fn: (
            same(fn(_Q[:3], _K, _V)[0], _attend(_Q[:3], _K, _V, 0.5)[1])
            and same(fn(_Q[:3], _K, _V)[1], _attend(_Q[:3], _K, _V, 0.5)[0])
        ),
    ),
    Mistake(
        "attention.mistake.mask_after_softmax",
        lambda fn: same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5)[1] * _MASK),
    ),
    Mistake(
        "attention.mistake.mask_inverted",
        lambda fn: same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5, mask=~_MASK)[1]),
    ),
    Mistake(
        "attention.mistake.mask_ignored",
        lambda fn: (
            same(fn(_Q, _K, _V)[1], _attend(_Q, _K, _V, 0.5)[1])
            and same(fn(_Q, _K, _V, _MASK)[1], _attend(_Q, _K, _V, 0.5)[1])
        ),
    ),
)


# -- 4. causal masks -------------------------------------------------------------------------


def _keep(n_query: int, n_key: int, shift: int = 0, offset: bool = True) -> np.ndarray:
    i = np.arange(n_query)[:, None] + ((n_key - n_query) if offset else 0)
    return np.arange(n_key)[None, :] <= i + shift


@cache
def _mask_cases() -> list[Case]:
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


def _additive(keep: np.ndarray) -> np.ndarray:
    return np.where(keep, 0.0, -INF)


def _fp16(fn: Fn) -> np.ndarray:
    return np.asarray(fn(3, 3, np.float16))


def _fp64(fn: Fn) -> np.ndarray:
    return np.asarray(fn(3, 3), dtype=np.float64)


def _hidden_hold(fn: Fn, value: float) -> bool:
    """The float64 mask is right but for its hidden entries, which all hold ``value``."""
    return same(_fp64(fn), np.where(_keep(3, 3), 0.0, value))


def _nan_where_kept(m: np.ndarray) -> bool:
    """NaN exactly where keys may be seen and -inf where they may not: 0 × -inf and 1 × -inf."""
    m = np.asarray(m, dtype=np.float64)
    keep = _keep(3, 3)
    return m.shape == keep.shape and bool(np.isnan(m[keep]).all() and np.isneginf(m[~keep]).all())


MASK_MISTAKES = (
    Mistake("masks.mistake.diagonal_hidden", lambda fn: same(fn(4, 4), _additive(_keep(4, 4, -1)))),
    Mistake("masks.mistake.next_visible", lambda fn: same(fn(4, 4), _additive(_keep(4, 4, 1)))),
    Mistake(
        "masks.mistake.minus_1e9",
        lambda fn: not np.isnan(_fp16(fn).astype(np.float64)).any() and _hidden_hold(fn, -1e9),
    ),
    Mistake(
        "masks.mistake.float16_nan",
        lambda fn: _nan_where_kept(_fp16(fn)) and _hidden_hold(fn, -1e9),
    ),
    Mistake("masks.mistake.times_inf", lambda fn: _nan_where_kept(_fp64(fn))),
    Mistake(
        "masks.mistake.finite_min",
        lambda fn: _hidden_hold(fn, np.finfo(np.float64).min),
    ),
    Mistake("masks.mistake.boolean", lambda fn: np.asarray(fn(3, 3)).dtype == np.bool_),
    Mistake(
        "masks.mistake.ignores_dtype",
        lambda fn: _fp16(fn).dtype == np.float64 and same(fn(3, 3), _additive(_keep(3, 3))),
    ),
    Mistake(
        "masks.mistake.no_offset",
        lambda fn: (
            same(fn(4, 4), _additive(_keep(4, 4)))
            and same(fn(2, 4), _additive(_keep(2, 4, offset=False)))
        ),
    ),
    Mistake("masks.mistake.inverted", lambda fn: same(fn(4, 4), np.where(_keep(4, 4), -INF, 0.0))),
    Mistake(
        "masks.mistake.multiplicative",
        lambda fn: np.asarray(fn(4, 4)).dtype != np.bool_ and same(fn(4, 4), _keep(4, 4) * 1.0),
    ),
)


EXERCISES = (
    Exercise(
        3,
        "attention",
        "attention",
        "(q, k, v, mask=None)",
        3,
        solutions.attention,
        _attention_cases,
        ATTENTION_MISTAKES,
    ),
    Exercise(
        4,
        "masks",
        "causal_mask",
        "(n_query, n_key, dtype=np.float64)",
        3,
        solutions.causal_mask,
        _mask_cases,
        MASK_MISTAKES,
        MASKS,
    ),
)
