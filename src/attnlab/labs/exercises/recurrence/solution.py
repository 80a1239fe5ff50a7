"""The reference solution of exercise 11, as ``attnlab lab solution 11`` prints it: self-contained,
NumPy only. The checker compares against ``attnlab.reference`` (float64); the tests run
every case on it."""

from __future__ import annotations

import numpy as np


def rnn_backward(w_h, w_x, x, dout):
    t_len = x.shape[0]
    h, prev = np.zeros((t_len, w_h.shape[0])), np.zeros(w_h.shape[0])
    for t in range(t_len):  # the forward: each state waits for the one before
        prev = h[t] = np.tanh(prev @ w_h.T + x[t] @ w_x.T)
    dh = np.zeros_like(h)  # (T, d): dh[t] = ∂loss/∂h_t
    dh[-1] = dout
    for t in range(t_len - 1, 0, -1):  # back through h_t = tanh(h_{t-1} W_hᵀ + x_t W_xᵀ)
        dh[t - 1] = (dh[t] * (1.0 - h[t] ** 2)) @ w_h
    k = np.arange(t_len)  # steps back from the last state
    slope = np.polyfit(k, np.log(np.linalg.norm(dh[::-1], axis=1)), 1)[0]
    return dh, float(np.exp(slope)), (t_len, 1)  # an RNN's T steps against attention's one
