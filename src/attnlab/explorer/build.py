"""Explorer data from the hand-designed heads and (adapters) from trained models.

Dimension legend: ``L`` layers, ``H`` heads per layer, ``n`` tokens, ``f``
feature columns, ``k`` query/key width of a head (``d_k``).

Every function here returns the page's one input, the *data* dict described in
``attnlab.explorer.page``, with raw unscaled scores: the page itself applies
the softmax, the √d_k division and the causal mask.

Left out: value vectors and head outputs, and models other than attnlab's own
and Hugging Face GPT-2 (the adapters marked TODO are still to be filled in).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.explorer.heads import SENTENCE, feature_matrix, feature_names, hand_heads, words
from attnlab.explorer.page import validate_data, write_page

__all__ = [
    "checkpoint_compute",
    "checkpoint_view",
    "gpt2_scores",
    "hand_compute",
    "hand_designed_page",
    "hand_view",
    "hf_gpt2_compute",
    "hf_gpt2_view",
    "page_data",
    "verb_agreement_view",
    "view_from_scores",
    "winograd_view",
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


def hf_gpt2_compute(model_dir: str | Path) -> Callable[[str], dict[str, Any]]:
    """Load a GPT-2 and its tokenizer saved in ``model_dir`` (no download); return compute."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise FileNotFoundError(f"no model folder at {model_dir}")
    from transformers import AutoTokenizer, GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(model_dir, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    title = f"GPT-2 attention ({model_dir.name})"
    description = "Where each token looks in every head of a GPT-2: choose a token to see its row."

    def compute(text: str) -> dict[str, Any]:
        return page_data(title, description, [hf_gpt2_view(model, tokenizer, text)])

    return compute


# --- attnlab's own models: TODO, once the model and its checkpoints exist ---------------


def checkpoint_view(model: Any, tokenizer: Any, text: str) -> dict[str, Any]:
    """TODO: one view of an attnlab LanguageModel on ``text`` (raw scores per layer and head).

    Read q and k after the projections (and after RoPE where used), score them
    without the √d_k division or mask, add ALiBi's bias if the model uses it,
    and pass them to ``view_from_scores``; refuse text longer than the context
    with a ValueError.
    """
    raise NotImplementedError("explorer: attnlab checkpoints are not wired in yet")


def checkpoint_compute(run: str | Path) -> Callable[[str], dict[str, Any]]:
    """TODO: load the model and tokenizer of a finished training run; return compute."""
    raise NotImplementedError("explorer: attnlab checkpoints are not wired in yet")


def winograd_view(model: Any, sentence: str) -> dict[str, Any]:
    """TODO: the §3.7 Winograd pair (`… too tired …` / `… too wet …`) as two views."""
    raise NotImplementedError("explorer: the Winograd view is not wired in yet")


def verb_agreement_view(model: Any, sentence: str) -> dict[str, Any]:
    """TODO: a trained model on the verb-agreement language (`he works`)."""
    raise NotImplementedError("explorer: the verb-agreement view is not wired in yet")
