"""The cases of exercise 9 (backward): the two-token gradients by hand, random shapes against
the float64 reference's backward, then the gradients against central differences and against
torch's autograd."""

from __future__ import annotations

from functools import cache, partial

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

FD_RTOL, FD_ATOL = 1e-5, 1e-7  # central differences with ε = 1e-6 in float64
HAND_ARGS = (np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]),  # q, k,
             np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0]]))  # v, dout
SHOWN = "q=[[1, 0]], k=[[1, 0], [0, 1]], v=[[1, 2], [3, 4]], dout=[[1, 0]]"
W1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # the two-token weights: [w1, 1 - w1]
G = 2.0 * W1 * (1.0 - W1)  # dS = [-g, g]: dP = [1, 3], rowsum(dP ⊙ P) = 3 - 2·w1
GRADS = ("dq", "dk", "dv")  # the learner's triple, in order

HAND = (  # title, the gradient compared (its index in the triple), its value worked out by hand
    ("hand_dv", 2, [[W1, 0.0], [1 - W1, 0.0]]),
    ("hand_dq", 0, [[-G / np.sqrt(2), G / np.sqrt(2)]]),
)
# i, j, d_k, d_v; the last at the size lab train calls it with (up to 32 keys, heads of 16), so
# a gradient wrong only on long rows (a loop over the first 8 keys, say) fails here, not there
RANDOM = ((3, 4, 2, 3), (5, 5, 4, 4), (32, 32, 16, 16))


def _grads(q, k, v, dout):
    return ref.attention_backward(dout, ref.attention_forward(q, k, v)[1])


def _grad(index: int):
    """The gradient a row compares: ``index`` of the learner's (dq, dk, dv), as an array."""
    return lambda out: np.asarray(out[index])


def _numeric(q, k, v, dout) -> tuple[np.ndarray, ...]:
    """(dq, dk, dv) by central differences of the loss sum(attention(q, k, v) ⊙ dout)."""

    def loss(qq, kk, vv):
        return float(np.sum(ref.attention_forward(qq, kk, vv)[0] * dout))

    return (ref.finite_difference_grad(lambda t: loss(t, k, v), q),
            ref.finite_difference_grad(lambda t: loss(q, t, v), k),
            ref.finite_difference_grad(lambda t: loss(q, k, t), v))


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(9)
    rows = [Row(title, HAND_ARGS, want, SHOWN, 10, part=_grad(index))
            for title, index, want in HAND]
    for i, j, dk, dv in RANDOM:
        args = tuple(rng.normal(size=s) for s in ((i, dk), (j, dk), (j, dv), (i, dv)))
        rows += [Row("random", args, want, f"q ({i}, {dk}), k ({j}, {dk}), v ({j}, {dv})",
                     i * dk + j * (dk + dv), "random", part=_grad(index),
                     fields={"which": name, "shape": (i, j, dk, dv)})
                 for index, (name, want) in enumerate(zip(GRADS, _grads(*args), strict=True))]
    args = tuple(rng.normal(size=s) for s in ((2, 3), (3, 3), (3, 2), (2, 2)))
    shown = "q (2, 3), k (3, 3), v (3, 2)"
    rows += [Row("finite", args, want, shown, 24, "property", fields={"which": name},
                 part=_grad(index), rtol=FD_RTOL, atol=FD_ATOL)
             for index, (name, want) in enumerate(zip(GRADS, _numeric(*args), strict=True))]
    return as_cases(rows + [Case("autograd", "property", partial(_autograd, args=args), shown, 24)])


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
