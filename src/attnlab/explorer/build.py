"""Explorer data from the hand-designed heads, and the pieces every model adapter shares.

Dimension legend: ``L`` layers, ``H`` heads per layer, ``n`` tokens, ``f``
feature columns, ``k`` query/key width of a head (``d_k``).

Every function here returns the page's one input, the *data* dict described in
``attnlab.explorer.page``, with raw unscaled scores: the page itself applies
the softmax, the √d_k division and the causal mask.

The adapters for attnlab's own models (trained runs, GPT-2 folders converted
into attnlab's model, the Winograd and agreement probes) are in
``attnlab.explorer.models``; ``gpt2_scores`` here reads a ``transformers``
GPT-2 directly, by hooks, and serves as the cross-check of the conversion.

Left out: value vectors and head outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attnlab.explorer.heads import SENTENCE, feature_matrix, feature_names, hand_heads, words
from attnlab.explorer.page import validate_data, write_page

__all__ = [
    "gpt2_scores",
    "hand_compute",
    "hand_designed_page",
    "hand_view",
    "hf_gpt2_view",
    "page_data",
    "view_from_scores",
    "write_page",
]

HAND_TITLE = "Hand-designed attention heads"
HAND_DESCRIPTION = (
    "Where each word of the sentence looks under three heads built by hand from word features "
    "(agreement, previous word, subject): choose a word to see its row of attention weights."
)
MAX_WORDS = 40  # the hand heads have no context limit; this keeps the page readable


def page_data(
    title: str, description: str, views: Sequence[Mapping[str, Any]], *, causal: bool = True
) -> dict[str, Any]:
    """The page's data dict from its views; raises DataError if anything is malformed."""
    data = {"title": title, "description": description, "causal": causal, "views": list(views)}
    validate_data(data)
    return data


def view_from_scores(
    name: str,
    tokens: Sequence[str],
    scores: Any,
    d_k: int,
    head_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One view from raw scores shaped (L, H, n, n), e.g. read out of a model's layers.

    Heads are named ``head 1`` … unless ``head_names`` (H names) says otherwise.
    """
    s = np.asarray(scores, dtype=np.float64)
    n = len(tokens)
    if s.ndim != 4 or s.shape[2:] != (n, n):
        raise ValueError(f"scores must be shaped (L, H, {n}, {n}), got {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite: pass raw q·k scores, before any mask")
    names = [f"head {h + 1}" for h in range(s.shape[1])] if head_names is None else list(head_names)
    if len(names) != s.shape[1]:
        raise ValueError(f"{len(names)} head names for {s.shape[1]} heads")
    layers = [
        {"heads": [{"name": names[h], "d_k": int(d_k), "scores": s[li, h].tolist()}
                   for h in range(s.shape[1])]}
        for li in range(s.shape[0])
    ]  # fmt: skip
    return {"name": name, "tokens": [str(t) for t in tokens], "layers": layers}


def _labelled(rows: Sequence[str], cols: Sequence[str], values: np.ndarray) -> dict[str, Any]:
    return {"rows": list(rows), "cols": list(cols), "values": np.round(values, 4).tolist()}


def hand_view(text: str = SENTENCE, *, max_words: int = MAX_WORDS) -> dict[str, Any]:
    """The hand-designed heads over the words of ``text`` (one layer, three heads).

    Each head carries its W_Q, W_K and the feature columns it reads (rows that
    are zero in both matrices are left out of the display).
    """
    tokens = words(text)
    if not tokens:
        raise ValueError("the sentence is empty")
    if len(tokens) > max_words:
        raise ValueError(f"the sentence has {len(tokens)} words; the limit is {max_words}")
    x = feature_matrix(tokens)  # (n, f)
    cols = feature_names()
    heads = []
    for head in hand_heads():
        used = np.flatnonzero(np.abs(head.w_q).sum(axis=1) + np.abs(head.w_k).sum(axis=1))
        used_names = [cols[f] for f in used]
        heads.append(
            {
                "name": head.name,
                "note": head.note,
                "d_k": len(head.latent),
                "scores": head.scores(x).tolist(),
                "w_q": _labelled(used_names, head.latent, head.w_q[used]),  # (f_used, k)
                "w_k": _labelled(used_names, head.latent, head.w_k[used]),
                "features": _labelled(tokens, used_names, x[:, used]),  # (n, f_used)
            }
        )
    return {"name": "hand-designed", "tokens": tokens, "layers": [{"heads": heads}]}


def hand_compute(text: str) -> dict[str, Any]:
    """Data for any typed sentence under the hand-designed heads (the server's compute)."""
    return page_data(HAND_TITLE, HAND_DESCRIPTION, [hand_view(text)], causal=False)


def hand_designed_page() -> dict[str, Any]:
    """Data for ``La gata que perseguía al ratón estaba muy cansada``."""
    return hand_compute(SENTENCE)


# --- Hugging Face GPT-2 ---------------------------------------------------------------


def gpt2_scores(model: Any, input_ids: Sequence[int]) -> np.ndarray:
    """Raw q·k scores of every head of a ``transformers`` GPT-2, shape (L, H, n, n).

    Reads q and k off each block's ``attn.c_attn`` output with a forward hook,
    so it does not depend on which attention kernel the model runs.
    """
    import torch

    captured: list[torch.Tensor] = []
    blocks = model.transformer.h if hasattr(model, "transformer") else model.h
    hooks = [
        b.attn.c_attn.register_forward_hook(lambda mod, inp, out: captured.append(out))
        for b in blocks
    ]
    try:
        with torch.no_grad():
            model(torch.tensor([list(input_ids)], dtype=torch.long))
    finally:
        for hook in hooks:
            hook.remove()
    n_head, width = model.config.n_head, model.config.n_embd
    out = []
    for qkv in captured:  # (1, n, 3 * width)
        q, k, _ = qkv[0].split(width, dim=-1)  # (n, width) each
        q = q.view(len(input_ids), n_head, width // n_head).transpose(0, 1)  # (H, n, k)
        k = k.view(len(input_ids), n_head, width // n_head).transpose(0, 1)  # (H, n, k)
        out.append((q @ k.transpose(-1, -2)).double().numpy())  # (H, n, n)
    return np.stack(out)  # (L, H, n, n)


def hf_gpt2_view(model: Any, tokenizer: Any, text: str) -> dict[str, Any]:
    """One view of a loaded ``transformers`` GPT-2 and its tokenizer on ``text``."""
    ids = tokenizer.encode(text)
    if not ids:
        raise ValueError("the sentence is empty")
    n_ctx = model.config.n_positions
    if len(ids) > n_ctx:
        raise ValueError(f"the input is {len(ids)} tokens; the model's context is {n_ctx}")
    tokens = [tokenizer.decode([i]) for i in ids]
    d_k = model.config.n_embd // model.config.n_head
    return view_from_scores("GPT-2", tokens, gpt2_scores(model, ids), d_k)
