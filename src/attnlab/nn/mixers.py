"""Context mixers: how each position gathers information from earlier ones.

Dimension legend: ``b`` batch, ``t`` new positions, ``s`` all positions seen
(cache + new), ``c`` model width, ``h`` heads, ``d`` head width.

The derivation of the block, one mixer at a time:
(``mixer="none"``     no mixer sublayer: each token alone, the bigram model;)
``UniformCausalMean``  the mean of every token so far: the averaging matrix,
                       lower-triangular with rows summing to one;
``AttentionHead``      a *learned* weighted mean: softmax(q·k/√d_k) over v;
``MultiHeadAttention`` h heads of width c/h side by side, concat, then W_o.
(``ElmanRNN``, ``LSTM``: what attention replaced, the same signature, in
``attnlab.nn.recurrent``.)

All share one call signature: ``mixer(x, positions, cache) -> y`` with x
(b, t, c), integer positions (t,) of the new tokens, and an optional
per-layer ``LayerCache`` that the mixer extends (the KV cache of generation,
``attnlab.nn.cache``); and
``mixer.trace(x, positions) -> (y, BlockTrace)``, the same computation through
the readable kernel, recording q, k, v, scores and weights
(``attnlab.nn.trace``).

Every choice of the config (kernel, rotation, ALiBi, √d_k) is settled in
``__init__``; ``forward`` is the formula. q, k and v come from one fused
projection (a single c × (2·h·d_k + h·d_v) map, as GPT-2's ``c_attn``):
one large matmul instead of three, and the same initial weights as three
separate maps drawn in the order q, k, v (without biases).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attnlab.nn.attention import causal_mask, kernel
from attnlab.nn.cache import LayerCache
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.positions import alibi_bias_from_slopes, alibi_slopes, rope_rotate
from attnlab.nn.recurrent import build_recurrent
from attnlab.nn.trace import BlockTrace


class UniformCausalMean(nn.Module):
    """y_t = mean(x_1 … x_t): the averaging matrix A with A[t, s] = 1/t for s <= t."""

    def forward(self, x: Tensor, positions: Tensor, cache: LayerCache | None = None) -> Tensor:
        # Keep every input seen, as a KV cache keeps values.
        x_all = cache.append("x", x, dim=1) if cache is not None else x  # (b, s, c)
        return self.averaging(x.shape[1], x_all.shape[1], x) @ x_all  # (b, t, c)

    def trace(self, x: Tensor, positions: Tensor) -> tuple[Tensor, BlockTrace]:
        weights = self.averaging(x.shape[1], x.shape[1], x)  # (t, s)
        y = weights @ x  # (b, t, c)
        per_head = weights.expand(x.shape[0], 1, *weights.shape)  # (b, 1, t, s)
        return y, BlockTrace(x, None, None, None, 1.0, None, None, per_head)

    @staticmethod
    def averaging(n_new: int, n_all: int, like: Tensor) -> Tensor:
        """The (t, s) averaging matrix of the last ``n_new`` of ``n_all`` positions."""
        allowed = causal_mask(n_new, n_all, like.device).to(like.dtype)  # (t, s)
        return allowed / allowed.sum(-1, keepdim=True)  # rows sum to one


class _Attention(nn.Module):
    """What a single head and multi-head attention share: the fused q/k/v map and the core."""

    def __init__(self, cfg: ModelConfig, n_head: int, d_qk: int, d_v: int) -> None:
        super().__init__()
        self.n_head, self.d_qk, self.d_v = n_head, d_qk, d_v
        self.widths = (n_head * d_qk, n_head * d_qk, n_head * d_v)  # q | k | v
        self.qkv = nn.Linear(cfg.d_model, sum(self.widths), bias=cfg.qkv_bias)
        self.rope = cfg.position == "rope"
        self.divide = cfg.scale
        self.factor = 1.0 / math.sqrt(d_qk) if cfg.scale else 1.0
        self.dropout = cfg.dropout
        self.kernel = kernel(cfg.backend)  # the attention function, chosen once
        self.readable = kernel("naive")  # trace's: the one that returns the weights
        slopes = alibi_slopes(n_head) if cfg.position == "alibi" else None
        self.register_buffer("alibi", slopes, persistent=False)  # (h,) or None
        self.register_load_state_dict_pre_hook(_fuse_separate_qkv)

    def project(self, x: Tensor, positions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """q, k, v for the new tokens, split into heads (b, h, t, d), RoPE applied."""
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(self.widths, dim=-1)  # (b, t, h·d) each
        q = q.view(b, t, self.n_head, self.d_qk).transpose(1, 2)  # (b, h, t, d)
        k = k.view(b, t, self.n_head, self.d_qk).transpose(1, 2)  # (b, h, t, d)
        v = v.view(b, t, self.n_head, self.d_v).transpose(1, 2)  # (b, h, t, d_v)
        if self.rope:
            q, k = rope_rotate(q, positions), rope_rotate(k, positions)
        return q, k, v

    def attend(self, x: Tensor, positions: Tensor, cache: LayerCache | None) -> Tensor:
        """The heads' outputs concatenated, (b, t, h·d_v)."""
        q, k, v = self.project(x, positions)
        if cache is not None:  # every key and value so far: the cached ones, then the new
            k = cache.append("k", k, dim=2)  # (b, h, s, d)
            v = cache.append("v", v, dim=2)  # (b, h, s, d_v)
        out, _ = self.kernel(
            q, k, v, causal=True, alibi_slopes=self.alibi, scale=self.divide,
            dropout_p=self.dropout, training=self.training,
        )
        return _merge(out)

    def trace_attend(self, x: Tensor, positions: Tensor) -> tuple[Tensor, BlockTrace]:
        """``attend`` through the readable kernel, recording what it computed."""
        q, k, v = self.project(x, positions)
        out, weights = self.readable(
            q, k, v, causal=True, alibi_slopes=self.alibi, scale=self.divide,
            dropout_p=self.dropout, training=self.training,
        )
        t, s = q.shape[2], k.shape[2]
        bias = None if self.alibi is None else alibi_bias_from_slopes(self.alibi, t, s)
        scores = (q @ k.transpose(-2, -1)) * self.factor  # (b, h, t, s)
        if bias is not None:
            scores = scores + bias
        return _merge(out), BlockTrace(x, q, k, v, self.factor, bias, scores, weights)


def _merge(out: Tensor) -> Tensor:
    """(b, h, t, d) heads side by side: (b, t, h·d)."""
    b, h, t, d = out.shape
    return out.transpose(1, 2).reshape(b, t, h * d)  # (b, t, h·d)


def _fuse_separate_qkv(module: nn.Module, state_dict: dict, prefix: str, *args: object) -> None:
    """Load checkpoints written before the fused projection: q, k, v maps → one qkv."""
    names = [f"{prefix}{p}.weight" for p in "qkv"]
    if all(n in state_dict for n in names):
        state_dict[f"{prefix}qkv.weight"] = torch.cat([state_dict.pop(n) for n in names])
        biases = [f"{prefix}{p}.bias" for p in "qkv"]
        if all(n in state_dict for n in biases):
            state_dict[f"{prefix}qkv.bias"] = torch.cat([state_dict.pop(n) for n in biases])


class AttentionHead(_Attention):
    """One head: q, k of width d_k (default c), v of width c so it can join the residual.

    Vaswani et al. 2017, §3.2.1. No biases unless ``qkv_bias``; no output map.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg, n_head=1, d_qk=cfg.qk_dim, d_v=cfg.d_model)

    def forward(self, x: Tensor, positions: Tensor, cache: LayerCache | None = None) -> Tensor:
        return self.attend(x, positions, cache)

    def trace(self, x: Tensor, positions: Tensor) -> tuple[Tensor, BlockTrace]:
        return self.trace_attend(x, positions)


class MultiHeadAttention(_Attention):
    """h heads of width c/h, concatenated, then W_o with bias (Vaswani et al. 2017, §3.2.2).

    The kernel is ``cfg.backend`` (``auto``: PyTorch's fused ``sdpa``); the readable
    kernel computes the same function and is what ``trace`` uses.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        d = cfg.d_model // cfg.n_head
        super().__init__(cfg, n_head=cfg.n_head, d_qk=d, d_v=d)
        self.o = nn.Linear(cfg.d_model, cfg.d_model, bias=True) if cfg.out_proj else nn.Identity()

    def forward(self, x: Tensor, positions: Tensor, cache: LayerCache | None = None) -> Tensor:
        return self.o(self.attend(x, positions, cache))

    def trace(self, x: Tensor, positions: Tensor) -> tuple[Tensor, BlockTrace]:
        y, record = self.trace_attend(x, positions)
        return self.o(y), record


def build_mixer(cfg: ModelConfig) -> nn.Module:
    """The mixer named by ``cfg.mixer`` (``none`` has none: the block leaves out its mixer
    sublayer, ``attnlab.nn.block.Block``); ``rnn`` and ``lstm`` are the recurrences of
    ``attnlab.nn.recurrent``."""
    if cfg.mixer in ("rnn", "lstm"):
        return build_recurrent(cfg)
    if cfg.mixer == "mean":
        return UniformCausalMean()
    return AttentionHead(cfg) if cfg.mixer == "head" else MultiHeadAttention(cfg)
