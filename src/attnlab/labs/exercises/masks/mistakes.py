"""The mistake probes of exercise 4 (masks): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same

INF = np.inf


def _keep(n_query: int, n_key: int, shift: int = 0, offset: bool = True) -> np.ndarray:
    i = np.arange(n_query)[:, None] + ((n_key - n_query) if offset else 0)
    return np.arange(n_key)[None, :] <= i + shift


def _additive(keep: np.ndarray) -> np.ndarray:
    return np.where(keep, 0.0, -INF)


def _fp16(fn: Fn) -> np.ndarray:
    return np.asarray(fn(3, 3, np.float16))


def _fp64(fn: Fn) -> np.ndarray:
    return np.asarray(fn(3, 3), dtype=np.float64)


def _hidden_hold(fn: Fn, value: float) -> bool:
    """The float64 mask is right but for its hidden entries, which all hold ``value``."""
    return same(_fp64(fn), np.where(_keep(3, 3), 0.0, value))


def _square_only(fn: Fn) -> bool:
    """Right when queries and keys are as many; with fewer queries (a cache), the causal
    square of the last keys alone: the earlier keys every query may see hidden, or left out."""
    square = _additive(_keep(2, 2))
    return same(fn(4, 4), _additive(_keep(4, 4))) and (
        same(fn(2, 5), np.concatenate([np.full((2, 3), -INF), square], axis=1))
        or same(fn(2, 5), square))


def _nan_where_kept(m: np.ndarray) -> bool:
    """NaN exactly where keys may be seen and -inf where they may not: 0 × -inf and 1 × -inf."""
    m = np.asarray(m, dtype=np.float64)
    keep = _keep(3, 3)
    return m.shape == keep.shape and bool(np.isnan(m[keep]).all() and np.isneginf(m[~keep]).all())


MISTAKES = (
    Mistake("masks.mistake.diagonal_hidden", lambda fn: same(fn(4, 4), _additive(_keep(4, 4, -1)))),
    Mistake("masks.mistake.next_visible", lambda fn: same(fn(4, 4), _additive(_keep(4, 4, 1)))),
    Mistake(
        "masks.mistake.minus_1e9",
        lambda fn: not np.isnan(_fp16(fn).astype(np.float64)).any() and _hidden_hold(fn, -1e9),
    ),
    Mistake(
        "masks.mistake.float16_nan",
        lambda fn: _nan_where_kept(_fp16(fn)) and _hidden_hold(fn, -1e9),
    ),
    Mistake("masks.mistake.times_inf", lambda fn: _nan_where_kept(_fp64(fn))),
    Mistake(
        "masks.mistake.finite_min",
        lambda fn: _hidden_hold(fn, np.finfo(np.float64).min),
    ),
    Mistake("masks.mistake.boolean", lambda fn: np.asarray(fn(3, 3)).dtype == np.bool_),
    Mistake(  # a list has no dtype: that it comes back float64 is np.asarray's doing, not theirs
        "masks.mistake.ignores_dtype",
        lambda fn: isinstance(fn(3, 3, np.float16), np.ndarray) and _fp16(fn).dtype == np.float64
        and same(fn(3, 3), _additive(_keep(3, 3))),
    ),
    Mistake("masks.mistake.list", lambda fn: isinstance(fn(3, 3), list | tuple)),
    Mistake("masks.mistake.transposed",
            lambda fn: same(fn(4, 4), _additive(_keep(4, 4).T))),
    Mistake("masks.mistake.square_only", _square_only),
    Mistake(
        "masks.mistake.no_offset",
        lambda fn: (
            same(fn(4, 4), _additive(_keep(4, 4)))
            and same(fn(2, 4), _additive(_keep(2, 4, offset=False)))
        ),
    ),
    Mistake("masks.mistake.inverted", lambda fn: same(fn(4, 4), np.where(_keep(4, 4), -INF, 0.0))),
    Mistake(
        "masks.mistake.multiplicative",
        lambda fn: np.asarray(fn(4, 4)).dtype != np.bool_ and same(fn(4, 4), _keep(4, 4) * 1.0),
    ),
)
