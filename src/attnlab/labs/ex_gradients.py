"""Exercises 9-10: the backward of attention by hand, and one decoding step with a KV cache.

Dimension legend: ``i`` query positions, ``j`` key positions, ``t`` cached positions, ``d_k``
q/k width, ``d_v`` value width. One head, no batch, no mask: the shapes a learner can follow.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs import solutions
from attnlab.labs.compare import close, same
from attnlab.labs.core import Case, Exercise, Fail, Fn, Mistake

# -- 9. backward -----------------------------------------------------------------------------

FD_RTOL, FD_ATOL = 1e-5, 1e-7  # central differences with ε = 1e-6 in float64


def _grads(q, k, v, dout):
    return ref.attention_backward(dout, ref.attention_forward(q, k, v)[1])


def _part(fn: Fn, index: int, *args) -> np.ndarray:
    return np.asarray(fn(*args)[index])


@cache
def _backward_cases() -> list[Case]:
    rng = np.random.default_rng(9)
    q, k = np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    v, dout = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0]])
    w1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # the two-token weights: [w1, 1 - w1]
    g = 2.0 * w1 * (1.0 - w1)  # dS = [-g, g]: dP = [1, 3], rowsum(dP ⊙ P) = 3 - 2·w1
    shown = "q=[[1, 0]], k=[[1, 0], [0, 1]], v=[[1, 2], [3, 4]], dout=[[1, 0]]"
    cases = [
        Case(
            "hand_dv",
            "hand",
            lambda fn: close(_part(fn, 2, q, k, v, dout), [[w1, 0.0], [1 - w1, 0.0]]),
            shown,
            10,
        ),
        Case(
            "hand_dq",
            "hand",
            lambda fn: close(_part(fn, 0, q, k, v, dout), [[-g / np.sqrt(2), g / np.sqrt(2)]]),
            shown,
            10,
        ),
    ]
    for i, j, dk, dv in ((3, 4, 2, 3), (5, 5, 4, 4)):
        args = (
            rng.normal(size=(i, dk)),
            rng.normal(size=(j, dk)),
            rng.normal(size=(j, dv)),
            rng.normal(size=(i, dv)),
        )
        want = _grads(*args)
        for index, name in enumerate(("dq", "dk", "dv")):
            cases.append(
                Case(
                    "random",
                    "random",
                    lambda fn, a=args, w=want[index], n=index: close(_part(fn, n, *a), w),
                    f"q ({i}, {dk}), k ({j}, {dk}), v ({j}, {dv})",
                    i * dk + j * (dk + dv),
                    {"which": name, "shape": (i, j, dk, dv)},
                )
            )
    args = tuple(rng.normal(size=s) for s in ((2, 3), (3, 3), (3, 2), (2, 2)))
    a_q, a_k, a_v, a_d = args

    def loss(qq, kk, vv):
        return float(np.sum(ref.attention_forward(qq, kk, vv)[0] * a_d))

    numeric = (
        ref.finite_difference_grad(lambda t: loss(t, a_k, a_v), a_q),
        ref.finite_difference_grad(lambda t: loss(a_q, t, a_v), a_k),
        ref.finite_difference_grad(lambda t: loss(a_q, a_k, t), a_v),
    )
    for index, name in enumerate(("dq", "dk", "dv")):
        cases.append(
            Case(
                "finite",
                "property",
                lambda fn, w=numeric[index], n=index: close(
                    _part(fn, n, *args), w, FD_RTOL, FD_ATOL
                ),
                "q (2, 3), k (3, 3), v (3, 2)",
                24,
                {"which": name},
            )
        )
    cases.append(
        Case(
            "autograd",
            "property",
            lambda fn: _autograd(fn, args),
            "q (2, 3), k (3, 3), v (3, 2)",
            24,
        )
    )
    return cases


def _autograd(fn: Fn, args: tuple[np.ndarray, ...]) -> Fail | None:
    """The learner's gradients against torch's autograd, when torch is installed."""
    try:
        import torch
    except ImportError:
        return None
    q, k, v = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args[:3])
    weights = torch.softmax(q @ k.T / np.sqrt(q.shape[-1]), dim=-1)
    ((weights @ v) * torch.tensor(args[3])).sum().backward()
    for got, t in zip(fn(*args), (q, k, v), strict=True):
        if (fail := close(got, t.grad.numpy())) is not None:
            return fail
    return None


_BR = np.random.default_rng(90)
_BQ, _BK, _BV, _BD = (_BR.normal(size=(3, 3)) for _ in range(4))


def _bwd_parts():
    s = 1.0 / np.sqrt(3.0)
    p = ref.softmax(_BQ @ _BK.T * s)
    dp = _BD @ _BV.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return s, p, dp, ds


def _learner(fn: Fn) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(g) for g in fn(_BQ, _BK, _BV, _BD))


def _dq_dk(fn: Fn, ds: np.ndarray, s: float) -> bool:
    """The learner's dq and dk are both what the softmax gradient ``ds`` gives, times ``s``."""
    dq, dk = _learner(fn)[:2]
    return same(dq, ds @ _BK * s) and same(dk, ds.T @ _BQ * s)


BACKWARD_MISTAKES = (
    Mistake("backward.mistake.no_rowsum",
            lambda fn: _dq_dk(fn, _bwd_parts()[1] * _bwd_parts()[2], _bwd_parts()[0])),
    Mistake("backward.mistake.no_scale", lambda fn: _dq_dk(fn, _bwd_parts()[3], 1.0)),
    Mistake("backward.mistake.sign", lambda fn: _dq_dk(fn, -_bwd_parts()[3], _bwd_parts()[0])),
    Mistake(
        "backward.mistake.dv_transpose", lambda fn: same(_learner(fn)[2], _bwd_parts()[1] @ _BD)
    ),
    Mistake(
        "backward.mistake.dk_transpose",
        lambda fn: same(_learner(fn)[1], _bwd_parts()[3] @ _BQ * _bwd_parts()[0]),
    ),
)


# -- 10. one decoding step with a KV cache ---------------------------------------------------


def _attend_one(q, k, v):
    return ref.scaled_dot_product_attention(q, k, v)[0]


@cache
def _cache_cases() -> list[Case]:
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


_CR = np.random.default_rng(100)
_CQ, _CK, _CV = (_CR.normal(size=(1, 4)) for _ in range(3))
_OK, _OV = _CR.normal(size=(3, 4)), _CR.normal(size=(3, 4))


def _step(fn: Fn) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(a) for a in fn(_CQ, _CK, _CV, _OK.copy(), _OV.copy()))


CACHE_MISTAKES = (
    Mistake(
        "cache.mistake.attends_before_append",
        lambda fn: same(_step(fn)[0], _attend_one(_CQ, _OK, _OV)),
    ),
    Mistake(
        "cache.mistake.prepends",
        lambda fn: (
            same(_step(fn)[1], np.concatenate([_CK, _OK]))
            and same(_step(fn)[2], np.concatenate([_CV, _OV]))
        ),
    ),
    Mistake("cache.mistake.forgets_cache", lambda fn: same(_step(fn)[0], _CV)),
    Mistake(
        "cache.mistake.old_cache",
        lambda fn: (
            same(_step(fn)[1], _OK)
            and same(
                _step(fn)[0],
                _attend_one(_CQ, np.concatenate([_OK, _CK]), np.concatenate([_OV, _CV])),
            )
        ),
    ),
)


EXERCISES = (
    Exercise(
        9,
        "backward",
        "attention_backward",
        "(q, k, v, dout)",
        3,
        solutions.attention_backward,
        _backward_cases,
        BACKWARD_MISTAKES,
    ),
    Exercise(
        10,
        "cache",
        "decode_step",
        "(q_new, k_new, v_new, cache_k, cache_v)",
        3,
        solutions.decode_step,
        _cache_cases,
        CACHE_MISTAKES,
    ),
)
