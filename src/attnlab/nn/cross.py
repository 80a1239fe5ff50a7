"""Attention between two sequences: queries from one, keys and values from another.

Dimension legend: ``b`` batch, ``h`` heads, ``i`` query (target) positions, ``j`` key
(source) positions, ``c`` model width, ``d`` head width (c / h).

    CrossAttention(x, memory) = W_o · concat_h softmax(q_h k_hᵀ / √d + M) v_h
    q = x W_q,   k = memory W_k,   v = memory W_v              (Vaswani et al. 2017, §3.2.3)

"Where the decoder's queries meet the encoder's keys": in the encoder–decoder of
2017, ``x`` is the decoder's stream (b, i, c) and ``memory`` the encoder's output
(b, j, c). Self-attention is the case ``memory = x``; the encoder's bidirectional
self-attention is that case without the causal mask (``attnlab.nn.encdec``).

The mask is a *key-padding* mask: a batch of sources of unequal lengths is padded to
the longest, and ``key_mask`` (b, j), True on real tokens, hides the padded keys from
every query (``padding_mask(lengths, j)``). PyTorch's ``key_padding_mask`` is its
negation (True = ignore). A source of length 0 leaves a query nothing to attend to:
the core (``attnlab.nn.attention``) defines that row's weights and output as zeros,
where ``torch.nn.MultiheadAttention`` gives NaN.

The attention itself is the core's ``attention`` function, through the config's kernel;
``need_weights=True`` (PyTorch's word) runs the readable kernel, which returns the
(b, h, i, j) weights; ``trace`` runs it too and records q, k, v, the scores and the weights
(the ``BlockTrace`` of ``attnlab.nn.trace``, as a decoder-only mixer's). q has its own
map and k | v one fused map (one matmul over the memory, which the decoder reads once per
layer). Left out: a KV cache of the memory's keys and values for decoding (the memory does
not change between steps, so it could be projected once), relative positions inside
cross-attention.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from attnlab.nn.attention import kernel
from attnlab.nn.trace import BlockTrace


def padding_mask(lengths: Tensor, n: int) -> Tensor:
    """Boolean (b, n) key mask, True on the first ``lengths[b]`` positions of row b.

    >>> padding_mask(torch.tensor([2, 3, 0]), 3).int().tolist()
    [[1, 1, 0], [1, 1, 1], [0, 0, 0]]
    """
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (one per sequence), got {tuple(lengths.shape)}")
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > n):
        raise ValueError(f"lengths must lie in [0, {n}], got {lengths.tolist()}")
    return torch.arange(n, device=lengths.device)[None, :] < lengths[:, None]  # (b, n)


class CrossAttention(nn.Module):
    """Multi-head attention of queries ``x`` (b, i, c) over ``memory`` (b, j, c).

    ``n_head`` heads of width c / h, concatenated, then W_o with bias; biases on q, k, v
    too (``bias``), as in ``torch.nn.MultiheadAttention``, whose weights
    ``copy_from_torch_mha`` copies in.
    """

    def __init__(self, d_model: int, n_head: int, *, bias: bool = True, dropout: float = 0.0,
                 backend: str = "auto") -> None:
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"n_head={n_head} does not divide d_model={d_model}")
        self.n_head, self.d_head = n_head, d_model // n_head
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=bias)  # k | v, one matmul over memory
        self.o = nn.Linear(d_model, d_model, bias=True)
        self.dropout = dropout
        self.kernel = kernel(backend)  # chosen once, as the mixers do
        self.readable = kernel("naive")  # the one that returns the weights

    def _heads(self, x: Tensor) -> Tensor:
        b, n, _ = x.shape
        return x.view(b, n, self.n_head, self.d_head).transpose(1, 2)  # (b, h, n, d)

    def _qkv(self, x: Tensor, memory: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        q = self._heads(self.q(x))  # (b, h, i, d)
        k, v = (self._heads(t) for t in self.kv(memory).chunk(2, dim=-1))  # (b, h, j, d) each
        return q, k, v

    def _attend(self, run: Any, q: Tensor, k: Tensor, v: Tensor, key_mask: Tensor | None,
                causal: bool) -> tuple[Tensor, Tensor | None]:
        """``(y, weights)`` of the kernel ``run``: y (b, i, c), weights (b, h, i, j) or None."""
        mask = None if key_mask is None else key_mask[:, None, None, :]  # (b, 1, 1, j)
        out, weights = run(q, k, v, causal=causal, mask=mask, dropout_p=self.dropout,
                           training=self.training)  # (b, h, i, d), (b, h, i, j) or None
        b, h, i, d = out.shape
        return self.o(out.transpose(1, 2).reshape(b, i, h * d)), weights  # (b, i, c)

    def forward(self, x: Tensor, memory: Tensor, key_mask: Tensor | None = None, *,
                causal: bool = False, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """``(y, weights)``: y (b, i, c); weights (b, h, i, j) with ``need_weights``, else None.

        ``key_mask`` (b, j) booleans, True = a real key; ``causal`` forbids key j > query i
        (self-attention of a decoder, where ``memory`` is ``x``).
        """
        run = self.readable if need_weights else self.kernel
        return self._attend(run, *self._qkv(x, memory), key_mask, causal)

    def trace(self, x: Tensor, memory: Tensor,
              key_mask: Tensor | None = None) -> tuple[Tensor, BlockTrace]:
        """``forward`` (no causal mask) through the readable kernel, and what it computed:
        q (b, h, i, d), k and v (b, h, j, d), the scores q·kᵀ/√d (b, h, i, j) before the key
        mask, and the weights."""
        q, k, v = self._qkv(x, memory)
        y, weights = self._attend(self.readable, q, k, v, key_mask, causal=False)
        factor = self.d_head**-0.5
        scores = (q @ k.transpose(-2, -1)) * factor  # (b, h, i, j)
        return y, BlockTrace(x, q, k, v, factor, None, scores, weights)


def copy_from_torch_mha(ours: CrossAttention, reference: nn.MultiheadAttention) -> None:
    """Copy a ``torch.nn.MultiheadAttention``'s weights (one fused q|k|v ``in_proj``, with
    biases) into ``ours``: its first third is q, the rest k | v."""
    c = ours.q.in_features
    with torch.no_grad():
        ours.q.weight.copy_(reference.in_proj_weight[:c])
        ours.kv.weight.copy_(reference.in_proj_weight[c:])
        if ours.q.bias is not None:
            ours.q.bias.copy_(reference.in_proj_bias[:c])
            ours.kv.bias.copy_(reference.in_proj_bias[c:])
        ours.o.weight.copy_(reference.out_proj.weight)
        ours.o.bias.copy_(reference.out_proj.bias)
