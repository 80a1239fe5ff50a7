"""The cases of exercise 11 (recurrence): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.exercises.recurrence.measure import _dh, _parts, _triple, rate_of, states

FD_EPS, FD_RTOL, FD_ATOL = 1e-6, 1e-5, 1e-8  # central differences in float64


def _grads(fn: Fn, args) -> Fail | None:
    out = fn(*args)
    return _triple(out) or close(_parts(out)[0], _dh(*args))


def _rate(fn: Fn, args, want: float) -> Fail | None:
    out = fn(*args)
    return _triple(out) or close(_parts(out)[1], want, 1e-6)


def _steps(fn: Fn, args) -> Fail | None:
    out = fn(*args)
    if (fail := _triple(out)) is not None:
        return fail
    got, want = _parts(out)[2], (len(args[2]), 1)
    if got == want:
        return None
    return Fail("recurrence.fail.steps", {"got": got, "want": want})


def _orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(11)
    hand = (np.array([[0.5]]), np.array([[1.0]]), np.zeros((4, 1)), np.array([1.0]))
    shown = "rnn_backward(w_h=[[0.5]], w_x=[[1.0]], x=np.zeros((4, 1)), dout=[1.0])"
    cases = [
        Case("hand_dh", "hand", lambda fn: _grads(fn, hand), shown, 7),
        Case("hand_rate", "hand", lambda fn: _rate(fn, hand, 0.5), shown, 7),
        Case("hand_steps", "hand", lambda fn: _steps(fn, hand), shown, 7),
    ]
    for t_len, d, d_in in ((6, 3, 2), (10, 4, 3)):
        args = (rng.normal(size=(d, d)) * 0.6, rng.normal(size=(d, d_in)),
                rng.normal(size=(t_len, d_in)), rng.normal(size=d))
        shown = f"w_h ({d}, {d}), w_x ({d}, {d_in}), x ({t_len}, {d_in}), dout ({d},)"
        size = d * d + d * d_in + t_len * d_in + d
        fields = {"shape": (t_len, d, d_in)}
        cases += [
            Case("random_dh", "random", lambda fn, a=args: _grads(fn, a), shown, size, fields),
            Case("random_rate", "random", lambda fn, a=args: _rate(fn, a, rate_of(_dh(*a))),
                 shown, size, fields),
            Case("random_steps", "random", lambda fn, a=args: _steps(fn, a), shown, size, fields),
        ]
    fd = (rng.normal(size=(3, 3)) * 0.7, rng.normal(size=(3, 2)), rng.normal(size=(5, 2)),
          rng.normal(size=3))
    cases.append(Case("finite", "property", lambda fn: _finite(fn, fd),
                      "w_h (3, 3), w_x (3, 2), x (5, 2), dout (3,)", 28))
    for gain in (0.5, 1.5):  # the linear regime: x = 0, so every tanh' is 1 and ‖dh‖ = gain^k
        w_h = gain * _orthogonal(rng, 4)
        args = (w_h, rng.normal(size=(4, 2)), np.zeros((8, 2)), rng.normal(size=4))
        cases.append(Case("geometric", "property", lambda fn, a=args, g=gain: _rate(fn, a, g),
                          f"w_h = {gain} × an orthogonal (4, 4), x = np.zeros((8, 2))", 32,
                          {"gain": gain}))
    return cases


def _finite(fn: Fn, args) -> Fail | None:
    """dh[0] against central differences of the loss in h_0, the first state (the check that
    does not trust the reference's own backward)."""
    w_h, w_x, x, dout = args
    h0 = states(w_h, w_x, x)[0]

    def loss(h_first: np.ndarray) -> float:
        prev = h_first
        for t in range(1, len(x)):
            prev = np.tanh(prev @ w_h.T + x[t] @ w_x.T)
        return float(prev @ dout)

    want = np.array([(loss(h0 + FD_EPS * e) - loss(h0 - FD_EPS * e)) / (2 * FD_EPS)
                     for e in np.eye(len(h0))])
    out = fn(*args)
    return _triple(out) or close(_parts(out)[0][0], want, FD_RTOL, FD_ATOL)
