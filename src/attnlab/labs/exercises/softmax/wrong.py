"""The mutation table of exercise 1 (softmax): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def softmax_no_max(x, axis=-1):
    e = np.exp(np.asarray(x, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_nan_row(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_global_max(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_ignores_axis(x, axis=-1):
    top = np.max(x, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(x - top)
    s = e.sum(axis=-1, keepdims=True)
    return e / np.where(s > 0, s, 1)


def softmax_whole_array(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum()


def softmax_not_normalised(x, axis=-1):
    return np.exp(x - np.max(x, axis=axis, keepdims=True))


WRONG = {  # mistake -> a function that makes it
    "no_max": softmax_no_max,
    "nan_hidden_row": softmax_nan_row,
    "global_max": softmax_global_max,
    "ignores_axis": softmax_ignores_axis,
    "whole_array": softmax_whole_array,
    "not_normalised": softmax_not_normalised,
}
