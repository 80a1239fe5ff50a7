"""Wrong implementations a learner writes, one per mistake the labs recognise (the mutation table).

Each is written the way the mistake happens in a learner's file, independently of the probe
that recognises it (the probes compare against a formula; these are code). ``WRONG`` maps
``(exercise name, mistake key)`` to the function, for exercises 1-4;
``labs_wrong_more.WRONG_MORE`` holds 5-10.
"""

from __future__ import annotations

import numpy as np

# -- 1 softmax -------------------------------------------------------------------------------


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


# -- 2 mean ----------------------------------------------------------------------------------


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


# -- 3 attention -----------------------------------------------------------------------------


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


# -- 4 masks ---------------------------------------------------------------------------------


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


WRONG = {
    ("softmax", "no_max"): softmax_no_max,
    ("softmax", "nan_hidden_row"): softmax_nan_row,
    ("softmax", "global_max"): softmax_global_max,
    ("softmax", "ignores_axis"): softmax_ignores_axis,
    ("softmax", "whole_array"): softmax_whole_array,
    ("softmax", "not_normalised"): softmax_not_normalised,
    ("mean", "future"): mean_future,
    ("mean", "divides_by_n"): mean_divides_by_n,
    ("mean", "excludes_self"): mean_excludes_self,
    ("mean", "no_mask"): mean_no_mask,
    ("mean", "not_normalised"): mean_not_normalised,
    ("attention", "divides_by_dk"): attention_dk,
    ("attention", "no_scale"): attention_no_scale,
    ("attention", "scale_dv"): attention_dv,
    ("attention", "wrong_axis"): attention_axis,
    ("attention", "transposed_scores"): attention_transposed,
    ("attention", "swapped_return"): attention_swapped,
    ("attention", "mask_after_softmax"): attention_mask_after,
    ("attention", "mask_inverted"): attention_mask_inverted,
    ("attention", "mask_ignored"): attention_mask_ignored,
    ("masks", "diagonal_hidden"): mask_diagonal,
    ("masks", "next_visible"): mask_next,
    ("masks", "minus_1e9"): mask_1e9,
    ("masks", "float16_nan"): mask_fp16,
    ("masks", "times_inf"): mask_times_inf,
    ("masks", "finite_min"): mask_finite_min,
    ("masks", "boolean"): mask_boolean,
    ("masks", "ignores_dtype"): mask_dtype,
    ("masks", "no_offset"): mask_no_offset,
    ("masks", "inverted"): mask_inverted,
    ("masks", "multiplicative"): mask_multiplicative,
}
