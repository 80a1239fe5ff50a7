"""Memory-efficient attention: tiles, an online softmax, and a recomputing backward.

    out = softmax(Q Kᵀ / √d_k + B + M) V

computed one (block_q × block_k) tile of scores at a time, so that no (i, j)
tensor larger than a tile ever exists per (batch, head). Each query block keeps
a running row maximum ``m``, a running denominator ``l`` and a running
numerator ``acc``; a new key tile rescales them by ``exp(m_old − m_new)``
(Milkman & Gimelshein 2018, "Online normalizer calculation for softmax";
Rabe & Staats 2021, "Self-attention does not need O(n²) memory"; Dao et al.
2022, "FlashAttention"). The forward saves q, k, v, out and the per-row
log-sum-exp ``L = m + log l``; the backward recomputes each tile's
probabilities ``P = exp(S − L)`` and uses the FlashAttention identities

    D  = rowsum(dO ∘ O)          dV += Pᵀ dO        dP = dO Vᵀ
    dS = P ∘ (dP − D)            dQ += dS K / √d_k  dK += dSᵀ Q / √d_k

so memory stays linear in the number of positions in both directions.

Dimension legend: ``b`` batch, ``h`` heads, ``i`` query positions, ``j`` key
positions, ``d`` head width; ``bq``/``bk`` the rows/columns of one tile.

Causal means the queries are the *last* i of the j positions (as with a KV
cache, see ``attnlab.nn.attention.causal_mask``); tiles wholly above the
diagonal are skipped. ALiBi (Press et al. 2022) comes either as a full bias
tensor (sliced per tile; memory is then that tensor's) or, linear in memory,
as per-head ``alibi_slopes``: the tile's bias ``−slope_h · |pos_i − j|`` is
computed on the fly (``pos_i = n_key − n_query + i``). With ``causal`` only
``j ≤ pos_i`` is seen, which is the paper's ``−slope_h · (pos_i − j)``; without
it the penalty is symmetric in distance (our choice: the paper is causal only).

Precision: with half-precision inputs (bf16 autocast) the matmuls run in the
inputs' dtype, but the running maximum, denominator, numerator, ``L`` and the
gradient accumulators are fp32, as in FlashAttention: a bf16 running sum over
thousands of keys would lose the small terms. The output is cast back at the end.

Left out: dropout, boolean masks other than causal, gradients of the bias or
the slopes (they are fixed), double backward, and any fused kernel: this is
PyTorch tensor code looping over tiles in Python, written to be read.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable


def memory_efficient_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    causal: bool = True,
    bias: Tensor | None = None,
    alibi_slopes: Tensor | None = None,
    scale: bool = True,
    block_q: int = 128,
    block_k: int = 128,
) -> Tensor:
    """Exact attention in tiles with linear memory; equals the naive kernel.

    Args:
        q: (b, h, i, d) queries.  k: (b, h, j, d) keys.  v: (b, h, j, d_v) values.
        causal: forbid keys after each query (queries are the last i of the j).
        bias: optional additive scores broadcastable to (b, h, i, j); sliced per
            tile (no gradient flows to it).
        alibi_slopes: optional (h,) ALiBi slopes; each tile's bias is computed on
            the fly, so memory stays linear (no gradient flows to them).
        scale: divide scores by √d.
        block_q, block_k: tile rows and columns.

    Returns:
        (b, h, i, d_v). Rows whose every key is forbidden (possible only through
        ``-inf`` in ``bias``) are zeros, as in ``attnlab.nn.attention``.
    """
    _check(q, k, v, causal, block_q, block_k)
    b, h, n_query, _ = q.shape
    n_key = k.shape[-2]
    if bias is not None:
        full = (b, h, n_query, n_key)
        try:
            shape = torch.broadcast_shapes(bias.shape, full)
        except RuntimeError:
            shape = None
        if shape != torch.Size(full):
            raise ValueError(f"bias of shape {tuple(bias.shape)} does not broadcast to {full}")
        if bias.requires_grad and torch.is_grad_enabled():
            raise ValueError("memory_efficient_attention computes no bias gradient; detach it")
        bias = bias.expand(full)  # (b, h, i, j), a view: no copy
    if alibi_slopes is not None:
        if alibi_slopes.shape != (h,):
            raise ValueError(
                f"alibi_slopes must have shape ({h},), got {tuple(alibi_slopes.shape)}"
            )
        alibi_slopes = alibi_slopes.detach().to(_stats_dtype(q))  # added to fp32 tiles
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    return _MemEffAttention.apply(q, k, v, bias, alibi_slopes, causal, factor, block_q, block_k)


def _check(q: Tensor, k: Tensor, v: Tensor, causal: bool, block_q: int, block_k: int) -> None:
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(
            f"memory_efficient_attention expects (batch, heads, positions, width) tensors, "
            f"got shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[:2] != k.shape[:2] or k.shape[:2] != v.shape[:2]:
        raise ValueError(f"batch/heads differ: q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"shape mismatch: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
            "(q and k must share width, k and v must share positions)"
        )
    if causal and q.shape[-2] > k.shape[-2]:
        raise ValueError(
            f"causal attention needs n_query <= n_key, got {q.shape[-2]} > {k.shape[-2]}"
        )
    if block_q < 1 or block_k < 1:
        raise ValueError(f"block sizes must be positive, got block_q={block_q}, block_k={block_k}")


class _MemEffAttention(torch.autograd.Function):
    """Tiled forward saving (q, k, v, out, L); backward recomputing each tile's P."""

    @staticmethod
    def forward(ctx, q, k, v, bias, slopes, causal, factor, block_q, block_k):
        tiles = _Tiles(q.shape[-2], k.shape[-2], causal, block_q, block_k)
        f32 = _stats_dtype(q)  # running max, denominator, numerator and L: never below fp32
        out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=f32, device=q.device)
        lse = torch.empty(q.shape[:-1], dtype=f32, device=q.device)  # (b, h, i)
        for q0, q1 in tiles.query_blocks():
            qs = q[:, :, q0:q1] * factor  # (b, h, bq, d)
            m = torch.full((*q.shape[:2], q1 - q0, 1), -math.inf, dtype=f32, device=q.device)
            l = torch.zeros_like(m)  # (b, h, bq, 1)
            acc = out[:, :, q0:q1]  # (b, h, bq, d_v), a view: written in place
            for k0, k1 in tiles.key_blocks(q0, q1):
                s = (qs @ k[:, :, k0:k1].transpose(-2, -1)).to(f32)  # (b, h, bq, bk)
                s = tiles.finish_scores(s, bias, slopes, q0, q1, k0, k1)
                m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))
                p = s.sub_(m_safe).exp_()  # (b, h, bq, bk), in place: s is a fresh tile
                rescale = torch.exp(m - m_safe)  # (b, h, bq, 1); 0 while m is -inf
                l.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
                acc.mul_(rescale).add_(p.to(v.dtype) @ v[:, :, k0:k1])
                m = m_new
            seen = l > 0  # False only for rows whose every key is forbidden
            acc.div_(torch.where(seen, l, torch.ones_like(l)))
            row_lse = torch.where(seen, m + torch.log(torch.where(seen, l, torch.ones_like(l))),
                                  torch.full_like(l, -math.inf))
            lse[:, :, q0:q1] = row_lse.squeeze(-1)
        out = out.to(q.dtype)
        ctx.save_for_backward(q, k, v, out, lse, bias, slopes)
        ctx.tiles, ctx.factor = tiles, factor
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        q, k, v, out, lse, bias, slopes = ctx.saved_tensors
        tiles, factor = ctx.tiles, ctx.factor
        f32 = lse.dtype  # the statistics' dtype: gradients accumulate in it too
        grad_out = grad_out.contiguous()
        # D = rowsum(dO ∘ O), (b, h, i, 1)
        delta = (grad_out.to(f32) * out.to(f32)).sum(dim=-1, keepdim=True)
        # exp(S - L) must be 0 on rows with no allowed key (L = -inf): use L = +inf there.
        lse = torch.where(torch.isfinite(lse), lse, torch.full_like(lse, math.inf))
        dq, dk, dv = (torch.zeros(t.shape, dtype=f32, device=t.device) for t in (q, k, v))
        for q0, q1 in tiles.query_blocks():
            qs = q[:, :, q0:q1] * factor  # (b, h, bq, d)
            d_o = grad_out[:, :, q0:q1]  # (b, h, bq, d_v)
            row_lse = lse[:, :, q0:q1, None]  # (b, h, bq, 1)
            row_delta = delta[:, :, q0:q1]  # (b, h, bq, 1)
            dq_block = dq[:, :, q0:q1]  # (b, h, bq, d), a view: written in place
            for k0, k1 in tiles.key_blocks(q0, q1):
                kb, vb = k[:, :, k0:k1], v[:, :, k0:k1]  # (b, h, bk, d), (b, h, bk, d_v)
                s = (qs @ kb.transpose(-2, -1)).to(f32)  # (b, h, bq, bk)
                s = tiles.finish_scores(s, bias, slopes, q0, q1, k0, k1)
                p = s.sub_(row_lse).exp_()  # (b, h, bq, bk), the forward's weights
                dv[:, :, k0:k1] += p.transpose(-2, -1).to(d_o.dtype) @ d_o
                dp = (d_o @ vb.transpose(-2, -1)).to(f32)  # (b, h, bq, bk)
                ds = (p * (dp - row_delta)).to(q.dtype)  # (b, h, bq, bk)
                dq_block += ds @ kb
                dk[:, :, k0:k1] += ds.transpose(-2, -1) @ q[:, :, q0:q1]
        if factor != 1.0:
            dq.mul_(factor)
            dk.mul_(factor)
        return (dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype),
                None, None, None, None, None, None)


def _stats_dtype(q: Tensor) -> torch.dtype:
    """fp32 for half-precision inputs (as FlashAttention keeps its softmax statistics),
    else the inputs' own dtype (fp32, or fp64 in the gradient checks)."""
    return torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype


class _Tiles:
    """Which tiles exist, and how a tile's raw scores get bias and causal mask."""

    def __init__(self, n_query: int, n_key: int, causal: bool, block_q: int, block_k: int):
        self.n_query, self.n_key, self.causal = n_query, n_key, causal
        self.block_q, self.block_k = block_q, block_k
        self.offset = n_key - n_query  # query i sits at absolute position offset + i

    def query_blocks(self) -> list[tuple[int, int]]:
        return [(s, min(s + self.block_q, self.n_query))
                for s in range(0, self.n_query, self.block_q)]

    def key_blocks(self, q0: int, q1: int) -> list[tuple[int, int]]:
        # Causal: the last query of the block sees keys up to offset + q1 - 1;
        # tiles starting beyond that are wholly above the diagonal and skipped.
        stop = min(self.n_key, self.offset + q1) if self.causal else self.n_key
        return [(s, min(s + self.block_k, stop)) for s in range(0, stop, self.block_k)]

    def finish_scores(
        self, s: Tensor, bias: Tensor | None, slopes: Tensor | None,
        q0: int, q1: int, k0: int, k1: int,
    ) -> Tensor:
        """Add bias and ALiBi to scaled scores s (b, h, bq, bk); mask the diagonal tiles."""
        if bias is not None:
            s += bias[:, :, q0:q1, k0:k1]
        needs_mask = self.causal and k1 - 1 > self.offset + q0
        if slopes is None and not needs_mask:
            return s
        q_pos = torch.arange(self.offset + q0, self.offset + q1, device=s.device)[:, None]
        k_pos = torch.arange(k0, k1, device=s.device)[None, :]
        if slopes is not None:
            distance = (q_pos - k_pos).abs().to(s.dtype)  # (bq, bk)
            s -= slopes[:, None, None] * distance  # (b, h, bq, bk)
        if needs_mask:
            s.masked_fill_(k_pos > q_pos, -math.inf)
        return s
