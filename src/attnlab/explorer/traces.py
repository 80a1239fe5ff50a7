"""What the explorer reads of a model's attention: one ``LayerTrace`` per attention layer.

Dimension legend: ``h`` heads, ``t`` query positions, ``s`` key positions
(``t == s`` here: one whole sentence, no cache), ``d`` query/key width of a
head (``d_k``).

``LayerTrace`` is the model core's ``BlockTrace`` (``attnlab.nn.trace``) for
batch item 0, in NumPy, with what a Hugging Face model adds: a sliding
``window``. Every source of heads produces it: ``attnlab_traces`` for
attnlab's ``LanguageModel`` (through its one trace API, ``LanguageModel.trace``:
no hooks of the explorer's own),
``attnlab.explorer.hf`` for Hugging Face models, so the page builder reads one
shape whatever the model.

Left out: value vectors, head outputs, and batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnlab.errors import UsageError

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
            blocks = model.trace(idx).blocks  # the model core's one way to look inside
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
        raise UsageError("this model has no context mixer: no word looks at any other")
    return out
