"""Position schemes: none, learned absolute, sinusoidal, RoPE, ALiBi.

Dimension legend: ``b`` batch, ``t`` positions, ``h`` heads, ``i``/``j``
query/key positions, ``d`` width.

Two families, by where they act:
- *additive* schemes add a vector to each token embedding before the first
  block: learned absolute (a table, GPT-2) and sinusoidal (Vaswani et al. 2017);
- *relative* schemes act inside attention: RoPE rotates q and k (Su et al.
  2021), ALiBi adds a distance penalty to the scores (Press et al. 2022).

Conventions (shared with the NumPy reference, ``attnlab.reference.positions``):
sinusoidal PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same);
RoPE rotates interleaved pairs (2i, 2i+1) by angle p·10000^(-2i/d);
ALiBi adds -slope_h·(i - j) for j <= i, slopes 2^(-8h/H).
Left out: NTK/YaRN RoPE scaling, ALiBi for bidirectional attention.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_table(positions: Tensor, d: int) -> Tensor:
    """Sinusoidal encodings (t, d) for integer positions (t,), on their device."""
    dev = positions.device
    freq = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64, device=dev) / d)  # (d/2,)
    angle = positions.to(torch.float64)[:, None] * freq[None, :]  # (t, d/2)
    table = torch.zeros(len(positions), d, dtype=torch.float64, device=dev)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d // 2])
    return table.float()


def rope_rotate(x: Tensor, positions: Tensor) -> Tensor:
    """Rotate interleaved pairs of the last axis of x (..., t, d) by p·θ_i."""
    d = x.shape[-1]
    theta = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    angle = positions.to(torch.float64)[:, None] * theta[None, :]  # (t, d/2)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (..., t, d/2) each
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)  # (..., t, d/2, 2)
    return out.flatten(-2)  # (..., t, d)


def alibi_slopes(n_head: int) -> Tensor:
    """Per-head slopes: 2^(-8h/H) for H a power of two, else the paper's recipe."""

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (h + 1) for h in range(n)]

    if math.log2(n_head).is_integer():
        return torch.tensor(power_of_two(n_head))
    lower = 2 ** math.floor(math.log2(n_head))
    extra = power_of_two(2 * lower)[0::2][: n_head - lower]
    return torch.tensor(power_of_two(lower) + extra)


def alibi_bias(n_head: int, n_query: int, n_key: int, device: torch.device | None = None) -> Tensor:
    """Additive bias (h, i, j): -slope·(distance back); queries are the last i keys.

    Future keys get a positive distance penalty too, but the causal mask removes them.
    """
    return alibi_bias_from_slopes(alibi_slopes(n_head).to(device), n_query, n_key)


def alibi_bias_from_slopes(slopes: Tensor, n_query: int, n_key: int) -> Tensor:
    """``alibi_bias`` for given per-head slopes (h,), on their device and in their dtype."""
    offset = n_key - n_query
    i = torch.arange(n_query, device=slopes.device)[:, None] + offset
    j = torch.arange(n_key, device=slopes.device)[None, :]
    distance = (i - j).clamp(min=0).to(slopes.dtype)  # (i, j)
    return -slopes[:, None, None] * distance  # (h, i, j)


class AdditivePositions(nn.Module):
    """The vector added to each token embedding: a learned table or sinusoids.

    The sinusoids of the first ``rows`` positions are computed once, in float64,
    into a buffer that follows the model's device (not saved in checkpoints);
    positions beyond it (extrapolation: docs/experiments.md, "Position") are
    computed on the fly, on the same device. Callers pass the range of positions
    as Python integers, so no step ever waits on the device to learn how long the
    input is.
    """

    def __init__(self, scheme: str, rows: int, d: int) -> None:
        super().__init__()
        self.rows = rows
        self.d = d
        # Learned tables start from N(0, 1) like nn.Embedding; rows never reached in
        # training keep these untrained vectors (what the position experiment extrapolates).
        self.table = nn.Embedding(rows, d) if scheme == "learned" else None
        sines = sinusoidal_table(torch.arange(rows), d) if scheme == "sinusoidal" else None
        self.register_buffer("sines", sines, persistent=False)  # (rows, d) or None

    def forward(self, start: int, length: int) -> Tensor:
        """The vectors (length, d) of positions start … start + length - 1."""
        stop = start + length
        if self.table is not None:  # the model refuses positions past the table first
            return self.table.weight[start:stop]  # (length, d)
        if stop <= self.rows:
            return self.sines[start:stop]  # (length, d)
        positions = torch.arange(start, stop, device=self.sines.device)
        return sinusoidal_table(positions, self.d)  # (length, d), beyond the buffer
