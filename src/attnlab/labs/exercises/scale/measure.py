"""The sample the checker of exercise 6 draws from a learner's function, and its tolerances in
standard errors: each answer is computed once per function and arguments, for the cases and
the probes both."""

from __future__ import annotations

import math
import weakref

import numpy as np

from attnlab.labs.checker import Fn

ROWS, KEYS, SIGMAS = 400, 32, 5.0  # the checker's sample, and its tolerance in standard errors


def variance_tolerance(d: int, scaled: bool, rows: int = ROWS, keys: int = KEYS) -> float:
    """``SIGMAS`` standard errors of the sample variance of ``rows · keys`` scores q·k.

    Var(q·k) = d; E[(q·k)⁴] = 3d² + 6d, so one score's square has variance 2d² + 6d; two
    scores sharing a query have squares with covariance 2d. Over rows of ``keys`` scores
    sharing one query: SE = d·√((2 + (6 + 2(keys − 1))/d) / (rows·keys)); divided by √d,
    everything scales by 1/d.
    """
    se = d * math.sqrt((2 + (6 + 2 * (keys - 1)) / d) / (rows * keys))
    return SIGMAS * (se / d if scaled else se)


def frozen_tolerance(p: float, rows: int = ROWS) -> float:
    """``SIGMAS`` standard errors of the difference of two shares measured on ``rows`` rows each."""
    return SIGMAS * math.sqrt(2 * p * (1 - p) / rows) + 0.02


_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn -> its answers so far


def _stats(fn: Fn, d: int, scaled: bool, seed: int = 0) -> tuple[float, float]:
    """The learner's ``(variance, frozen)``, computed once per function and arguments (a
    simulation takes a tenth of a second, and the cases and probes ask again and again)."""
    seen = _SEEN.setdefault(fn, {})
    if (d, scaled, seed) not in seen:
        out = fn(d, scaled, np.random.default_rng(seed), rows=ROWS, keys=KEYS)
        variance, frozen = out  # a pair, or this raises and the case says so
        seen[d, scaled, seed] = float(variance), float(frozen)
    return seen[d, scaled, seed]
