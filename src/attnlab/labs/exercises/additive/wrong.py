"""The mutation table of exercise 13 (additive): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def _soft(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=axis, keepdims=True)
    return e / np.where(t > 0, t, 1)


def _context(weights, h):
    return np.einsum("bn,bnd->bd", weights, h)


def additive_mask_ignored(s, h, w, u, v, src_mask):
    weights = _soft(np.tanh((s @ w)[:, None, :] + h @ u) @ v)
    return _context(weights, h), weights


def additive_mask_on_queries(s, h, w, u, v, src_mask):
    scores = np.tanh((s @ w)[:, None, :] + h @ u) @ v  # (b, n)
    scores = np.where(np.asarray(src_mask).T, scores, -np.inf)  # a mask of (query, key)...
    weights = _soft(scores)
    return _context(weights, h), weights


def additive_wrong_axis(s, h, w, u, v, src_mask):
    scores = np.tanh((s @ w)[:, None, :] + h @ u) @ v
    weights = _soft(np.where(src_mask, scores, -np.inf), axis=0)
    return _context(weights, h), weights


def additive_swapped_maps(s, h, w, u, v, src_mask):
    scores = np.tanh((s @ u)[:, None, :] + h @ w) @ v
    weights = _soft(np.where(src_mask, scores, -np.inf))
    return _context(weights, h), weights


def additive_no_tanh(s, h, w, u, v, src_mask):
    scores = ((s @ w)[:, None, :] + h @ u) @ v
    weights = _soft(np.where(src_mask, scores, -np.inf))
    return _context(weights, h), weights


WRONG = {  # mistake -> a function that makes it
    "mask_ignored": additive_mask_ignored,
    "mask_on_queries": additive_mask_on_queries,
    "wrong_axis": additive_wrong_axis,
    "swapped_maps": additive_swapped_maps,
    "no_tanh": additive_no_tanh,
}
