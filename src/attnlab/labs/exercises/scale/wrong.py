"""The mutation table of exercise 6 (scale): one wrong function per mistake its probes
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


def _draw(d, rng, rows, keys):
    return rng.standard_normal((rows, 1, d)), rng.standard_normal((rows, keys, d))


def _frozen(scores):
    return float((_soft(scores).max(-1) > 0.99).mean())


def scale_by_d(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (d if scaled else 1)
    return float(s.var()), _frozen(s)


def scale_std(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.std()), _frozen(s)


def scale_products(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    products = q * k / (np.sqrt(d) if scaled else 1)
    s = products.sum(-1)
    return float(products.var()), _frozen(s)


def scale_ignored(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1)
    return float(s.var()), _frozen(s)


def scale_count(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, rng, rows, keys)
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.var()), float((_soft(s).max(-1) > 0.99).sum())


def scale_global_rng(d, scaled, rng, rows=1000, keys=64):
    q, k = _draw(d, np.random, rows, keys)  # the module's global generator, not rng
    s = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1)
    return float(s.var()), _frozen(s)


WRONG = {  # mistake -> a function that makes it
    "divides_by_d": scale_by_d,
    "std": scale_std,
    "products": scale_products,
    "scaled_ignored": scale_ignored,
    "frozen_count": scale_count,
    "global_rng": scale_global_rng,
}
