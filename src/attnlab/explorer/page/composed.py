"""Attention composed across layers: rollout and value-weighted attention of a view.

Dimension legend: ``L`` layers, ``H`` heads of a layer, ``n`` tokens (``i``
query, ``j`` key), ``c`` model width.

A layer's weights say where each position reads *from that layer's input*,
which after the first layer is already a mix of tokens. Two standard ways to
read further, shown beside the raw weights as ``view["composed"]``::

    {"rollout": L × n × n, "value_weighted": L × n × n (optional), "note": str}

- **Rollout** (Abnar & Zuidema 2020, "Quantifying Attention Flow in
  Transformers"): each layer's head-averaged weights A_l with the residual
  connection as the identity, Â_l = 0.5·A_l + 0.5·I (rows still sum to one),
  multiplied through the layers: rollout_1 = Â_1, rollout_l = Â_l · rollout_{l-1}.
  Row i of rollout_l is how much of position i's state after layer l traces
  back to each input token, if every layer mixed only as its weights say.
- **Value-weighted** (Kobayashi et al. 2020, "Attention is Not Only a Weight"):
  per layer, per head, α_ij · ‖f_h(x_j)‖, where f_h(x_j) = v_j W_O^h is what
  key j's value writes into the residual stream through the head's slice of
  the output projection; summed over the heads and each row renormalised to
  sum to one. Each layer stands alone (not multiplied through the layers).

Left out: the layer norms, the MLPs and the size of the residual stream itself
(rollout's 0.5 is the paper's fixed guess, not a measurement), attention
*flow* (the paper's max-flow variant), and Kobayashi's norm of the sum over
heads (the sum of per-head norms here needs only one number per head and key).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attnlab.i18n import text

__all__ = ["ROLLOUT_NOTE", "composed", "rollout", "value_weighted"]

ROLLOUT_NOTE = text("explorer", "composed.note.rollout", "en")  # the note's text: i18n
VALUE_NOTE = text("explorer", "composed.note.value", "en")


def rollout(weights: Sequence[Any]) -> np.ndarray:
    """Attention rollout (L, n, n) of per-layer weights, each (H, n, n) with rows summing to
    one: rollout_l = Â_l · rollout_{l-1}, Â_l = 0.5·mean_h(A_l) + 0.5·I, rollout_0 = I."""
    out, r = [], None
    for w in weights:
        a = np.asarray(w, dtype=np.float64)  # (H, n, n)
        eye = np.eye(a.shape[-1])
        hat = 0.5 * a.mean(axis=0) + 0.5 * eye  # (n, n)
        r = hat if r is None else hat @ r
        out.append(r)
    return np.stack(out)  # (L, n, n)


def value_weighted(weights: Any, value_norms: Any) -> np.ndarray:
    """One layer's value-weighted attention (n, n): Σ_h α_h[i, j] · ‖f_h(x_j)‖, each row
    divided by its sum (a row whose sum is zero stays zero).

    ``weights`` (H, n, n); ``value_norms`` (H, n), ‖v_j W_O^h‖ per head and key.
    """
    a = np.asarray(weights, dtype=np.float64)  # (H, n, n)
    norms = np.asarray(value_norms, dtype=np.float64)  # (H, n)
    m = (a * norms[:, None, :]).sum(axis=0)  # (n, n)
    total = m.sum(axis=-1, keepdims=True)  # (n, 1)
    return np.divide(m, total, out=np.zeros_like(m), where=total > 0)


def composed(
    weights: Sequence[Any],
    value_norms: Sequence[Any] | None,
    *,
    without_values: str = "",
    lang: str = "en",
) -> dict[str, Any]:
    """A view's ``composed`` entry from its per-layer weights (H, n, n) and, where known,
    per-layer value norms (H, n); ``without_values`` says why value-weighted is absent. The
    note is in ``lang`` (``en`` or ``es``)."""
    out: dict[str, Any] = {"rollout": [np.round(m, 7).tolist() for m in rollout(weights)]}
    note = text("explorer", "composed.note.rollout", lang)
    if value_norms is not None:
        out["value_weighted"] = [
            np.round(value_weighted(w, v), 7).tolist()
            for w, v in zip(weights, value_norms, strict=True)
        ]
        note += " " + text("explorer", "composed.note.value", lang)
    else:
        why = without_values or text("explorer", "composed.note.no_values_given", lang)
        note += text("explorer", "composed.note.no_values", lang, why=why)
    out["note"] = note
    return out
