"""The mutation table of exercise 2 (mean): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def mean_future(n):
    a = np.triu(np.ones((n, n)))
    return a / a.sum(axis=1, keepdims=True)


def mean_divides_by_n(n):
    return np.tril(np.ones((n, n))) / n


def mean_excludes_self(n):
    a = np.tril(np.ones((n, n)), k=-1)
    return a / np.maximum(a.sum(axis=1, keepdims=True), 1)


def mean_no_mask(n):
    return np.ones((n, n)) / n


def mean_not_normalised(n):
    return np.tril(np.ones((n, n)))


WRONG = {  # mistake -> a function that makes it
    "future": mean_future,
    "divides_by_n": mean_divides_by_n,
    "excludes_self": mean_excludes_self,
    "no_mask": mean_no_mask,
    "not_normalised": mean_not_normalised,
}
