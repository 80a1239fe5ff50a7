"""Context mixers: how each position gathers information from earlier ones.

Dimension legend: ``b`` batch, ``t`` new positions, ``s`` all positions seen
(cache + new), ``c`` model width, ``h`` heads, ``d`` head width.

The derivation of the block, one mixer at a time:
``NoContext``          each token alone (the bigram model);
``UniformCausalMean``  the mean of every token so far: the averaging matrix,
                       lower-triangular with rows summing to one;
``AttentionHead``      a *learned* weighted mean: softmax(q·k/√d_k) over v;
``MultiHeadAttention`` h heads of width c/h side by side, concat, then W_o.

All share one call signature: ``mixer(x, positions, cache) -> (y, weights)``
with x (b, t, c), integer positions (t,) of the new tokens, and an optional
per-layer cache dict that the mixer extends (KV cache for generation).
``weights`` is (b, h, t, s) or ``None`` when no weights exist or are formed.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlab.nn.attention import attention, causal_mask
from attnlab.nn.config import ModelConfig
from attnlab.nn.positions import alibi_bias, rope_rotate


class NoContext(nn.Module):
    """Identity: each position sees only itself (with a linear head, a bigram model)."""

    def forward(
        self, x: Tensor, positions: Tensor, cache: dict | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        return x, None


class UniformCausalMean(nn.Module):
    """y_t = mean(x_1 … x_t): the averaging matrix A with A[t, s] = 1/t for s <= t."""

    def forward(
        self, x: Tensor, positions: Tensor, cache: dict | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        if cache is not None:  # keep every input seen, as a KV cache keeps values
            x_all = torch.cat([cache["x"], x], dim=1) if "x" in cache else x  # (b, s, c)
            cache["x"] = x_all
        else:
            x_all = x
        n_new, n_all = x.shape[1], x_all.shape[1]
        allowed = causal_mask(n_new, n_all, x.device).to(x.dtype)  # (t, s)
        weights = allowed / allowed.sum(-1, keepdim=True)  # rows sum to one
        return weights @ x_all, weights.expand(x.shape[0], 1, n_new, n_all)  # (b, t, c)


class _Attention(nn.Module):
    """What a single head and multi-head attention share: q, k, v maps and the core."""

    def __init__(self, cfg: ModelConfig, n_head: int, d_qk: int, d_v: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.n_head, self.d_qk, self.d_v = n_head, d_qk, d_v
        self.q = nn.Linear(cfg.d_model, n_head * d_qk, bias=cfg.qkv_bias)
        self.k = nn.Linear(cfg.d_model, n_head * d_qk, bias=cfg.qkv_bias)
        self.v = nn.Linear(cfg.d_model, n_head * d_v, bias=cfg.qkv_bias)

    def project(self, x: Tensor, positions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """q, k, v for the new tokens, split into heads (b, h, t, d), RoPE applied."""
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.n_head, self.d_qk).transpose(1, 2)  # (b, h, t, d)
        k = self.k(x).view(b, t, self.n_head, self.d_qk).transpose(1, 2)  # (b, h, t, d)
        v = self.v(x).view(b, t, self.n_head, self.d_v).transpose(1, 2)  # (b, h, t, d)
        if self.cfg.position == "rope":
            q, k = rope_rotate(q, positions), rope_rotate(k, positions)
        return q, k, v

    def attend(
        self, x: Tensor, positions: Tensor, cache: dict | None, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:
        q, k, v = self.project(x, positions)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)  # (b, h, s, d)
                v = torch.cat([cache["v"], v], dim=2)  # (b, h, s, d)
            cache["k"], cache["v"] = k, v
        bias = None
        if self.cfg.position == "alibi":
            bias = alibi_bias(self.n_head, q.shape[2], k.shape[2], x.device)  # (h, t, s)
        backend = "naive" if need_weights else self.cfg.backend
        out, weights = attention(
            q, k, v, causal=True, bias=bias, scale=self.cfg.scale,
            dropout_p=self.cfg.dropout, training=self.training, backend=backend,
        )
        b, _, t, _ = out.shape
        return out.transpose(1, 2).reshape(b, t, self.n_head * self.d_v), weights  # (b, t, h·d)

    def scores(self, x: Tensor, positions: Tensor) -> Tensor:
        """Pre-softmax scores (b, h, t, t), scaled as the model scales them, unmasked."""
        q, k, _ = self.project(x, positions)
        scale = self.d_qk**-0.5 if self.cfg.scale else 1.0
        return (q @ k.transpose(-2, -1)) * scale


class AttentionHead(_Attention):
    """One head: q, k of width d_k (default c), v of width c so it can join the residual.

    Vaswani et al. 2017, §3.2.1. No biases unless ``qkv_bias``; no output map.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg, n_head=1, d_qk=cfg.qk_dim, d_v=cfg.d_model)

    def forward(
        self, x: Tensor, positions: Tensor, cache: dict | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        return self.attend(x, positions, cache, need_weights)


class MultiHeadAttention(_Attention):
    """h heads of width c/h, concatenated, then W_o with bias (Vaswani et al. 2017, §3.2.2).

    The readable path runs the core on the split heads; ``backend="sdpa"`` sends the
    same q, k, v through PyTorch's fused kernel — numerically the same model.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        d = cfg.d_model // cfg.n_head
        super().__init__(cfg, n_head=cfg.n_head, d_qk=d, d_v=d)
        self.o = nn.Linear(cfg.d_model, cfg.d_model, bias=True) if cfg.out_proj else nn.Identity()

    def forward(
        self, x: Tensor, positions: Tensor, cache: dict | None = None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        y, weights = self.attend(x, positions, cache, need_weights)
        return self.o(y), weights


def build_mixer(cfg: ModelConfig) -> nn.Module:
    """The mixer named by ``cfg.mixer``."""
    return {
        "none": NoContext,
        "mean": UniformCausalMean,
        "head": AttentionHead,
        "mha": MultiHeadAttention,
    }[cfg.mixer](*(() if cfg.mixer in ("none", "mean") else (cfg,)))
