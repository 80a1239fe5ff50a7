"""Position schemes in NumPy float64: sinusoidal, RoPE, ALiBi.

Dimension legend: ``h`` heads, ``i`` query positions, ``j`` key positions,
``n`` positions, ``d`` width (model width for sinusoids, head width for RoPE).

The conventions below are the package's; the torch modules follow the same.

- Sinusoidal (Vaswani et al. 2017, §3.5):
  ``PE[p, 2i] = sin(p / 10000^(2i/d))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d))``.
- RoPE (Su et al. 2021), *interleaved* pairs: dims (2i, 2i+1) at position p
  are rotated by the angle ``p * 10000^(-2i/d)``.
- ALiBi (Press et al. 2022): score bias ``-slope_h * (i - j)`` for ``j <= i``.

Left out: RoPE's "half-split" layout (dims i and i + d/2 paired, as in
GPT-NeoX / Llama), NTK or other context-extension rescalings, and learned
absolute tables (a torch parameter, not a formula).
"""

from __future__ import annotations

import math

import numpy as np

BASE = 10000.0  # the paper's wavelength base; a constant, not state


def _frequencies(d: int) -> np.ndarray:
    """Angular frequency of each pair (2i, 2i+1): ``10000^(-2i/d)``, shape (d/2,)."""
    if d <= 0 or d % 2:
        raise ValueError(f"width d must be a positive even number, got {d}")
    return BASE ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def sinusoidal(n_positions: int, d: int, offset: int = 0) -> np.ndarray:
    """Sinusoidal position encoding, shape (n, d), for positions ``offset .. offset + n - 1``.

    Each pair of columns is a point on a circle turning at its own frequency,
    so ``PE(p + k)`` is ``PE(p)`` rotated by the angle ``k * freq`` in every
    pair: a fixed linear map that depends on k only (the property the
    explorer's previous-word head is built on).

    >>> sinusoidal(2, 2).round(4).tolist()    # p=0: (sin 0, cos 0); p=1: (sin 1, cos 1)
    [[0.0, 1.0], [0.8415, 0.5403]]
    """
    if n_positions < 0 or offset < 0:
        raise ValueError(f"need n_positions >= 0 and offset >= 0, got {n_positions}, {offset}")
    freq = _frequencies(d)  # (d/2,)
    p = np.arange(offset, offset + n_positions, dtype=np.float64)
    angle = p[:, None] * freq[None, :]  # (n, d/2)
    pe = np.empty((n_positions, d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def rope(x: np.ndarray, positions: np.ndarray | list[int]) -> np.ndarray:
    """Rotary position embedding of x shaped (..., n, d) at the given n positions.

    Pair (x0, x1) = dims (2i, 2i+1) becomes
    ``(x0 cos θ - x1 sin θ, x0 sin θ + x1 cos θ)`` with ``θ = p * 10000^(-2i/d)``.
    Applied to q and k (never v), after the projections and before the scores:
    then ``rope(q, p) · rope(k, p')`` depends on ``p - p'`` only, because a
    rotation by a and one by b leave the angle ``a - b`` between the vectors.
    """
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"rope expects x shaped (..., n, d), got shape {x.shape}")
    n, d = x.shape[-2:]
    if positions.shape != (n,):
        raise ValueError(f"rope needs one position per row: positions {positions.shape}, n={n}")
    angle = positions[:, None] * _frequencies(d)[None, :]  # (n, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def alibi_slopes(n_head: int) -> np.ndarray:
    """Per-head ALiBi slopes, shape (h,).

    For H a power of two: the geometric sequence ``2^(-8h/H)``, h = 1..H
    (8 heads: 1/2, 1/4, ..., 1/256). Otherwise the paper's recipe: the slopes
    for the closest lower power of two, then every other slope of the next
    power of two, until there are H.

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    """
    if n_head <= 0:
        raise ValueError(f"n_head must be positive, got {n_head}")

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    if n_head & (n_head - 1) == 0:
        return np.array(power_of_two(n_head), dtype=np.float64)
    lower = 2 ** math.floor(math.log2(n_head))
    extra = power_of_two(2 * lower)[0::2][: n_head - lower]
    return np.array(power_of_two(lower) + extra, dtype=np.float64)


def alibi_bias(n_head: int, n_query: int, n_key: int) -> np.ndarray:
    """ALiBi score bias, shape (h, i, j): ``-slope_h * (i - j)`` for ``j <= i``, else 0.

    Queries are the *last* ``n_query`` of the ``n_key`` positions (as in
    :func:`attnlab.reference.softmax.causal_mask`), so query i sits at
    ``n_key - n_query + i``. The diagonal is 0. Keys after the query get 0:
    they are the causal mask's business, not the bias's.
    """
    if n_query < 0 or n_key < 0 or n_query > n_key:
        raise ValueError(f"alibi_bias needs 0 <= n_query <= n_key, got {n_query}, {n_key}")
    i = np.arange(n_query)[:, None] + (n_key - n_query)  # absolute query positions
    j = np.arange(n_key)[None, :]
    distance = np.maximum(i - j, 0).astype(np.float64)  # (i, j)
    return -alibi_slopes(n_head)[:, None, None] * distance[None]  # (h, i, j)
