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

Names a TransformerLens user knows. ``trace["blocks.0.attn.hook_pattern"]`` is
block 0's ``weights`` (``hook_attn_scores``: ``scores``; ``hook_q``, ``hook_k``,
``hook_v``: q, k, v), beside the attributes; ``Trace.names()`` lists them. The
shapes stay attnlab's, heads before positions ((b, h, t, d) for q, k, v, where
TransformerLens has (b, t, h, d)); its scores are masked, ours are not.

Ablation. ``ablate(model, {(layer, head): "zero" | "mean"})`` is a context
manager: inside it, ``forward`` and ``trace`` run with each named head's output
(its slice of the concatenated heads, before W_o; TransformerLens's ``hook_z``)
replaced by zeros or by its mean (``head_means``: over a batch, per position),
as ablations of induction circuits do (Olsson et al. 2022). Hooks on the
block's own modules do it, so nothing else in the model changes; leaving the
``with`` removes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

ABLATIONS = ("zero", "mean")
# TransformerLens's hook names for what a BlockTrace holds (blocks.{L}.attn.<name>)
ALIASES = {"hook_pattern": "weights", "hook_attn_scores": "scores", "hook_q": "q",
           "hook_k": "k", "hook_v": "v"}


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

    def names(self) -> list[str]:
        """The TransformerLens-style names this trace answers to, block by block."""
        return [f"blocks.{i}.attn.{alias}" for i, b in enumerate(self.blocks)
                for alias, field in ALIASES.items() if getattr(b, field) is not None]

    def __getitem__(self, name: str) -> Tensor:
        """``trace["blocks.L.attn.hook_pattern"]``: a recorded tensor by its alias."""
        parts = name.split(".")
        if (len(parts) != 4 or parts[0] != "blocks" or parts[2] != "attn"
                or parts[3] not in ALIASES or not parts[1].isdigit()
                or int(parts[1]) >= len(self.blocks)):
            raise KeyError(f"{name!r}: names are blocks.L.attn.<{'|'.join(ALIASES)}> with L < "
                           f"{len(self.blocks)}")
        value = getattr(self.blocks[int(parts[1])], ALIASES[parts[3]])
        if value is None:
            raise KeyError(f"{name!r}: block {parts[1]} records no {ALIASES[parts[3]]}")
        return value


Heads = Mapping[tuple[int, int], str]  # (layer, head), 0-based -> "zero" | "mean"


def _head_input(model: Any, layer: int) -> tuple[torch.nn.Module, int]:
    """The module whose input holds block ``layer``'s heads side by side (W_o, an identity
    without ``out_proj``) and the head count. A single-head mixer (no W_o, and its trace
    bypasses the module call) is refused: ablating its one head is removing the block."""
    mixer = model.blocks[layer].mixer
    if mixer is None or not hasattr(mixer, "o"):
        raise ValueError(f"block {layer} has no multi-head attention (mixer 'mha') to ablate")
    return mixer.o, mixer.n_head


def head_means(model: Any, idx: Tensor) -> dict[tuple[int, int], Tensor]:
    """Every head's output on ``idx`` (b, t), averaged over the batch: (t, d) per head."""
    caught: dict[int, Tensor] = {}
    hooks = []
    for layer in range(len(model.blocks)):
        if not hasattr(model.blocks[layer].mixer, "o"):
            continue  # no heads to average (no mixer, the mean, a single head)
        module, _ = _head_input(model, layer)

        def keep(mod: Any, args: tuple, layer: int = layer) -> None:
            caught[layer] = args[0].detach()

        hooks.append(module.register_forward_pre_hook(keep))
    try:
        with torch.no_grad():
            model(idx)
    finally:
        for h in hooks:
            h.remove()
    out = {}
    for layer, z in caught.items():
        n_head = _head_input(model, layer)[1]
        b, t, hd = z.shape
        per_head = z.view(b, t, n_head, hd // n_head).mean(0)  # (t, h, d)
        out.update({(layer, h): per_head[:, h] for h in range(n_head)})
    return out


@contextmanager
def ablate(model: Any, heads: Heads, means: Mapping[tuple[int, int], Tensor] | None = None
           ) -> Iterator[None]:
    """Run ``model`` with the named heads' outputs zeroed or replaced by ``means[(l, h)]``
    (``head_means``; positions past its length take its last row's mean over positions)."""
    by_layer: dict[int, dict[int, str]] = {}
    for (layer, head), how in heads.items():
        if how not in ABLATIONS:
            raise ValueError(f"ablation {how!r}: choose one of {', '.join(ABLATIONS)}")
        if how == "mean" and (means is None or (layer, head) not in means):
            raise ValueError(f"mean ablation of layer {layer} head {head} needs its mean "
                             "(head_means)")
        by_layer.setdefault(layer, {})[head] = how
    hooks = []
    for layer, which in by_layer.items():
        module, n_head = _head_input(model, layer)
        bad = [h for h in which if not 0 <= h < n_head]
        if bad:
            raise ValueError(f"layer {layer} has {n_head} heads; no head {bad[0]}")

        def replace(z: Tensor, layer: int = layer, which: dict = which, n: int = n_head) -> Tensor:
            b, t, hd = z.shape
            z = z.clone().view(b, t, n, hd // n)  # (b, t, h, d)
            for h, how in which.items():
                if how == "zero":
                    z[:, :, h] = 0
                else:
                    mean = means[(layer, h)].to(z.dtype)  # (t', d)
                    if mean.shape[0] < t:
                        tail = mean.mean(0, keepdim=True).expand(t - mean.shape[0], -1)
                        mean = torch.cat([mean, tail])
                    z[:, :, h] = mean[:t]
            return z.view(b, t, hd)

        hooks.append(module.register_forward_pre_hook(lambda m, a, f=replace: (f(a[0]),)))
    try:
        yield
    finally:
        for h in hooks:
            h.remove()
