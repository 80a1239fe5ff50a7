"""What the explorer reads of a model's attention: one ``LayerTrace`` per attention layer.

Dimension legend: ``h`` heads, ``t`` query positions, ``s`` key positions
(``t == s`` here: one whole sentence, no cache), ``d`` query/key width of a
head (``d_k``), ``e`` value width of a head, ``c`` model width.

``LayerTrace`` is the model core's ``BlockTrace`` (``attnlab.nn.trace``) for
batch item 0, in NumPy, with what a Hugging Face model adds: a sliding
``window``. Every source of heads produces it: ``attnlab_traces`` for
attnlab's ``LanguageModel`` (through its one trace API, ``LanguageModel.trace``:
no hooks of the explorer's own),
``attnlab.explorer.sources.hf`` for Hugging Face models, so the page builder reads one
shape whatever the model.

What the values contribute is kept as one number per head and key,
``value_norms``: ‖v_j W_O^h‖, the size of what key j's value writes into the
residual stream through the head's slice of the output projection (the
value-weighted view of ``attnlab.explorer.page.composed``).

Left out: the value vectors themselves, head outputs, and batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.errors import UsageError

__all__ = ["LayerTrace", "attnlab_traces", "hf_value_norms", "numpy_of", "value_norms"]


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
    value_norms: np.ndarray | None = None  # (h, s) ‖v_j W_O^h‖, where the values are known

    @property
    def n_head(self) -> int:
        for a in (self.q, self.scores, self.weights):
            if a is not None:
                return a.shape[0]
        raise ValueError("an empty LayerTrace")


def numpy_of(x: torch.Tensor | None) -> np.ndarray | None:
    """Batch item 0 of a traced tensor as float64 NumPy (moved off the GPU first)."""
    return None if x is None else x[0].detach().to("cpu", torch.float64).numpy()


def value_norms(v: torch.Tensor, w_o: torch.Tensor | None) -> np.ndarray:
    """‖v_j W_O^h‖ per head and key, (h, s), of batch item 0.

    ``v`` (b, h, s, e) the values; ``w_o`` (c, h·e) the output projection's weight as
    ``nn.Linear`` stores it (y = concat_h(out_h) @ w_oᵀ), or None where the heads' outputs
    join the residual stream as they are.
    """
    v0 = v[0].detach().to("cpu", torch.float64)  # (h, s, e)
    if w_o is None:
        return v0.norm(dim=-1).numpy()
    h, _, e = v0.shape
    w = w_o.detach().to("cpu", torch.float64).view(-1, h, e)  # (c, h, e): head h's columns
    return torch.einsum("hse,che->hsc", v0, w).norm(dim=-1).numpy()  # (h, s)


def hf_value_norms(mod: torch.nn.Module, x: torch.Tensor, n_head: int) -> np.ndarray | None:
    """``value_norms`` (h, s) of a Hugging Face attention module with a ``v_proj`` and an
    ``o_proj`` or ``out_proj`` (GPT-Neo, OPT, the Llama family; grouped values repeated per
    head), from its input ``x`` (1, s, c); None for a module laid out otherwise."""
    v_proj = getattr(mod, "v_proj", None)
    outs = [getattr(mod, name, None) for name in ("o_proj", "out_proj")]
    o = next((m for m in outs if isinstance(m, torch.nn.Linear)), None)
    if not isinstance(v_proj, torch.nn.Linear) or o is None or o.in_features % n_head:
        return None
    with torch.no_grad():
        v = v_proj(x)  # (1, s, g·e)
    e = o.in_features // n_head
    v = v.view(v.shape[0], v.shape[1], -1, e).transpose(1, 2)  # (1, g, s, e)
    if n_head % v.shape[1]:
        return None
    v = v.repeat_interleave(n_head // v.shape[1], dim=1)  # (1, h, s, e): each group's value
    return value_norms(v, o.weight)


def _output_weight(mixer: torch.nn.Module) -> torch.Tensor | None:
    """The weight of a mixer's output projection, or None if it has none (a single head)."""
    o = getattr(mixer, "o", None)
    return o.weight if isinstance(o, torch.nn.Linear) else None


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
            blocks = model.trace(idx).blocks  # the model core's one way to look inside
    finally:
        model.train(was_training)
    out = []
    for block, b in zip(model.blocks, blocks, strict=True):
        if b.weights is None:  # the no-context mixer: nothing to show
            continue
        if b.q is None:  # the uniform mean: equal (zero) scores, one "head" whose values are x
            w = numpy_of(b.weights)  # (1, t, s)
            norms = value_norms(b.x[:, None], None)  # (1, s)
            out.append(LayerTrace(weights=w, scores=np.zeros_like(w), value_norms=norms))
            continue
        out.append(LayerTrace(
            weights=numpy_of(b.weights), q=numpy_of(b.q), k=numpy_of(b.k),
            scale=float(b.scale), bias=None if b.bias is None else numpy_of(b.bias[None]),
            value_norms=value_norms(b.v, _output_weight(block.mixer)),
        ))  # fmt: skip
    if not out:
        mixer = getattr(getattr(model, "cfg", None), "mixer", None)
        if mixer in ("rnn", "lstm"):
            raise UsageError("this model's mixer is a recurrence (%s): it carries the context "
                             "in a state, with no weights over positions to show; explore an "
                             "attention run instead", mixer)
        raise UsageError("this model has no context mixer: no word looks at any other")
    return out
