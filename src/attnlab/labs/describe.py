"""Words for a failed case that no mistake probe recognised: the shape of the difference.

A :class:`Describer` looks at one failed case's two arrays, the learner's output ``got`` and
the reference's ``want`` (same shape), and answers with the fields of its catalogue message
when that message is true of them, else None: the output is the expected one transposed, with
its sign flipped, times a constant (×2, ÷√3, ...), normalised over the other axis, holding the
expected rows or entries in another order (``GENERIC``); for a mask, which region is wrong:
transposed, inverted, the queries at the start, only the square part right, how many future
keys shown and past keys hidden, or a finite value where -inf belongs (``MASKS``). An exercise
may bring its own (multi-head attention does: the heads in another order). The checker adds
the first true one to that case's reason, so every description is a statement about the very
output it follows.

Dimension legend: ``i`` query positions (rows), ``j`` key positions (columns).

Left out: differences that are not one of these shapes (the index and the numbers say those),
and guesses: a describer that is not exactly true of the arrays says nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Fields = dict[str, Any]


@dataclass(frozen=True)
class Describer:
    """A shape of difference: ``says(got, want)`` is its message's fields when true, else None."""

    key: str  # catalogue key of its message
    says: Callable[[np.ndarray, np.ndarray], Fields | None]


def describe(describers: tuple[Describer, ...], got: Any, want: Any) -> tuple[str, Fields] | None:
    """The first describer true of ``(got, want)``, as ``(key, fields)``; None when none is."""
    try:
        g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if g.shape != w.shape or g.size == 0 or _equal(g, w):
        return None
    for d in describers:
        with np.errstate(all="ignore"):
            try:
                fields = d.says(g, w)
            except Exception:  # noqa: BLE001 - a describer that cannot look says nothing
                fields = None
        if fields is not None:
            return d.key, fields
    return None


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True))


def _finite(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.isfinite(a).all() and np.isfinite(b).all())


# -- any array -------------------------------------------------------------------------------


def _transposed(g: np.ndarray, w: np.ndarray) -> Fields | None:
    if g.ndim < 2 or g.shape[-1] != g.shape[-2] or g.shape[-1] < 2:
        return None
    return {} if _equal(g, np.swapaxes(w, -1, -2)) else None


def _sign(g: np.ndarray, w: np.ndarray) -> Fields | None:
    return {} if _finite(g, w) and np.abs(w).max() > 0 and _equal(g, -w) else None


def factor_name(c: float) -> str:
    """A constant as a learner would recognise it: "×2", "÷√3", "×0.37"."""
    for n in range(2, 4097):
        root = math.isqrt(n) ** 2 != n  # √n for n not a perfect square (√4 is 2, said as 2)
        for value, name in ((n, f"×{n}"), (1 / n, f"÷{n}"),
                            (math.sqrt(n), f"×√{n}") if root else (None, ""),
                            (1 / math.sqrt(n), f"÷√{n}") if root else (None, "")):
            if value is not None and math.isclose(c, value, rel_tol=1e-6):
                return name
    return f"×{c:.4g}"


def _factor(g: np.ndarray, w: np.ndarray) -> Fields | None:
    if g.size < 2 or not _finite(g, w) or np.abs(w).max() == 0:  # one number: always a factor
        return None
    c = float(np.sum(g * w) / np.sum(w * w))  # the least-squares constant
    if c == 0 or math.isclose(c, 1.0, rel_tol=1e-6) or math.isclose(c, -1.0, rel_tol=1e-6):
        return None
    return {"factor": factor_name(c)} if _equal(g, c * w) else None


def _sums_to_one(x: np.ndarray, axis: int) -> bool:
    return bool(np.allclose(x.sum(axis=axis), 1.0, rtol=1e-6, atol=1e-9))


def _other_axis(g: np.ndarray, w: np.ndarray) -> Fields | None:
    """Every slice of ``got`` sums to one along one axis, of ``want`` along another only."""
    if g.ndim < 2 or not _finite(g, w) or (g < 0).any():
        return None
    ones = [a for a in range(g.ndim) if g.shape[a] > 1]
    mine = [a for a in ones if _sums_to_one(g, a)]
    want = [a for a in ones if _sums_to_one(w, a)]
    if len(mine) == 1 and len(want) == 1 and mine != want:
        return {"got": mine[0], "want": want[0]}
    return None


def _rows_sorted(x: np.ndarray) -> np.ndarray:
    flat = np.round(x.reshape(-1, x.shape[-2], x.shape[-1]), 9)  # (lead, i, j)
    return np.stack([m[np.lexsort(m.T[::-1])] for m in flat])


def _rows_reordered(g: np.ndarray, w: np.ndarray) -> Fields | None:
    if g.ndim < 2 or g.shape[-2] < 2 or not _finite(g, w):
        return None
    return {} if _equal(_rows_sorted(g), _rows_sorted(w)) else None


def _entries_reordered(g: np.ndarray, w: np.ndarray) -> Fields | None:
    if g.size < 2 or not _finite(g, w):
        return None
    return {} if _equal(np.sort(g, axis=None), np.sort(w, axis=None)) else None


GENERIC = (
    Describer("describe.transposed", _transposed),
    Describer("describe.sign", _sign),
    Describer("describe.factor", _factor),
    Describer("describe.other_axis", _other_axis),
    Describer("describe.rows_reordered", _rows_reordered),
    Describer("describe.entries_reordered", _entries_reordered),
)


# -- additive masks (0 = may attend, -inf = hidden) ------------------------------------------


def _masks(g: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(hidden in got, hidden in want)`` when both are additive masks: zeros and -inf in the
    reference; zeros and one negative value (or -inf) in the learner's output."""
    if w.ndim != 2 or not (np.isneginf(w) | (w == 0)).all() or np.isnan(g).any():
        return None
    hidden = g < 0
    if not ((g == 0) | hidden).all() or len(np.unique(g[hidden])) > 1:
        return None
    return hidden, np.isneginf(w)


def _mask_finite(g: np.ndarray, w: np.ndarray) -> Fields | None:
    both = _masks(g, w)
    if both is None or not np.array_equal(*both) or not both[0].any():
        return None
    value = float(g[both[0]][0])
    return {"value": number(value)} if np.isfinite(value) else None


def number(value: float) -> str:
    """A number as code writes it: -1e9, -10000, 0.75, -1.79769e308."""
    text = f"{value:.6g}"
    mantissa, _, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else text


def _mask_transposed(g: np.ndarray, w: np.ndarray) -> Fields | None:
    both = _masks(g, w)
    if both is None or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        return None
    return {} if np.array_equal(both[0], both[1].T) else None


def _mask_inverted(g: np.ndarray, w: np.ndarray) -> Fields | None:
    both = _masks(g, w)
    return {} if both is not None and np.array_equal(both[0], ~both[1]) else None


def _mask_at_start(g: np.ndarray, w: np.ndarray) -> Fields | None:
    n_query, n_key = w.shape
    if n_query >= n_key:
        return None
    start = np.triu(np.ones((n_query, n_key), dtype=bool), 1)  # query i at position i
    both = _masks(g, w)
    if both is not None and np.array_equal(both[0], start):
        return {"n_query": n_query, "n_key": n_key}
    return None


def _mask_square_only(g: np.ndarray, w: np.ndarray) -> Fields | None:
    """Right on the square of the last ``n_query`` keys, every earlier key hidden: a square
    causal mask padded with -inf for the past the queries may all see."""
    n_query, n_key = w.shape
    both = _masks(g, w)
    if both is None or n_query >= n_key:
        return None
    mine, want = both
    past = n_key - n_query
    if np.array_equal(mine[:, past:], want[:, past:]) and mine[:, :past].all():
        return {"n_query": n_query, "past": past}
    return None


def _regions(g: np.ndarray, w: np.ndarray) -> tuple[int, int] | None:
    """``(shown, hidden)``: how many entries the mask shows that must be hidden (the future)
    and hides that must be shown (the past and the query's own position)."""
    both = _masks(g, w)
    if both is None:
        return None
    mine, want = both
    return int((want & ~mine).sum()), int((~want & mine).sum())


def _future_shown(g: np.ndarray, w: np.ndarray) -> Fields | None:
    counts = _regions(g, w)
    return {"count": counts[0]} if counts and counts[0] and not counts[1] else None


def _past_hidden(g: np.ndarray, w: np.ndarray) -> Fields | None:
    counts = _regions(g, w)
    return {"count": counts[1]} if counts and counts[1] and not counts[0] else None


def _both_wrong(g: np.ndarray, w: np.ndarray) -> Fields | None:
    counts = _regions(g, w)
    return {"shown": counts[0], "hidden": counts[1]} if counts and all(counts) else None


MASKS = (
    Describer("describe.mask_finite", _mask_finite),
    Describer("describe.mask_transposed", _mask_transposed),
    Describer("describe.mask_inverted", _mask_inverted),
    Describer("describe.mask_at_start", _mask_at_start),
    Describer("describe.mask_square_only", _mask_square_only),
    Describer("describe.mask_future_shown", _future_shown),
    Describer("describe.mask_past_hidden", _past_hidden),
    Describer("describe.mask_both_wrong", _both_wrong),
)
