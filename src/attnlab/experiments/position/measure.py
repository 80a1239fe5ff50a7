"""The permutation check of "Position": is one multi-head self-attention layer equivariant,
f(Px) = P f(x), with and without the causal mask and each position scheme?

Dimension legend: ``b`` batch, ``t`` positions, ``c`` model width, ``h`` heads, ``d`` head
width.
"""

from __future__ import annotations

import torch

from attnlab.nn.attention import attention
from attnlab.nn.mixers import MultiHeadAttention
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.positions import AdditivePositions, alibi_bias


def permutation_check(position: str, causal: bool, n_tokens: int = 12, d_model: int = 32,
                      n_head: int = 4, seed: int = 0) -> float:
    """max |f(Px) − P f(x)| for one multi-head self-attention layer f (projections,
    core, W_o) with ``position`` applied at slots 0..t-1, on random x (1, t, c)."""
    if n_tokens < 2:
        raise ValueError(f"a permutation needs at least 2 tokens, got {n_tokens}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    cfg = ModelConfig(d_model=d_model, n_head=n_head, n_ctx=n_tokens, position=position)
    mixer = MultiHeadAttention(cfg).eval()
    additive = (AdditivePositions(position, n_tokens, d_model)
                if position in ("learned", "sinusoidal") else None)
    slots = torch.arange(n_tokens)  # (t,)
    x = torch.randn(1, n_tokens, d_model, generator=gen)  # (b, t, c)
    perm = torch.randperm(n_tokens, generator=gen)  # (t,)

    @torch.no_grad()
    def f(inp: torch.Tensor) -> torch.Tensor:
        h = inp + additive(0, n_tokens) if additive is not None else inp  # (b, t, c)
        q, k, v = mixer.project(h, slots)  # (b, h, t, d) each, RoPE applied
        bias = alibi_bias(n_head, n_tokens, n_tokens) if position == "alibi" else None
        out, _ = attention(q, k, v, causal=causal, bias=bias)  # (b, h, t, d)
        return mixer.o(out.transpose(1, 2).reshape(1, n_tokens, d_model))  # (b, t, c)

    return float((f(x[:, perm]) - f(x)[:, perm]).abs().max())


PERMUTATION_CASES = (("none", False), ("none", True), ("learned", False),
                     ("sinusoidal", False), ("rope", False), ("alibi", False))
