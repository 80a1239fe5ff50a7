"""The mutation table of exercise 11 (recurrence): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np

from attnlab.labs.exercises.recurrence.solution import rnn_backward


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


WRONG = {  # mistake -> a function that makes it
    "no_tanh": recurrence_no_tanh,
    "transpose": recurrence_transpose,
    "earlier_state": recurrence_earlier_state,
    "fit_against_t": recurrence_fit_against_t,
    "total_decay": recurrence_total_decay,
    "attention_sequential": recurrence_attention_sequential,
}
