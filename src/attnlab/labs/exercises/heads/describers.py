"""Shapes of difference of exercise 5 (heads), tried before the generic ones when no probe
recognises a mistake."""

from __future__ import annotations

import itertools
import math

import numpy as np

from attnlab import reference as ref
from attnlab.labs.compare import same
from attnlab.labs.describe import Describer
from attnlab.labs.exercises.heads.cases import _mha, _random_inputs


def _split(x: np.ndarray, w: np.ndarray, h: int, straight: bool) -> np.ndarray:
    b, n, d = x.shape
    y = x @ w.T  # (b, n, d)
    if straight:  # reshaped as if the heads came first: heads and positions mixed
        return y.reshape(b, h, n, d // h)
    return y.reshape(b, n, h, d // h).transpose(0, 2, 1, 3)  # (b, h, n, d_k)


def _head_outputs(x, ws, h, straight=False) -> np.ndarray:
    q, k, v = (_split(x, w, h, straight) for w in ws[:3])
    return ref.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(x.shape[-1] // h)) @ v


def _heads_of(want: np.ndarray):
    """The random case whose expected output ``want`` is, as ``(x, ws, h)``; None if none."""
    return next(((x, ws, h) for x, ws, h in _random_inputs() if same(want, _mha(x, *ws, h))), None)


def _heads_order(got: np.ndarray, want: np.ndarray) -> dict | None:
    """The heads' outputs are right but concatenated in another order."""
    if (found := _heads_of(want)) is None:
        return None
    x, ws, h = found
    heads = _head_outputs(x, ws, h)  # (b, h, n, d_k)
    for order in itertools.permutations(range(h)):
        if list(order) != list(range(h)) and same(got, _merged_as(heads[:, order], x) @ ws[3].T):
            return {"order": ", ".join(map(str, order)), "last": h - 1}
    return None


def _heads_positions(got: np.ndarray, want: np.ndarray) -> dict | None:
    """q, k and v were reshaped straight from (b, n, d) to (b, H, n, d_k)."""
    if (found := _heads_of(want)) is None:
        return None
    x, ws, h = found
    heads = _head_outputs(x, ws, h, straight=True)  # (b, h, n, d_k), positions mixed in
    merges = (_merged_as(heads, x), heads.reshape(x.shape))  # transposed back, or straight
    return {"h": h} if any(same(got, m @ ws[3].T) for m in merges) else None


def _merged_as(heads: np.ndarray, x: np.ndarray) -> np.ndarray:
    return heads.transpose(0, 2, 1, 3).reshape(x.shape)  # (b, n, h * d_k)


DESCRIBERS = (
    Describer("describe.heads_order", _heads_order),
    Describer("describe.heads_positions", _heads_positions),
)
