"""The cases of exercise 9 (backward): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import close
from attnlab.labs.core import Case, Fail, Fn

FD_RTOL, FD_ATOL = 1e-5, 1e-7  # central differences with ε = 1e-6 in float64


def _grads(q, k, v, dout):
    return ref.attention_backward(dout, ref.attention_forward(q, k, v)[1])


def _part(fn: Fn, index: int, *args) -> np.ndarray:
    return np.asarray(fn(*args)[index])


@cache
def build() -> list[Case]:
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
