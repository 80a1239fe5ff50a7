"""The mutation table's wrong implementations for exercises 11-12 (see labs_wrong.py): each is
written as a learner would, and each must be named by its own mistake and no other."""

from __future__ import annotations

import numpy as np

from attnlab.labs.exercises.induction.solution import induction_weights
from attnlab.labs.exercises.recurrence.solution import rnn_backward

# -- 11 recurrence ---------------------------------------------------------------------------


def _states(w_h, w_x, x):
    h, prev = np.zeros((len(x), w_h.shape[0])), np.zeros(w_h.shape[0])
    for t in range(len(x)):
        prev = h[t] = np.tanh(prev @ w_h.T + x[t] @ w_x.T)
    return h


def _back(w_h, w_x, x, dout, step):
    h = _states(w_h, w_x, x)
    dh = np.zeros_like(h)
    dh[-1] = dout
    for t in range(len(x) - 1, 0, -1):
        dh[t - 1] = step(dh[t], h, t)
    return dh


def _fit(dh):
    norms = np.linalg.norm(dh[::-1], axis=1)
    return float(np.exp(np.polyfit(np.arange(len(dh)), np.log(norms), 1)[0]))


def recurrence_no_tanh(w_h, w_x, x, dout):
    dh = _back(w_h, w_x, x, dout, lambda g, h, t: g @ w_h)
    return dh, _fit(dh), (len(x), 1)


def recurrence_transpose(w_h, w_x, x, dout):
    dh = _back(w_h, w_x, x, dout, lambda g, h, t: (g * (1 - h[t] ** 2)) @ w_h.T)
    return dh, _fit(dh), (len(x), 1)


def recurrence_earlier_state(w_h, w_x, x, dout):
    dh = _back(w_h, w_x, x, dout, lambda g, h, t: (g * (1 - h[t - 1] ** 2)) @ w_h)
    return dh, _fit(dh), (len(x), 1)


def recurrence_fit_against_t(w_h, w_x, x, dout):
    dh, _, steps = rnn_backward(w_h, w_x, x, dout)
    norms = np.linalg.norm(dh, axis=1)  # in the order of t, not of the distance back
    return dh, float(np.exp(np.polyfit(np.arange(len(dh)), np.log(norms), 1)[0])), steps


def recurrence_total_decay(w_h, w_x, x, dout):
    dh, _, steps = rnn_backward(w_h, w_x, x, dout)
    return dh, float(np.linalg.norm(dh[0]) / np.linalg.norm(dh[-1])), steps


def recurrence_attention_sequential(w_h, w_x, x, dout):
    dh, rate, _ = rnn_backward(w_h, w_x, x, dout)
    return dh, rate, (len(x), len(x))  # "attention also walks the T positions"


# -- 12 induction ----------------------------------------------------------------------------


def _slots(v, n):
    return slice(0, v), slice(v, v + n), slice(v + n, 2 * v + n)  # token, position, previous


def induction_no_shift(n_vocab, n_ctx):
    w = induction_weights(n_vocab, n_ctx)
    w["K1"][_slots(n_vocab, n_ctx)[1]] = np.eye(n_ctx)  # key: my own position, not one on
    return w


def induction_duplicate(n_vocab, n_ctx):
    w = induction_weights(n_vocab, n_ctx)
    tok, _, prev = _slots(n_vocab, n_ctx)
    w["K2"][prev], w["K2"][tok] = 0.0, np.eye(n_vocab)  # key: the token itself
    return w


def induction_soft(n_vocab, n_ctx):
    w = induction_weights(n_vocab, n_ctx)
    w["Q1"] /= 20.0  # the right pattern with a gain of 1: every score differs by 1
    w["Q2"] /= 20.0
    return w


def induction_swapped(n_vocab, n_ctx):
    w = induction_weights(n_vocab, n_ctx)
    for name in "QKVO":
        w[f"{name}1"], w[f"{name}2"] = w[f"{name}2"], w[f"{name}1"]
    return w


def induction_copies_current(n_vocab, n_ctx):
    w = induction_weights(n_vocab, n_ctx)
    tok, _, prev = _slots(n_vocab, n_ctx)
    w["V2"][tok], w["V2"][prev] = 0.0, np.eye(n_vocab)  # copies the token before the match
    return w


WRONG_COURSE = {
    ("recurrence", "no_tanh"): recurrence_no_tanh,
    ("recurrence", "transpose"): recurrence_transpose,
    ("recurrence", "earlier_state"): recurrence_earlier_state,
    ("recurrence", "fit_against_t"): recurrence_fit_against_t,
    ("recurrence", "total_decay"): recurrence_total_decay,
    ("recurrence", "attention_sequential"): recurrence_attention_sequential,
    ("induction", "no_shift"): induction_no_shift,
    ("induction", "duplicate"): induction_duplicate,
    ("induction", "soft"): induction_soft,
    ("induction", "swapped"): induction_swapped,
    ("induction", "copies_current"): induction_copies_current,
}
