"""The mutation table of exercise 4 (masks): one wrong function per mistake its probes
recognise, written as a learner writes it and apart from the probe (a probe compares with a
formula; these are code). The tests require each to be named by its own probe and by no
other (tests/test_labs.py, tests/test_labs_misnaming.py)."""

from __future__ import annotations

import numpy as np


def _positions(n_query, n_key):
    return np.arange(n_query)[:, None] + (n_key - n_query), np.arange(n_key)[None, :]


def mask_diagonal(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j < i, 0.0, -np.inf).astype(dtype)


def mask_next(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i + 1, 0.0, -np.inf).astype(dtype)


def mask_1e9(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i, 0.0, -1e9).astype(dtype)


def mask_fp16(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return (1 - (j <= i).astype(dtype)) * dtype(-1e9)


def mask_times_inf(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return ((j > i) * -np.inf).astype(dtype)


def mask_finite_min(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i, 0.0, np.finfo(dtype).min).astype(dtype)


def mask_boolean(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return j <= i


def mask_dtype(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i, 0.0, -np.inf)


def mask_no_offset(n_query, n_key, dtype=np.float64):
    return np.where(np.tril(np.ones((n_query, n_key))) > 0, 0.0, -np.inf).astype(dtype)


def mask_inverted(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i, -np.inf, 0.0).astype(dtype)


def mask_multiplicative(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return (j <= i).astype(dtype)


def mask_list(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j <= i, 0.0, -np.inf).astype(dtype).tolist()


def mask_transposed(n_query, n_key, dtype=np.float64):
    i, j = _positions(n_query, n_key)
    return np.where(j >= i, 0.0, -np.inf).astype(dtype)


def mask_square_only(n_query, n_key, dtype=np.float64):
    mask = np.full((n_key, n_key), -np.inf)  # built for as many queries as keys ...
    mask[:n_query, :n_query] = np.triu(np.full((n_query, n_query), -np.inf), 1)
    return np.roll(mask[:n_query], n_key - n_query, axis=1).astype(dtype)  # ... then shifted


WRONG = {  # mistake -> a function that makes it
    "diagonal_hidden": mask_diagonal,
    "next_visible": mask_next,
    "minus_1e9": mask_1e9,
    "float16_nan": mask_fp16,
    "times_inf": mask_times_inf,
    "finite_min": mask_finite_min,
    "boolean": mask_boolean,
    "ignores_dtype": mask_dtype,
    "no_offset": mask_no_offset,
    "inverted": mask_inverted,
    "multiplicative": mask_multiplicative,
    "list": mask_list,
    "transposed": mask_transposed,
    "square_only": mask_square_only,
}
