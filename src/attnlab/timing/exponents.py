"""Least-squares lines through measurements: log-log exponents, and the range a timing
spread allows.

A sweep row holds, per size n, the minimum time over its interleaved rounds and the spread
beside it (``total_spread`` = max/min − 1). ``fit_exponent`` is the least-squares slope of
log(value) against log(n); ``exponent_range`` is the lowest and highest slope when each point
may lie anywhere between its minimum and minimum × (1 + spread), which is what lets a timing
claim be decided beyond its spread (``attnlab.experiments.cost``).

``line_fit`` is NumPy's least-squares line with its R², and ``loglog_exponent`` the slope of
ln y on ln x through it: the fits of the recurrence experiment (the decay of a gradient's
reach, the growth of the dependent steps with T). The two slopes agree to rounding, not to
the last bit, and each kind of record keeps the one it was made with.

Left out: weighting points by their spread, and fits over anything but the last few rows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np


def fit_exponent(ns: Sequence[float], values: Sequence[float | None], last: int = 4) -> float:
    """Least-squares slope of log(value) against log(n) over the last ``last`` completed points.

    ``None`` values (rows that did not complete) are skipped.

    >>> round(fit_exponent([1, 2, 4, 8], [3, 12, 48, 192]), 6)
    2.0
    """
    if len(ns) != len(values):
        raise ValueError(f"ns and values differ in length: {len(ns)} != {len(values)}")
    points = [(n, v) for n, v in zip(ns, values, strict=True) if v is not None][-last:]
    if len(points) < 2:
        raise ValueError(f"need at least two completed points to fit, got {len(points)}")
    if any(n <= 0 or v <= 0 for n, v in points):
        raise ValueError(f"cannot fit a log-log slope through non-positive points {points}")
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(v) for _, v in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    if spread == 0:
        raise ValueError("cannot fit a slope: all n are equal")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


def exponent_range(ns: Sequence[float], lows: Sequence[float | None],
                   highs: Sequence[float | None], last: int = 4) -> list[float]:
    """``[lowest, highest]`` least-squares log-log slope over the last ``last`` completed
    points when each point may lie anywhere in ``[low, high]``.

    The slope is ``Σ w_i·log y_i`` with ``w_i = (x_i − x̄) / Σ(x − x̄)²``, so it is
    largest with the high end where ``w_i > 0`` and the low end elsewhere.

    >>> [round(e, 6) for e in exponent_range([1, 2], [1, 4], [1, 4])]
    [2.0, 2.0]
    >>> [round(e, 6) for e in exponent_range([1, 2], [1, 4], [2, 8])]
    [1.0, 3.0]
    """
    points = [(n, lo, hi) for n, lo, hi in zip(ns, lows, highs, strict=True)
              if lo is not None and hi is not None][-last:]
    if len(points) < 2 or any(n <= 0 or lo <= 0 or hi < lo for n, lo, hi in points):
        raise ValueError(f"need at least two completed positive ranges to fit, got {points}")
    xs = [math.log(n) for n, _, _ in points]
    mx = statistics.fmean(xs)
    spread = sum((x - mx) ** 2 for x in xs)
    if spread == 0:
        raise ValueError("cannot fit a slope: all n are equal")
    weights = [(x - mx) / spread for x in xs]
    least = sum(w * math.log(lo if w > 0 else hi) for w, (_, lo, hi) in zip(weights, points,
                                                                           strict=True))
    most = sum(w * math.log(hi if w > 0 else lo) for w, (_, lo, hi) in zip(weights, points,
                                                                          strict=True))
    return [least, most]


def line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x (``np.polyfit``) and R² of that line (1 for a constant y).

    >>> line_fit(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 5.0]))[1]
    1.0
    """
    slope, intercept = np.polyfit(x, y, 1)
    total = float(np.sum((y - y.mean()) ** 2))
    resid = float(np.sum((y - (slope * x + intercept)) ** 2))
    return float(slope), 1.0 if total == 0 else 1 - resid / total


def loglog_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Slope of ln y on ln x over every point (``line_fit``).

    >>> round(loglog_exponent([32, 64, 128], [32, 64, 128]), 6)
    1.0
    >>> abs(round(loglog_exponent([32, 64], [5, 5]), 6))
    0.0
    """
    return line_fit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)))[0]


MIN_REPEATS = 3  # readings per size below which a time exponent has no range (one stopwatch)


def time_range(rows: Sequence[dict], key: str = "total", last: int = 4) -> list[float] | None:
    """``exponent_range`` of the ``key`` ms (``total`` or ``proj``) of completed ``rows``
    from each one's minimum and spread; None when timed fewer than ``MIN_REPEATS`` times
    (no spread to decide beyond) or too few rows completed."""
    if any((r.get("repeats") or 0) < MIN_REPEATS or r.get(f"{key}_spread") is None
           for r in rows):
        return None
    lows = [r.get(f"{key}_ms") for r in rows]
    highs = [None if lo is None else lo * (1 + r[f"{key}_spread"]) for lo, r in zip(lows, rows,
                                                                                   strict=True)]
    try:
        return exponent_range([r["n"] for r in rows], lows, highs, last)
    except ValueError:
        return None


def exponents(records: Sequence[dict], last: int = 4) -> dict[str, dict[str, Any]]:
    """Per kind: fitted time and memory exponents (None where they cannot be fitted), and
    ``time_range``, the time exponents the timing spread allows (``time_range``)."""
    fitted: dict[str, dict[str, Any]] = {}
    for kind in dict.fromkeys(r["kind"] for r in records):
        rows = [r for r in records if r["kind"] == kind and r["status"] == "ok"]
        fitted[kind] = {}
        for name, key in (("time", "total_ms"), ("memory", "peak_bytes")):
            try:
                fitted[kind][name] = fit_exponent([r["n"] for r in rows],
                                                  [r.get(key) for r in rows], last)
            except ValueError:
                fitted[kind][name] = None
        fitted[kind]["time_range"] = time_range(rows, "total", last)
    return fitted
