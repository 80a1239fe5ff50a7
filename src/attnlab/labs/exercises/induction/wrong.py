"""The mutation table of exercise 12 (induction): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np

from attnlab.labs.exercises.induction.solution import induction_weights


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


WRONG = {  # mistake -> a function that makes it
    "no_shift": induction_no_shift,
    "duplicate": induction_duplicate,
    "soft": induction_soft,
    "swapped": induction_swapped,
    "copies_current": induction_copies_current,
}
