"""Head-role scores on repeated random tokens (Olsson et al. 2022, "In-context Learning
and Induction Heads", §2 and appendix on head scores; Elhage et al. 2021).

Dimension legend: ``n`` probe rows, ``L`` layers, ``h`` heads, ``t`` query positions,
``s`` key positions, ``m`` half of a probe row.

The probe (``attnlab.data.repeated.repeated_probe``): ``n`` rows of ``m`` random
tokens from the model's own vocabulary, then the same ``m`` tokens again, with a
fixed seed. On attention weights ``A`` (n, h, t, s) of one layer, per head,
averaged over rows:

- *previous-token*: mean ``A[t, t-1]`` over queries ``t ≥ 1``;
- *induction* (prefix matching): mean ``A[m+i, i+1]`` over the second half,
  ``i = 0 … m-1``: from a token to the token that followed its earlier occurrence;
- *duplicate-token*: mean ``A[m+i, i]``: to the earlier occurrence itself;
- *first-token* ("sink"): mean ``A[t, 0]`` over queries ``t ≥ 1``.

Each is a mean of attention weights, so it lies in [0, 1]; a head that does the
role exactly scores 1. Chance for a uniform causal row at query ``t`` is
``1/(t+1)``. Left out: the copying (OV) score, and scores on natural text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnlab.data.repeated import repeated_probe
from attnlab.errors import UsageError
from attnlab.i18n.logs import Grouped

SCORES = ("previous", "induction", "duplicate", "sink")
PROBE_HALF = 25  # tokens before the repeat (capped by the context): TransformerLens's seq_len
PROBE_ROWS = 8  # probe sequences
PROBE_SEED = 0  # the standard probe's seed


@dataclass(frozen=True)
class HeadScores:
    """Every score of every head, and the probe it was measured on."""

    scores: dict[str, np.ndarray]  # score name -> (L, h)
    probe: np.ndarray  # (n, 2·m) the token ids

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: the probe's size and per score a list of layers of heads."""
        n, t = self.probe.shape
        return {"probe": {"rows": n, "half": t // 2, "seed_rows": self.probe[:1].tolist()},
                **{k: np.round(v, 6).tolist() for k, v in self.scores.items()}}

    def best(self, score: str) -> tuple[int, int, float]:
        """(layer, head, value) of the head with the highest ``score`` (0-based)."""
        grid = self.scores[score]
        layer, head = np.unravel_index(int(np.argmax(grid)), grid.shape)
        return int(layer), int(head), float(grid[layer, head])


def scores_of_weights(weights: list[np.ndarray], half: int) -> dict[str, np.ndarray]:
    """The four scores (L, h) from each layer's weights (n, h, 2·half, 2·half) on the probe."""
    m = half
    second = np.arange(m, 2 * m)  # queries of the repeat
    out: dict[str, list] = {k: [] for k in SCORES}
    for a in weights:
        a = np.asarray(a, dtype=np.float64)
        t = np.arange(1, a.shape[-2])
        out["previous"].append(a[:, :, t, t - 1].mean((0, 2)))
        out["induction"].append(a[:, :, second, second - m + 1].mean((0, 2)))
        out["duplicate"].append(a[:, :, second, second - m].mean((0, 2)))
        out["sink"].append(a[:, :, t, 0].mean((0, 2)))
    return {k: np.stack(v) for k, v in out.items()}  # (L, h) each


def _facts(model: Any) -> tuple[int, int | None]:
    """Vocabulary size and context length of an attnlab or a Hugging Face model."""
    cfg = getattr(model, "cfg", None)
    if cfg is not None and hasattr(cfg, "vocab_size"):
        return cfg.vocab_size, cfg.n_ctx
    config = model.config
    context = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions",
                                                                          None)
    return config.vocab_size, context


def attention_weights(model: Any, ids: torch.Tensor) -> list[np.ndarray]:
    """Each attention layer's weights (n, h, t, s) on ``ids`` (n, t): through ``trace`` for
    an attnlab model, ``output_attentions`` for a Hugging Face one. Layers without weights
    (no mixer) are left out."""
    with torch.no_grad():
        if hasattr(model, "trace"):
            weights = model.trace(ids).weights
        else:
            weights = list(model(ids, output_attentions=True).attentions)
    return [w.float().cpu().numpy() for w in weights if w is not None]


def head_scores(model: Any, *, vocab_size: int | None = None, half: int | None = None,
                rows: int = PROBE_ROWS, seed: int = PROBE_SEED) -> HeadScores:
    """Previous-token, induction, duplicate-token and sink scores of every head of ``model``
    (an attnlab ``LanguageModel`` or a Hugging Face causal LM) on the standard probe.

    ``vocab_size`` limits the probe's ids (default: the model's vocabulary); ``half``
    defaults to ``PROBE_HALF`` or half the context, whichever is smaller. Run it inside
    ``attnlab.nn.trace.ablate`` to score an ablated model."""
    vocab, context = _facts(model)
    m = half or (PROBE_HALF if context is None else min(PROBE_HALF, context // 2))
    if m < 2:
        raise UsageError("the probe needs at least 2 tokens before the repeat, got %s", m)
    if context is not None and 2 * m > context:  # before drawing rows of that length
        raise UsageError("the probe of %s tokens repeated once (%s) exceeds the model's context "
                         "of %s; use at most %s", Grouped(m), Grouped(2 * m), Grouped(context),
                         Grouped(context // 2))
    probe = repeated_probe(vocab_size or vocab, m, n=rows, seed=seed)  # (n, 2·m)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        weights = attention_weights(model, torch.from_numpy(probe).to(device))
    finally:
        model.train(was_training)
    return HeadScores(scores_of_weights(weights, m), probe)
