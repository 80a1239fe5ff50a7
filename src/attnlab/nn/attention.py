"""The attention core in PyTorch: one function returning ``(output, weights)``.

    softmax(Q Kᵀ / √d_k + B + M) V          (Vaswani et al. 2017, eq. 1)

Dimension legend: ``b`` batch, ``h`` heads, ``i`` query positions, ``j`` key
positions, ``d`` head width (d_k for q and k, d_v for v).

``M`` is the mask, given as booleans (``True`` = may attend) and applied as
``-inf`` on forbidden scores; ``B`` is an optional additive bias (ALiBi).
A row whose every key is forbidden has no softmax; we define its weights and
its output as exactly zero (not NaN), so padding queries stay harmless.

Three kernels compute the same function:
``naive``  materialises the (i, j) score matrix and returns the weights: the
           readable one, used by ``verify``, the tests and ``trace``;
``sdpa``   calls ``torch.nn.functional.scaled_dot_product_attention`` (fused,
           returns no weights);
``memeff`` attnlab's tiled online-softmax attention (``attnlab.nn.memeff``),
           which never holds the (i, j) matrix (returns no weights).
``auto`` (the model's default) picks the fastest correct kernel for the device and
precision (``KERNEL_TABLE``, measured by ``benchmarks/kernel_table.py``); a resolved run
config names the kernel it picked.
Left out: attention-weight dropout in the fused kernels is PyTorch's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnlab.nn.model_config import BACKENDS
from attnlab.nn.positions import alibi_bias_from_slopes


def causal_mask(n_query: int, n_key: int, device: torch.device | None = None) -> Tensor:
    """Boolean (i, j) mask, True where query i may see key j.

    The queries are the *last* ``n_query`` positions of the ``n_key`` keys, as
    when decoding with a KV cache: query i sits at absolute position
    ``n_key - n_query + i`` and sees keys ``j <= n_key - n_query + i``.

    >>> causal_mask(2, 3).int().tolist()
    [[1, 1, 0], [1, 1, 1]]
    """
    offset = n_key - n_query
    i = torch.arange(n_query, device=device)[:, None]
    j = torch.arange(n_key, device=device)[None, :]
    return j <= i + offset


Kernel = Callable[..., tuple[Tensor, Tensor | None]]  # (q, k, v, *, options) -> (out, weights)


# The kernel ``auto`` stands for, per (device type, precision): a statement, whose evidence
# is ``benchmarks/kernel_table.py`` (its table, per processor, in docs/benchmarks.md). A run's
# config records the kernel this table gave it (``attnlab.train.runtime.resolve_run``), so
# its hash says what it used. On a CPU with AMX, sdpa is the fastest in fp32 at every shape
# measured (1.2-2.2x naive); under bf16 autocast naive is (1.03-1.3x sdpa) at all but the
# 12-block width-32 stack. CUDA's entries are PyTorch's fused kernel, not yet measured
# against the others.
KERNEL_TABLE: dict[tuple[str, str], str] = {
    ("cpu", "fp32"): "sdpa",
    ("cpu", "bf16"): "naive",
    ("cuda", "fp32"): "sdpa",
    ("cuda", "bf16"): "sdpa",
}


def resolve_backend(backend: str, device: str | None = None, precision: str = "fp32") -> str:
    """The kernel ``backend`` names: ``auto`` is ``KERNEL_TABLE``'s kernel for ``device``
    and ``precision`` (``sdpa`` where the device is not known); the others are themselves.

    >>> resolve_backend("auto"), resolve_backend("naive"), resolve_backend("auto", "cpu")
    ('sdpa', 'naive', 'sdpa')
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown attention backend {backend!r}; choose one of: "
                         f"{', '.join(BACKENDS)}")
    if backend != "auto":
        return backend
    return KERNEL_TABLE.get((device or "cpu", precision), "sdpa")


def kernel(backend: str) -> Kernel:
    """The attention function of ``backend``, chosen once (a mixer keeps it from its
    construction on); it takes ``attention``'s arguments but ``backend``."""
    return _KERNELS[resolve_backend(backend)]


def stable_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last axis, max-subtracted; rows of all ``-inf`` give zeros."""
    top = scores.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    e = torch.exp(scores - top)
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    causal: bool = True,
    mask: Tensor | None = None,
    bias: Tensor | None = None,
    alibi_slopes: Tensor | None = None,
    scale: bool = True,
    dropout_p: float = 0.0,
    training: bool = False,
    backend: str = "naive",
) -> tuple[Tensor, Tensor | None]:
    """Scaled dot-product attention.

    Args:
        q: (b, h, i, d_k) queries.  k: (b, h, j, d_k) keys.  v: (b, h, j, d_v) values.
        causal: forbid keys after each query (queries are the last i of the j).
        mask: optional boolean, broadcastable to (b, h, i, j); True = may attend.
        bias: optional additive scores, broadcastable to (b, h, i, j).
        alibi_slopes: optional (h,) ALiBi slopes (Press et al. 2022): the bias
            -slope·(distance back), built per call, or per tile by ``memeff``, which
            so stays linear in memory.
        scale: divide scores by √d_k; ``False`` is the undivided variant of
            (docs/experiments.md, "Why divide by √d_k").
        dropout_p: dropout on the attention weights after the softmax (training only).
        backend: ``auto`` | ``naive`` | ``sdpa`` | ``memeff`` (see the module docstring).

    Returns:
        ``(out, weights)``: out is (b, h, i, d_v); weights is (b, h, i, j) for
        the naive kernel and ``None`` for the fused ones.
    """
    return kernel(backend)(q, k, v, causal=causal, mask=mask, bias=bias,
                           alibi_slopes=alibi_slopes, scale=scale, dropout_p=dropout_p,
                           training=training)


def _checked(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: bool, dropout_p: float,
             training: bool) -> tuple[bool, float, float]:
    """Shapes checked; (causal, dropout probability, score factor) as every kernel uses them."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(
            f"attention expects (batch, heads, positions, width) tensors, got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"shape mismatch: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
            "(q and k must share width, k and v must share positions)"
        )
    n_query, n_key = q.shape[-2], k.shape[-2]
    if causal and n_query > n_key:
        raise ValueError(f"causal attention needs n_query <= n_key, got {n_query} > {n_key}")
    if causal and n_query == 1:
        # One query, the newest position (a KV-cache decoding step): it may see every
        # key, so the causal mask would forbid nothing; skip building it.
        causal = False
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale else 1.0
    return causal, dropout_p if training else 0.0, factor


def _with_alibi(bias: Tensor | None, alibi_slopes: Tensor | None, n_query: int,
                n_key: int) -> Tensor | None:
    if alibi_slopes is None:
        return bias
    alibi = alibi_bias_from_slopes(alibi_slopes, n_query, n_key)  # (h, i, j)
    return alibi if bias is None else bias + alibi


def _naive(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, mask: Tensor | None = None,
           bias: Tensor | None = None, alibi_slopes: Tensor | None = None, scale: bool = True,
           dropout_p: float = 0.0, training: bool = False) -> tuple[Tensor, Tensor]:
    """The readable kernel: the (i, j) scores, masked, softmaxed; returns the weights."""
    causal, p, factor = _checked(q, k, v, causal, scale, dropout_p, training)
    n_query, n_key = q.shape[-2], k.shape[-2]
    bias = _with_alibi(bias, alibi_slopes, n_query, n_key)
    scores = (q @ k.transpose(-2, -1)) * factor  # (b, h, i, j)
    if bias is not None:
        scores = scores + bias
    allowed = _combined_mask(mask, causal, n_query, n_key, q.device)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = stable_softmax(scores)
    if p:
        weights = F.dropout(weights, p=p, training=True)
    return weights @ v, weights  # (b, h, i, d_v), (b, h, i, j)


def _sdpa(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, mask: Tensor | None = None,
          bias: Tensor | None = None, alibi_slopes: Tensor | None = None, scale: bool = True,
          dropout_p: float = 0.0, training: bool = False) -> tuple[Tensor, None]:
    """PyTorch's fused kernel (no weights)."""
    causal, p, factor = _checked(q, k, v, causal, scale, dropout_p, training)
    n_query, n_key = q.shape[-2], k.shape[-2]
    bias = _with_alibi(bias, alibi_slopes, n_query, n_key)
    if causal and mask is None and bias is None and n_query == n_key:
        # Plain causal self-attention: every query sees itself, so no row is fully
        # masked, and the kernel builds the mask itself (no (i, j) tensor here).
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, scale=factor)
        return out, None
    allowed = _combined_mask(mask, causal, n_query, n_key, q.device)
    attn_mask = bias if allowed is None else _bias_with_mask(bias, allowed, q.dtype)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p,
                                         scale=factor)
    if allowed is not None:  # fully masked rows: SDPA gives NaN, we define zeros
        out = torch.where(allowed.any(-1, keepdim=True), out, torch.zeros_like(out))
    return out, None


def _memeff(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = True, mask: Tensor | None = None,
            bias: Tensor | None = None, alibi_slopes: Tensor | None = None, scale: bool = True,
            dropout_p: float = 0.0, training: bool = False) -> tuple[Tensor, None]:
    """attnlab's tiled kernel (``attnlab.nn.memeff``; no weights, no mask, no dropout)."""
    from attnlab.nn.memeff import memory_efficient_attention

    causal, p, _ = _checked(q, k, v, causal, scale, dropout_p, training)
    if mask is not None or p:
        raise ValueError("the memeff backend supports causal/bias only (no mask, no dropout)")
    out = memory_efficient_attention(q, k, v, causal=causal, bias=bias,
                                     alibi_slopes=alibi_slopes, scale=scale)
    return out, None


_KERNELS: dict[str, Kernel] = {"naive": _naive, "sdpa": _sdpa, "memeff": _memeff}


def _combined_mask(
    mask: Tensor | None, causal: bool, n_query: int, n_key: int, device: torch.device
) -> Tensor | None:
    allowed = causal_mask(n_query, n_key, device) if causal else None
    if mask is not None:
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be boolean (True = may attend), got {mask.dtype}")
        allowed = mask if allowed is None else (mask & allowed)
    return allowed


def _bias_with_mask(bias: Tensor | None, allowed: Tensor, dtype: torch.dtype) -> Tensor:
    additive = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    additive = additive.masked_fill(~allowed, float("-inf"))
    return additive if bias is None else additive + bias
