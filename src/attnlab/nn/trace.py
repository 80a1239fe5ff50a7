"""One way to look inside a model: what each block's attention computed.

Dimension legend: ``b`` batch, ``t`` query positions, ``s`` key positions,
``c`` model width, ``h`` heads, ``d`` head width.

``LanguageModel.trace(idx)`` runs one forward pass and returns a ``Trace``:
the logits and, per block, the mixer's input, the queries, keys and values
it made, the scores and the weights. The explorer, the √d_k statistics and
the probe experiments read attention only through it (in the spirit of
TransformerLens's activation cache). The pass runs each mixer's own
projections and its readable kernel, so the weights are those the kernel
computed; the recorded scores are formed once more beside it, from the same q,
k, scale and bias (the kernel does not hand back its pre-softmax scores).

For attention mixers ``softmax(scores masked causally)`` is ``weights``, and
``q @ k.transpose(-2, -1) * scale + bias`` is ``scores``, so a reader can
redo the step with or without the √d_k division. Left out: MLP activations
and the residual stream between sublayers.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True)
class BlockTrace:
    """What one block's context mixer saw and computed (``None`` where it has no such part)."""

    x: Tensor  # (b, t, c) the mixer's input: LN(x) in a pre-norm block, x otherwise
    q: Tensor | None  # (b, h, t, d) queries after RoPE; None for the none/mean mixers
    k: Tensor | None  # (b, h, s, d) keys after RoPE
    v: Tensor | None  # (b, h, s, d_v) values
    scale: float  # the factor the scores are multiplied by: 1/√d_k, or 1 without division
    bias: Tensor | None  # (h, t, s) additive ALiBi bias, added after scaling; None without
    scores: Tensor | None  # (b, h, t, s) q·kᵀ·scale + bias, before the causal mask
    weights: Tensor | None  # (b, h, t, s) the weights used (the mean: its averaging matrix)


@dataclass(frozen=True)
class Trace:
    """The logits of one forward pass and the attention of every block, in order."""

    logits: Tensor  # (b, t, v)
    blocks: list[BlockTrace]

    @property
    def weights(self) -> list[Tensor | None]:
        """Each block's attention weights (b, h, t, s), or None for the no-context mixer."""
        return [block.weights for block in self.blocks]
