"""Comparisons a case or a probe makes, each answering with a catalogue key, never a sentence.

``close`` is a case's verdict (None or a :class:`~attnlab.labs.checker.Fail` that says how the
arrays differ: shape, dtype, NaN, the largest difference and where); ``same`` is a probe's
question "does the learner's output equal this one?".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnlab.labs.checker import Fail

RTOL, ATOL = 1e-7, 1e-9  # float64 against float64: agreement to rounding, not to a method


def close(got: Any, want: Any, rtol: float = RTOL, atol: float = ATOL) -> Fail | None:
    """None when ``got`` equals ``want`` within ``|got - want| <= atol + rtol·|want|``."""
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        kind = type(got).__name__  # an ndarray of objects or text comes back as one by that name
        return Fail("fail.not_numbers" if kind == "ndarray" else "fail.not_array", {"kind": kind})
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        return Fail("fail.shape", {"got": tuple(g.shape), "want": tuple(w.shape)})
    bad_nan = np.isnan(g) & ~np.isnan(w)
    if bad_nan.any():
        return Fail("fail.nan", {"index": _index(np.argwhere(bad_nan)[0])}, g, w)
    if np.array_equal(np.isposinf(g), np.isposinf(w)) and np.array_equal(
            np.isneginf(g), np.isneginf(w)):
        finite = np.isfinite(w)
        gap = np.where(finite, np.abs(g - w), 0.0)
        allowed = atol + rtol * np.abs(np.where(finite, w, 0.0))
        if (gap <= allowed).all():
            return None
        at = np.unravel_index(int(np.argmax(gap - allowed)), gap.shape)
        return Fail("fail.mismatch", {"diff": float(gap[at]), "index": _index(at),
                                      "got": float(g[at]), "want": float(w[at]),
                                      "tol": f"{rtol:g}"}, g, w)
    at = np.argwhere(np.isinf(g) != np.isinf(w))[0]
    return Fail("fail.inf", {"index": _index(at), "got": float(g[tuple(at)]),
                             "want": float(w[tuple(at)])}, g, w)


def same(got: Any, want: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True when the two arrays have one shape and equal entries (NaN equal to NaN)."""
    try:
        g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return g.shape == w.shape and bool(np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))


def pair(out: Any) -> Fail | None:
    """None when ``out`` is a pair ``(output, weights)``."""
    if isinstance(out, tuple | list) and len(out) == 2:
        return None
    return Fail("fail.not_pair", {"kind": type(out).__name__})


def _index(at: Any) -> tuple[int, ...]:
    return tuple(int(a) for a in at)
