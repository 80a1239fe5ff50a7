"""Stable softmax and attention masks in NumPy float64.

Dimension legend: ``b`` batch, ``h`` heads, ``i`` query positions, ``j`` key
positions, ``n`` sequence length.

A mask says which scores a query may use. It comes in two forms that give
identical weights (the tests prove it):

- boolean: ``True`` = may attend, ``False`` = forbidden;
- additive: ``0.0`` = may attend, ``-inf`` = forbidden, added to the scores.

``-inf`` is exact here: ``exp(-inf - max) == 0.0``, so a forbidden key gets a
weight of exactly zero, not merely a small one. Left out: the large finite
negative numbers (``-1e9``) some code uses instead; they leak tiny weights and
turn a fully masked row into a uniform one.
"""

from __future__ import annotations

import numpy as np


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax: ``exp(s - max s) / sum exp(s - max s)``.

    Subtracting the row maximum leaves the result unchanged (the factor
    ``exp(-max)`` cancels) and keeps every exponent ``<= 0``, so nothing
    overflows: ``softmax([1000, 1000]) == [0.5, 0.5]``.

    Fully masked rows: a row whose every score is ``-inf`` has no softmax (it
    would be 0/0). We define its weights as **all zeros**, never NaN, so a
    query with nothing to attend to contributes a zero output. Its row then
    sums to 0, not 1.

    >>> softmax(np.array([0.0, 1.0])).round(4).tolist()   # [1, e] / (1 + e)
    [0.2689, 0.7311]
    >>> softmax(np.array([-np.inf, -np.inf])).tolist()
    [0.0, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise ValueError("softmax got NaN scores")
    if np.isposinf(scores).any():
        raise ValueError("softmax got +inf scores; only -inf (forbidden) is allowed")
    top = np.max(scores, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # all -inf row: exp(-inf - 0) = 0
    e = np.exp(scores - top)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0.0, total, 1.0)


def entropy(weights: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of weights over the last axis; 0·log 0 counts as 0.

    >>> float(entropy(np.array([0.5, 0.5, 0.0])))  # log 2
    0.6931471805599453
    """
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(np.where(w > 0, w, 1.0))
    return -(w * logs).sum(axis=-1)


def effective_tokens(weights: np.ndarray) -> np.ndarray:
    """exp(entropy) of each row of weights: 1 for a one-hot row, n for a uniform row of n
    (how many keys a query attends to, in effect).

    >>> effective_tokens(np.array([[0.25] * 4, [1.0, 0.0, 0.0, 0.0]])).tolist()
    [4.0, 1.0]
    """
    return np.exp(entropy(weights))


def causal_mask(n_query: int, n_key: int) -> np.ndarray:
    """Boolean (i, j) mask, ``True`` where query i may see key j.

    The queries are the *last* ``n_query`` of the ``n_key`` positions (as when
    decoding with a KV cache): query i sits at absolute position
    ``n_key - n_query + i`` and sees the keys up to and including it.

    >>> causal_mask(2, 3).astype(int).tolist()
    [[1, 1, 0], [1, 1, 1]]
    """
    if n_query < 0 or n_key < 0:
        raise ValueError(f"causal_mask needs sizes >= 0, got n_query={n_query}, n_key={n_key}")
    if n_query > n_key:
        raise ValueError(f"causal_mask needs n_query <= n_key, got {n_query} > {n_key}")
    i = np.arange(n_query)[:, None] + (n_key - n_query)  # absolute query positions
    j = np.arange(n_key)[None, :]
    return j <= i  # (i, j)


def padding_mask(lengths: np.ndarray | list[int], n: int) -> np.ndarray:
    """Boolean key-padding mask of shape **(b, 1, 1, n)**: ``True`` on real tokens.

    Sequence ``b`` holds ``lengths[b]`` real tokens followed by padding. The
    mask hides the padded *keys* from every query; the singleton head and
    query axes make it broadcast against (b, h, i, j) scores. Combine it with
    a causal mask by ``&``. A sequence of length 0 gives fully masked rows
    (zero weights, see :func:`softmax`).

    >>> padding_mask([2, 3], 3)[:, 0, 0].astype(int).tolist()
    [[1, 1, 0], [1, 1, 1]]
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"lengths must be a 1-D array of integers, got {lengths!r}")
    if (lengths < 0).any() or (lengths > n).any():
        raise ValueError(f"lengths must lie in [0, {n}], got {lengths.tolist()}")
    keep = np.arange(n)[None, :] < lengths[:, None]  # (b, n)
    return keep[:, None, None, :]  # (b, 1, 1, n)


def additive_mask(bool_mask: np.ndarray) -> np.ndarray:
    """Boolean mask (True = keep) → float64 additive mask (0 = keep, -inf = forbidden).

    >>> additive_mask(np.array([True, False])).tolist()
    [0.0, -inf]
    """
    bool_mask = np.asarray(bool_mask)
    if bool_mask.dtype != np.bool_:
        raise ValueError(f"additive_mask expects a boolean mask, got dtype {bool_mask.dtype}")
    return np.where(bool_mask, 0.0, -np.inf)


def boolean_mask(additive: np.ndarray) -> np.ndarray:
    """Additive mask (0 = keep, -inf = forbidden) → boolean mask (True = keep).

    Only ``0`` and ``-inf`` are a mask; other finite values are a bias, and
    converting them would lose information, so they are refused.

    >>> boolean_mask(np.array([0.0, -np.inf])).tolist()
    [True, False]
    """
    additive = np.asarray(additive, dtype=np.float64)
    if not np.all((additive == 0.0) | np.isneginf(additive)):
        raise ValueError("boolean_mask expects an additive mask of only 0 and -inf values")
    return additive == 0.0
