"""Exercise 11: backpropagation through time by hand in an Elman RNN, the gradient's norm
against the distance k fitted as a geometric decay, and the dependent steps counted against
attention's: the curriculum's exit question ("why did attention replace RNNs?") answered by
the learner's own numbers.

Dimension legend: ``T`` positions, ``d`` state width, ``d_in`` input width. One sequence, no
batch, no bias, the loss ``dout · h_{T-1}`` on the last state only (Elman 1990; the vanishing
gradient: Bengio, Simard & Frasconi 1994; Pascanu, Mikolov & Bengio 2013). Left out: LSTMs and
gates (the ``recurrence`` experiment trains one), gradients of the weights, truncated BPTT.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab.labs import solutions
from attnlab.labs.compare import close, same
from attnlab.labs.core import Case, Exercise, Fail, Fn, Mistake

FD_EPS, FD_RTOL, FD_ATOL = 1e-6, 1e-5, 1e-8  # central differences in float64


def states(w_h: np.ndarray, w_x: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(T, d) the states ``h_t = tanh(h_{t-1} W_hᵀ + x_t W_xᵀ)`` from ``h_{-1} = 0``."""
    h, prev = np.zeros((len(x), w_h.shape[0])), np.zeros(w_h.shape[0])
    for t in range(len(x)):
        prev = h[t] = np.tanh(prev @ w_h.T + x[t] @ w_x.T)
    return h


def _dh(w_h, w_x, x, dout, jacobian=None) -> np.ndarray:
    """(T, d) ∂loss/∂h_t: the row ``dout`` carried back through each step's Jacobian
    ``∂h_t/∂h_{t-1} = diag(1 - h_t²) W_h`` (``jacobian`` swaps in a wrong one)."""
    h = states(w_h, w_x, x)
    step = jacobian or (lambda h, t: (1.0 - h[t] ** 2)[:, None] * w_h)
    out = np.zeros_like(h)
    out[-1] = dout
    for t in range(len(x) - 1, 0, -1):
        out[t - 1] = out[t] @ step(h, t)
    return out


def rate_of(dh: np.ndarray) -> float:
    """r of the least-squares fit ``log ‖dh[T-1-k]‖ = a + k log r`` over k = 0 … T-1."""
    norms = np.linalg.norm(np.asarray(dh, dtype=np.float64)[::-1], axis=1)
    return float(np.exp(np.polyfit(np.arange(len(norms)), np.log(norms), 1)[0]))


def _parts(out) -> tuple[np.ndarray, float, tuple]:
    dh, rate, steps = out  # a learner's triple; anything else fails the case that reads it
    return np.asarray(dh, dtype=np.float64), float(rate), tuple(int(s) for s in steps)


def _triple(out) -> Fail | None:
    if isinstance(out, tuple | list) and len(out) == 3:
        return None
    return Fail("recurrence.fail.not_triple", {"kind": type(out).__name__})


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
def _cases() -> list[Case]:
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


_R = np.random.default_rng(110)
_PROBE = (_R.normal(size=(3, 3)) * 0.8, _R.normal(size=(3, 2)) * 1.5, _R.normal(size=(6, 2)),
          _R.normal(size=3))


def _learner(fn: Fn) -> tuple[np.ndarray, float, tuple]:
    return _parts(fn(*_PROBE))


def _wrong_dh(jacobian) -> np.ndarray:
    return _dh(*_PROBE, jacobian=jacobian)


def _total(dh: np.ndarray) -> float:
    return float(np.linalg.norm(dh[0]) / np.linalg.norm(dh[-1]))


MISTAKES = (
    Mistake("recurrence.mistake.no_tanh", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: _PROBE[0]))),
    Mistake("recurrence.mistake.transpose", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: (1.0 - h[t] ** 2)[:, None] * _PROBE[0].T))),
    Mistake("recurrence.mistake.earlier_state", lambda fn: same(
        _learner(fn)[0], _wrong_dh(lambda h, t: (1.0 - h[t - 1] ** 2)[:, None] * _PROBE[0]))),
    Mistake("recurrence.mistake.fit_against_t", lambda fn: np.isclose(
        _learner(fn)[1], 1.0 / rate_of(_dh(*_PROBE)), rtol=1e-6)),
    Mistake("recurrence.mistake.total_decay", lambda fn: np.isclose(
        _learner(fn)[1], _total(_dh(*_PROBE)), rtol=1e-6)),
    Mistake("recurrence.mistake.attention_sequential",
            lambda fn: _learner(fn)[2][1] == len(_PROBE[2])),
)


EXERCISES = (
    Exercise(11, "recurrence", "rnn_backward", "(w_h, w_x, x, dout)", 3,
             solutions.rnn_backward, _cases, MISTAKES),
)
