"""The mutation table of exercise 9 (backward): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def _soft(s, axis=-1):
    top = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=axis, keepdims=True)
    return e / np.where(t > 0, t, 1)


def _forward(q, k):
    s = 1 / np.sqrt(q.shape[-1])
    return s, _soft(q @ k.T * s)


def backward_no_rowsum(q, k, v, dout):
    s, p = _forward(q, k)
    ds = p * (dout @ v.T)
    return ds @ k * s, ds.T @ q * s, p.T @ dout


def backward_no_scale(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k, ds.T @ q, p.T @ dout


def backward_sign(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * ((dp * p).sum(-1, keepdims=True) - dp)
    return ds @ k * s, ds.T @ q * s, p.T @ dout


def backward_dv(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * s, ds.T @ q * s, p @ dout


def backward_dk(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return ds @ k * s, ds @ q * s, p.T @ dout


def backward_rowsum_axis0(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(axis=0, keepdims=True))  # down the columns
    return ds @ k * s, ds.T @ q * s, p.T @ dout


def backward_swapped(q, k, v, dout):
    s, p = _forward(q, k)
    dp = dout @ v.T
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq, dk = ds @ k * s, ds.T @ q * s
    return dk, dq, p.T @ dout


WRONG = {  # mistake -> a function that makes it
    "no_rowsum": backward_no_rowsum,
    "no_scale": backward_no_scale,
    "sign": backward_sign,
    "dv_transpose": backward_dv,
    "dk_transpose": backward_dk,
    "rowsum_axis0": backward_rowsum_axis0,
    "dq_dk_swapped": backward_swapped,
}
