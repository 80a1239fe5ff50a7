"""The Elman RNN the checker of exercise 11 runs itself: its states, the gradient carried back
step by step, the fitted rate, and a learner's triple read back."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fail


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
