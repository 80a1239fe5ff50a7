"""The mutation table of exercise 3 (attention): one wrong function per mistake its probes
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


def _masked(s, mask):
    if mask is None:
        return s
    mask = np.asarray(mask)
    return np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask


def attention_dk(q, k, v, mask=None):
    w = _soft(_masked(q @ np.swapaxes(k, -1, -2) / q.shape[-1], mask))
    return w @ v, w


def attention_no_scale(q, k, v, mask=None):
    w = _soft(_masked(q @ np.swapaxes(k, -1, -2), mask))
    return w @ v, w


def attention_dv(q, k, v, mask=None):
    w = _soft(_masked(q @ np.swapaxes(k, -1, -2) / np.sqrt(np.shape(v)[-1]), mask))
    return w @ v, w


def attention_axis(q, k, v, mask=None):
    w = _soft(_masked(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), mask), axis=-2)
    return w @ v, w


def attention_transposed(q, k, v, mask=None):
    w = _soft(_masked(k @ np.swapaxes(q, -1, -2) / np.sqrt(q.shape[-1]), mask))
    return w @ v, w


def attention_swapped(q, k, v, mask=None):
    w = _soft(_masked(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), mask))
    return w, w @ v


def attention_mask_after(q, k, v, mask=None):
    w = _soft(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    if mask is not None:
        mask = np.asarray(mask)
        w = w * (mask if mask.dtype == bool else np.isfinite(mask))
    return w @ v, w


def attention_mask_inverted(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, -np.inf, s) if mask.dtype == bool else s + mask
    w = _soft(s)
    return w @ v, w


def attention_mask_ignored(q, k, v, mask=None):
    w = _soft(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    return w @ v, w


WRONG = {  # mistake -> a function that makes it
    "divides_by_dk": attention_dk,
    "no_scale": attention_no_scale,
    "scale_dv": attention_dv,
    "wrong_axis": attention_axis,
    "transposed_scores": attention_transposed,
    "swapped_return": attention_swapped,
    "mask_after_softmax": attention_mask_after,
    "mask_inverted": attention_mask_inverted,
    "mask_ignored": attention_mask_ignored,
}
