"""The mutation table of exercise 10 (cache): one wrong function per mistake its probes
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


def _look(q, k, v):
    w = _soft(q @ k.T / np.sqrt(q.shape[-1]))
    return w @ v


def cache_before_append(q_new, k_new, v_new, cache_k, cache_v):
    out = _look(q_new, cache_k, cache_v) if len(cache_k) else np.zeros_like(v_new)
    return out, np.concatenate([cache_k, k_new]), np.concatenate([cache_v, v_new])


def cache_prepends(q_new, k_new, v_new, cache_k, cache_v):
    k, v = np.concatenate([k_new, cache_k]), np.concatenate([v_new, cache_v])
    return _look(q_new, k, v), k, v


def cache_forgets(q_new, k_new, v_new, cache_k, cache_v):
    return _look(q_new, k_new, v_new), k_new, v_new


def cache_old(q_new, k_new, v_new, cache_k, cache_v):
    k, v = np.concatenate([cache_k, k_new]), np.concatenate([cache_v, v_new])
    return _look(q_new, k, v), cache_k, cache_v


WRONG = {  # mistake -> a function that makes it
    "attends_before_append": cache_before_append,
    "prepends": cache_prepends,
    "forgets_cache": cache_forgets,
    "old_cache": cache_old,
}
