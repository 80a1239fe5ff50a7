"""The layer the cost sweep measures (``attnlab.timing.cost``), and how it is timed.

One causal multi-head self-attention layer with its q/k/v/o projections and a chosen
kernel (``KINDS``); its forward timed alone (``measure_time``) or, in the sweep, every
size in interleaved rounds (``time_interleaved``), the minimum over the rounds with the
spread beside it (``timing_summary``). The module docstring of ``attnlab.timing.cost``
says what is measured and why.

Dimension legend: ``b`` batch, ``n`` positions, ``h`` heads, ``d`` head width,
``m`` model width (= h·d).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn.attention import attention
from attnlab.nn.memeff import memory_efficient_attention
from attnlab.timing.rounds import clock, cpu_threads, interleaved_rounds

KINDS = ("naive", "sdpa", "memeff")


class AttentionLayer(nn.Module):
    """Causal multi-head self-attention with q/k/v/o projections and a chosen kernel."""

    def __init__(self, kind: str, d_model: int = 512, n_head: int = 8):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown attention kind {kind!r}; choose one of {', '.join(KINDS)}")
        if d_model % n_head:
            raise ValueError(f"d_model={d_model} is not divisible by n_head={n_head}")
        self.kind, self.n_head = kind, n_head
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x: Tensor) -> Tensor:
        b, n, m = x.shape
        h, d = self.n_head, m // self.n_head
        q, k, v = (f(x).view(b, n, h, d).transpose(1, 2) for f in (self.q, self.k, self.v))
        # q, k, v: (b, h, n, d)
        if self.kind == "naive":
            out, _ = attention(q, k, v, causal=True, backend="naive")
        elif self.kind == "sdpa":
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            out = memory_efficient_attention(q, k, v, causal=True)
        return self.o(out.transpose(1, 2).reshape(b, n, m))  # (b, n, m)


def score_matrix_bytes(n: int, n_head: int = 8) -> int:
    """Bytes of one float32 n×n score matrix per head, times heads: ``4·h·n²``.

    >>> score_matrix_bytes(16384, 8) == 8 * 2**30
    True
    """
    return 4 * n_head * n * n


def check_sizes(sizes: Sequence[int], repeats: int) -> None:
    """Sizes and repeats the sweep can take: a ValueError naming the bad one."""
    if not sizes or any(not isinstance(n, int) or n < 1 for n in sizes):
        raise ValueError(f"sizes must be positive integers, got {list(sizes)}")
    if repeats < 0:
        raise ValueError(f"repeats must be >= 0, got {repeats}")


def measure_time(
    kind: str, n: int, d_model: int = 512, n_head: int = 8, repeats: int = 3,
    device: str = "cpu", seed: int = 0,
) -> dict:
    """Forward-only time of one layer at n positions, in this process (no memory limit)."""
    check_sizes([n], repeats)
    torch.manual_seed(seed)
    layer = AttentionLayer(kind, d_model, n_head).to(device)
    x = torch.randn(1, n, d_model, device=device)  # (b, n, m)
    record = {"kind": kind, "n": n, "d_model": d_model, "n_head": n_head, "device": device,
              "timed": "forward", "repeats": repeats, "nn_bytes": score_matrix_bytes(n, n_head)}
    record.update(time_layer(layer, x, repeats, warm_up=True))
    return record


def _time_once(layer: AttentionLayer, x: Tensor) -> tuple[float, float]:
    """Seconds of one forward of the layer, and of its four projections alone."""
    with torch.no_grad():
        start = clock(x.device)
        layer(x)
        total = clock(x.device) - start
        spent = 0.0
        for linear in (layer.q, layer.k, layer.v, layer.o):
            start = clock(x.device)
            linear(x)
            spent += clock(x.device) - start
    return total, spent


def timing_summary(totals: Sequence[float], projections: Sequence[float]) -> dict:
    """Seconds of the repeats as the record's figures: minimum in ms, spread = max / min − 1.

    >>> s = timing_summary([0.002, 0.003, 0.002], [0.001, 0.001, 0.001])
    >>> s["total_ms"], round(s["total_spread"], 3), s["proj_spread"]
    (2.0, 0.5, 0.0)
    """
    return {"total_ms": 1e3 * min(totals), "total_spread": max(totals) / min(totals) - 1,
            "times_ms": [1e3 * t for t in totals],
            "proj_ms": 1e3 * min(projections),
            "proj_spread": max(projections) / min(projections) - 1,
            "proj_times_ms": [1e3 * t for t in projections]}


def time_layer(layer: AttentionLayer, x: Tensor, repeats: int, warm_up: bool) -> dict:
    """``repeats`` readings of one size back to back (a lone measurement; the sweep
    interleaves sizes instead, ``time_interleaved``)."""
    if warm_up:
        _time_once(layer, x)
    readings = [_time_once(layer, x) for _ in range(repeats)]
    return timing_summary([t for t, _ in readings], [p for _, p in readings])


def time_interleaved(records: list[dict], repeats: int, *, d_model: int = 512,
                     n_head: int = 8, device: str = "cpu", threads: int | None = 1,
                     seed: int = 0) -> None:
    """Time every completed record's layer ``repeats`` times, in rounds, and write the
    figures (``timing_summary``) into the records.

    One warm-up forward of every size first; then each round times every
    (n, kind) once, sizes ascending in even rounds and descending in odd ones
    (``attnlab.timing.rounds``), so neither a burst of load nor a slow drift (a
    warming machine) lands on one size's readings alone. Sizes are those that
    completed under the memory budget, so what is timed here fits it.
    """
    done = sorted((r for r in records if r["status"] == "ok"), key=lambda r: (r["n"], r["kind"]))
    if not repeats or not done:
        return
    with cpu_threads(threads, device):
        cases = []
        for r in done:
            torch.manual_seed(seed)
            layer = AttentionLayer(r["kind"], d_model, n_head).to(device)
            x = torch.randn(1, r["n"], d_model, device=device)  # (b, n, m)
            cases.append(functools.partial(_time_once, layer, x))
        readings = interleaved_rounds(cases, repeats, alternate=True)
    for r, case in zip(done, readings, strict=True):
        r.update(timing_summary([total for total, _ in case], [proj for _, proj in case]),
                 repeats=repeats, timing="interleaved rounds in the sweep's process")
