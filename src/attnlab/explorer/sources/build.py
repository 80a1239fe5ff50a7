"""The pieces every source of heads shares: the page's data dict from views, and a view from
a model's traced layers.

Dimension legend: ``L`` layers, ``H`` heads per layer, ``n`` tokens, ``f``
feature columns, ``k`` query/key width of a head (``d_k``).

Every function here returns the page's one input, the *data* dict described in
``attnlab.explorer.page.data``: heads as their q and k (or raw scores), never
pre-scaled, so the page itself applies the softmax, the √d_k division and the
causal mask, and its switches recompute live. ``view_from_traces`` turns the
``LayerTrace`` list of any model (``attnlab.explorer.sources.traces``,
``attnlab.explorer.sources.hf``) into one view; ``attnlab.explorer.sources.models`` and
``attnlab.explorer.sources.hf`` wrap it for attnlab's runs and Hugging Face folders.

Left out: value vectors and head outputs (only their norms, for the
value-weighted view).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attnlab.explorer.page.composed import composed
from attnlab.explorer.page.data import rounded, validate_data
from attnlab.explorer.sources.traces import LayerTrace
from attnlab.i18n import text

__all__ = [
    "a_model",
    "family_name",
    "own_scale",
    "page_data",
    "view_from_scores",
    "view_from_traces",
]

# Display names of Hugging Face ``model_type``s in page text ("an OPT model", not "a opt model")
FAMILY_NAMES = {
    "gpt2": "GPT-2", "gpt_neo": "GPT-Neo", "gpt_neox": "GPT-NeoX", "gptj": "GPT-J",
    "gpt_bigcode": "GPTBigCode", "opt": "OPT", "llama": "Llama", "mistral": "Mistral",
    "mixtral": "Mixtral", "qwen2": "Qwen2", "qwen3": "Qwen3", "qwen2_moe": "Qwen2-MoE",
    "bloom": "BLOOM", "mpt": "MPT", "falcon": "Falcon", "phi": "Phi", "phi3": "Phi-3",
    "gemma": "Gemma", "gemma2": "Gemma 2", "olmo": "OLMo", "stablelm": "StableLM",
    "starcoder2": "StarCoder2", "codegen": "CodeGen", "xglm": "XGLM", "biogpt": "BioGPT",
    "ctrl": "CTRL", "mamba": "Mamba", "rwkv": "RWKV", "bert": "BERT", "roberta": "RoBERTa",
    "distilbert": "DistilBERT", "albert": "ALBERT", "electra": "ELECTRA", "t5": "T5",
    "mt5": "mT5", "bart": "BART", "mbart": "mBART", "marian": "Marian", "pegasus": "Pegasus",
}  # fmt: skip


def family_name(model_type: str) -> str:
    """The family's own spelling: ``gpt_neox`` → ``GPT-NeoX``; unknown ones keep their type."""
    return FAMILY_NAMES.get(model_type, model_type)


def a_model(model_type: str) -> str:
    """``a GPT-2 model``, ``an OPT model``, ``an MPT model``: the article as the name is said
    (an initialism whose first letter is said with a vowel, F H L M N R S X, takes ``an``)."""
    name = family_name(model_type)
    letters = name.split("-")[0].split(" ")[0]
    initialism = len(letters) > 1 and letters.isupper()
    vowel = name[:1] in "AEIOUaeiou" or (initialism and name[0] in "FHLMNRSX")
    return f"{'an' if vowel else 'a'} {name} model"


def page_data(
    title: str,
    description: str,
    views: Sequence[Mapping[str, Any]],
    *,
    causal: bool = True,
    scale: bool = True,
) -> dict[str, Any]:
    """The page's data dict from its views; raises DataError if anything is malformed.

    ``causal`` and ``scale`` are the switches' starting state: the model's own
    (a model that does not divide by √d_k starts with ``scale=False``).
    """
    data = {"title": title, "description": description, "causal": causal, "scale": scale,
            "views": list(views)}  # fmt: skip
    validate_data(data)
    return data


def view_from_scores(
    name: str,
    tokens: Sequence[str],
    scores: Any,
    d_k: int,
    head_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One view from raw, unscaled q·k scores shaped (L, H, n, n).

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


def own_scale(traces: Sequence[LayerTrace]) -> bool:
    """Whether the model divides its scores by √d_k (the √d_k switch's starting state)."""
    return any(t.q is not None and t.scale != 1.0 for t in traces)


def _head(trace: LayerTrace, h: int, lang: str) -> dict[str, Any]:
    """Head ``h`` of one traced layer, as the page reads it (its name and note in ``lang``)."""
    head: dict[str, Any] = {"name": text("explorer", "tensors.head", lang, n=h + 1), "d_k": 1}
    if trace.q is not None and trace.k is not None:
        d_k = trace.q.shape[-1]
        if not (math.isclose(trace.scale, d_k**-0.5, rel_tol=1e-6) or trace.scale == 1.0):
            raise ValueError(f"a scale of {trace.scale:g} is neither 1/√d_k nor 1")
        head.update(d_k=d_k, q=rounded(trace.q[h]), k=rounded(trace.k[h]))
    elif trace.scores is not None:
        head.update(scores=rounded(trace.scores[h]), note=text("explorer", "build.mean_note", lang))
    if trace.bias is not None:
        head["bias"] = rounded(trace.bias[h])
    if trace.window is not None:
        head["window"] = int(trace.window)
    if trace.weights is not None:
        head["weights"] = np.round(trace.weights[h], 7).tolist()  # in [0, 1]: 7 decimals
    return head


def view_from_traces(
    name: str,
    tokens: Sequence[str],
    traces: Sequence[LayerTrace],
    *,
    fixed: str | None = None,
    without_values: str | None = None,
    lang: str = "en",
    compose: bool = True,
) -> dict[str, Any]:
    """One view from a model's traced layers: q and k where known, the model's own weights,
    and (unless ``compose`` is False) the attention composed across layers
    (``attnlab.explorer.page.composed``).

    ``fixed`` is the one-line reason a view whose heads have only weights cannot
    be recomputed by the switches; ``without_values`` why value-weighted attention
    is left out when a trace lacks its ``value_norms`` (by default: they were not read).
    Head names and notes are in ``lang`` (``en`` or ``es``).
    """
    layers = [{"heads": [_head(t, h, lang) for h in range(t.n_head)]} for t in traces]
    view: dict[str, Any] = {"name": name, "tokens": [str(t) for t in tokens], "layers": layers}
    if fixed is not None:
        view["fixed"] = fixed
    if compose and traces and all(t.weights is not None for t in traces):
        norms = [t.value_norms for t in traces]
        known = all(v is not None for v in norms)
        why = without_values or text("explorer", "build.no_values", lang)
        view["composed"] = composed([t.weights for t in traces], norms if known else None,
                                    without_values=why, lang=lang)  # fmt: skip
    return view
