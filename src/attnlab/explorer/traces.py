"""What the explorer reads of a model's attention: one ``LayerTrace`` per attention layer.

Dimension legend: ``h`` heads, ``t`` query positions, ``s`` key positions
(``t == s`` here: one whole sentence, no cache), ``d`` query/key width of a
head (``d_k``).

``LayerTrace`` is the model core's ``BlockTrace`` (``attnlab.nn.trace``) for
batch item 0, in NumPy, with what a Hugging Face model adds: a sliding
``window``. Every source of heads produces it: ``attnlab_traces`` for
attnlab's ``LanguageModel`` (through its one trace API, ``LanguageModel.trace``),
``attnlab.explorer.hf`` for Hugging Face models, so the page builder reads one
shape whatever the model.

Left out: value vectors, head outputs, and batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["LayerTrace", "attnlab_traces", "numpy_of"]


@dataclass(frozen=True)
class LayerTrace:
    """One attention layer of one sentence, as the explorer shows it.

    The model's scores are ``q·kᵀ · scale + bias`` with keys after the query
    (and, with a ``window``, keys ``window`` or more places back) masked, and
    ``weights`` are their softmax. A layer without q and k (the uniform mean)
    gives ``scores`` instead; one whose q and k could not be read gives only
    ``weights``.
    """

    weights: np.ndarray | None  # (h, t, s) the weights the model used
    q: np.ndarray | None = None  # (h, t, d) after RoPE
    k: np.ndarray | None = None  # (h, s, d) after RoPE
    scale: float = 1.0  # the factor on q·k: 1/√d_k, or 1 for a model that does not divide
    bias: np.ndarray | None = None  # (h, t, s) added after the scaling (ALiBi)
    window: int | None = None  # sliding-window width of a local layer
    scores: np.ndarray | None = None  # (h, t, s) raw scores where there is no q, k (the mean)

    @property
    def n_head(self) -> int:
        for a in (self.q, self.scores, self.weights):
            if a is not None:
                return a.shape[0]
        raise ValueError("an empty LayerTrace")


def numpy_of(x: torch.Tensor | None) -> np.ndarray | None:
    """Batch item 0 of a traced tensor as float64 NumPy (moved off the GPU first)."""
    return None if x is None else x[0].detach().to("cpu", torch.float64).numpy()


def attnlab_traces(model: torch.nn.Module, ids: Sequence[int]) -> list[LayerTrace]:
    """One ``LayerTrace`` per block of an attnlab ``LanguageModel`` that mixes context.

    Blocks without a mixer, or with the no-context mixer, are left out; a model
    with none at all is a ValueError.
    """
    device = next(model.parameters()).device
    idx = torch.tensor([list(ids)], dtype=torch.long, device=device)  # (1, t)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            blocks = _trace_blocks(model, idx)
    finally:
        model.train(was_training)
    out = []
    for b in blocks:
        if b.weights is None:  # the no-context mixer: nothing to show
            continue
        if b.q is None:  # the uniform mean: equal (zero) scores, one "head"
            w = numpy_of(b.weights)  # (1, t, s)
            out.append(LayerTrace(weights=w, scores=np.zeros_like(w)))
            continue
        out.append(LayerTrace(
            weights=numpy_of(b.weights), q=numpy_of(b.q), k=numpy_of(b.k),
            scale=float(b.scale), bias=None if b.bias is None else numpy_of(b.bias[None]),
        ))  # fmt: skip
    if not out:
        raise ValueError("this model has no context mixer: no word looks at any other")
    return out


def _trace_blocks(model: torch.nn.Module, idx: torch.Tensor) -> list:
    """``model.trace(idx).blocks`` (the model core's trace API)."""
    if hasattr(model, "trace"):
        return list(model.trace(idx).blocks)
    return _interim_trace(model, idx)


@dataclass(frozen=True)
class _InterimBlock:
    """The fields of ``attnlab.nn.trace.BlockTrace`` the explorer reads."""

    q: torch.Tensor | None
    k: torch.Tensor | None
    scale: float
    bias: torch.Tensor | None
    weights: torch.Tensor | None


def _interim_trace(model: torch.nn.Module, idx: torch.Tensor) -> list[_InterimBlock]:
    """Stand-in for ``LanguageModel.trace`` until the model core has it (to be deleted then):
    the mixers' inputs by pre-hooks, their own projections, and the model's own weights."""
    from attnlab.nn.mixers import AttentionHead, MultiHeadAttention
    from attnlab.nn.positions import alibi_bias

    inputs: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    hooks = [
        block.mixer.register_forward_pre_hook(
            lambda mod, args, i=i: inputs.__setitem__(i, args[:2])
        )
        for i, block in enumerate(model.blocks) if block.mixer is not None
    ]  # fmt: skip
    try:
        _, attn = model(idx, return_attention=True)
    finally:
        for hook in hooks:
            hook.remove()
    out = []
    for i, block in enumerate(model.blocks):
        mixer = block.mixer
        if not isinstance(mixer, (AttentionHead, MultiHeadAttention)):
            out.append(_InterimBlock(None, None, 1.0, None, attn[i]))
            continue
        x, positions = inputs[i]
        q, k, _ = mixer.project(x, positions)  # (1, h, t, d) each
        scale = mixer.d_qk**-0.5 if mixer.cfg.scale else 1.0
        t = idx.shape[1]
        bias = alibi_bias(mixer.n_head, t, t, idx.device) if mixer.cfg.position == "alibi" else None
        out.append(_InterimBlock(q, k, scale, bias, attn[i]))
    return out
