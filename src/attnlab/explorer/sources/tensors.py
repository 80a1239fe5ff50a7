"""Explorer data from attention weights given as a tensor, from any library.

Dimension legend: ``L`` layers, ``H`` heads per layer, ``n`` tokens (query
``i``, key ``j``).

``weights_page(weights, tokens)`` reads what TransformerLens's activation
cache (``cache["pattern", l][0]``), a PyTorch forward hook or Hugging Face's
``output_attentions`` hold: softmax weights shaped (L, H, n, n), (H, n, n) or
(n, n), as NumPy or torch (or a list of per-layer (H, n, n) tensors, each
possibly with a leading batch of one, as ``output_attentions`` gives). Without
the queries and keys behind them the switches cannot recompute anything, so
the view is *fixed* and says why; rollout is computed from the weights, and
value-weighted attention, which needs the values, is left out (said so).

Left out: batches (one sentence at a time), and scores before the softmax
(pass the weights the model used, masks applied).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attnlab.errors import DataError, UsageError
from attnlab.explorer.page.composed import composed
from attnlab.explorer.page.render import counted
from attnlab.explorer.sources.build import page_data
from attnlab.i18n import text

__all__ = ["ROW_SUM_TOLERANCE", "as_weights", "weights_page"]

ROW_SUM_TOLERANCE = 1e-2  # |row sum − 1| accepted: bfloat16 rows sum to 1 ± a few 1e-3


def _say(key: str, lang: str, **fields: object) -> str:
    return text("explorer", key, lang, **fields)


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor, on any device, in any precision
        import torch

        if x.is_complex():
            raise UsageError("weights must be real numbers, not %s", x.dtype)
        return x.detach().to("cpu", torch.float64).numpy()
    a = np.asarray(x)
    if np.iscomplexobj(a):  # float64 of it would drop the imaginary part with a warning
        raise UsageError("weights must be real numbers, not %s", a.dtype)
    return np.asarray(a, dtype=np.float64)


def as_weights(weights: Any) -> np.ndarray:
    """``weights`` as float64 (L, H, n, n); a UsageError or DataError in one line if it is not
    attention weights of one sentence."""
    try:
        if isinstance(weights, (list, tuple)) and weights and hasattr(weights[0], "shape"):
            layers = [_numpy(w) for w in weights]  # per layer: (H, n, n) or (1, H, n, n)
            layers = [w[0] if w.ndim == 4 and w.shape[0] == 1 else w for w in layers]
            a = np.stack(layers)
        else:
            a = _numpy(weights)
    except UsageError:
        raise
    except (TypeError, ValueError) as err:
        raise UsageError("weights must be one array of numbers (NumPy or torch): %s", err) from err
    if a.ndim not in (2, 3, 4):
        if a.ndim == 5:
            raise UsageError("weights must be shaped (L, H, n, n), (H, n, n) or (n, n), got %s "
                             "(one sentence at a time: index the batch first)", a.shape)
        raise UsageError("weights must be shaped (L, H, n, n), (H, n, n) or (n, n), got %s",
                         a.shape)
    if a.shape[-1] != a.shape[-2] or 0 in a.shape:  # the shape as given, not as padded
        raise UsageError("weights must end in a square (n, n) of positions, got %s", a.shape)
    a = a.reshape((1,) * (4 - a.ndim) + a.shape)  # (L, H, n, n)
    if not np.isfinite(a).all():
        raise DataError("weights must be finite: pass the softmax weights, masks applied")
    if a.min() < 0 or a.max() > 1 + ROW_SUM_TOLERANCE:
        raise DataError("weights must lie in [0, 1] (softmax weights), found %.3g to %.3g: "
                        "pass the weights, not scores", a.min(), a.max())  # fmt: skip
    sums = a.sum(axis=-1)  # (L, H, n)
    off = np.abs(sums - 1)
    if off.max() > ROW_SUM_TOLERANCE:
        layer, head, row = np.unravel_index(int(np.argmax(off)), off.shape)
        raise DataError("weights of layer %s head %s row %s sum to %.4g, not 1: pass each "
                        "row's softmax weights", layer + 1, head + 1, row + 1,
                        sums[layer, head, row])  # fmt: skip
    return a


def weights_page(
    weights: Any, tokens: Sequence[str], *, title: str | None = None, lang: str = "en"
) -> dict[str, Any]:
    """The page's data for attention weights given directly (see the module docstring):
    one fixed view, its heads named ``head 1`` …, its rollout, and the causal switch on
    exactly when every weight after its query is zero; its text in ``lang`` (``en``, ``es``)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise UsageError("tokens must be a list of strings, one per position")
    odd = next((i for i, t in enumerate(tokens) if not isinstance(t, str)), None)
    if odd is not None:
        raise UsageError("tokens must be strings, one per position: token %s is %r (%s)",
                         odd + 1, tokens[odd], type(tokens[odd]).__name__)  # fmt: skip
    a = as_weights(weights)  # (L, H, n, n)
    n_layer, n_head, n, _ = a.shape
    if len(tokens) != n:
        raise UsageError("%s tokens given for weights over %s positions", len(tokens), n)
    causal = not np.triu(a, 1).any()
    layers = [
        {"heads": [{"name": _say("tensors.head", lang, n=h + 1), "d_k": 1,
                    "weights": np.round(a[li, h], 7).tolist()} for h in range(n_head)]}
        for li in range(n_layer)
    ]  # fmt: skip
    view = {
        "name": _say("tensors.view", lang),
        "tokens": list(tokens),
        "layers": layers,
        "fixed": _say("tensors.fixed", lang),
        "given": True,  # the page says "weights as given", not "as the model computed them"
        "composed": composed(list(a), None, without_values=_say("tensors.no_values", lang),
                             lang=lang),
    }
    description = _say("tensors.description", lang, layers=counted(n_layer, "layer", lang),
                       heads=counted(n_head, "head", lang), tokens=counted(n, "token", lang),
                       causal=_say("tensors.causal" if causal else "tensors.not_causal", lang))
    title = _say("tensors.title", lang) if title is None else title
    return page_data(title, description, [view], causal=causal, scale=False)
