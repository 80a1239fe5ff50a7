"""Explorer data from a model that Hugging Face ``transformers`` loads from a local folder:
a causal language model (GPT-2, GPT-Neo, OPT and the Llama family: Llama, Mistral, Qwen2,
Qwen3, …) here; an encoder (BERT and its kin) or an encoder–decoder (T5, BART, Marian, …)
in ``attnlab.explorer.sources.hf_seq``, where ``hf_compute`` sends them.

Dimension legend: ``h`` heads, ``g`` key/value heads (grouped-query attention),
``t`` positions, ``d`` query/key width of a head, ``c`` model width.

The weights shown are the library's own: ``output_attentions=True`` under the
readable ("eager") kernel. For the causal and √d_k switches the page also
needs each head's q and k, which the library does not return; a small reader
per family rebuilds them from the attention module's input (caught by a
forward pre-hook on that Hugging Face module) with the module's own
projections, norms and rotary embedding. The rebuilt softmax(q·kᵀ·scale) is
then checked against the library's weights, and a family whose rebuild does
not match (or that has no reader) is shown with its weights only, the
switches off and the reason on the page.

A standard GPT-2 is instead converted into attnlab's own model
(``attnlab.nn.gpt2``) and traced like any attnlab model; its weights equal
the library's (tested).

Nothing is downloaded (``local_files_only``). Left out: models without attention
(Mamba, RWKV), models over speech or images, padding, and ALiBi families (BLOOM,
MPT), which are shown with their weights only.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.errors import DataError, UsageError, require
from attnlab.explorer.sources.build import (
    a_model,
    family_name,
    own_scale,
    page_data,
    view_from_traces,
)
from attnlab.explorer.sources.hf_files import (
    check_tokenizer_files,
    check_weight_files,
    hf_token_strings,
    is_encoder,
    load_tokenizer,
    load_weights,
    model_kind,
    quiet_transformers,
    read_config,
)
from attnlab.explorer.sources.hf_seq import (
    matched,
    rebuilt_weights,
    seq_compute,
    split_heads,
)
from attnlab.explorer.sources.traces import LayerTrace, attnlab_traces, hf_value_norms, numpy_of
from attnlab.i18n import text as say

__all__ = ["HFModel", "hf_compute", "hf_token_strings", "hf_traces", "load_hf"]

# GPT-2 options that attnlab's conversion leaves out (attnlab.nn.gpt2)
GPT2_UNCONVERTED = (
    "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention",
)  # fmt: skip

Compute = Callable[[str], dict[str, Any]]
# a reader: (attention module, its input (1, t, c), its call's kwargs, layer index)
#   -> q (1, h, t, d), k (1, h, t, d), scale, window
Reader = Callable[[Any, torch.Tensor, dict, int], tuple[torch.Tensor, torch.Tensor, float, Any]]


def _read_gpt2(mod: Any, x: torch.Tensor, kwargs: dict, layer: int) -> tuple:
    q, k, _ = mod.c_attn(x).split(mod.split_size, dim=2)  # (1, t, c) each
    return split_heads(q, mod.head_dim), split_heads(k, mod.head_dim), float(mod.scaling), None


def _read_gpt_neo(mod: Any, x: torch.Tensor, kwargs: dict, layer: int) -> tuple:
    window = mod.config.window_size if mod.attention_type == "local" else None
    q, k = split_heads(mod.q_proj(x), mod.head_dim), split_heads(mod.k_proj(x), mod.head_dim)
    return q, k, 1.0, window  # GPT-Neo does not divide by √d_k


def _read_opt(mod: Any, x: torch.Tensor, kwargs: dict, layer: int) -> tuple:
    q, k = split_heads(mod.q_proj(x), mod.head_dim), split_heads(mod.k_proj(x), mod.head_dim)
    return q, k, float(mod.scaling), None  # OPT scales q itself; here the scale stays apart


def _read_llama(mod: Any, x: torch.Tensor, kwargs: dict, layer: int) -> tuple:
    """Llama-style: q_proj, k_proj, optional per-head q_norm/k_norm, rotary, grouped keys."""
    b, t, _ = x.shape
    q = mod.q_proj(x).view(b, t, -1, mod.head_dim)  # (b, t, h, d)
    k = mod.k_proj(x).view(b, t, -1, mod.head_dim)  # (b, t, g, d)
    if hasattr(mod, "q_norm"):
        q, k = mod.q_norm(q), mod.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)  # (b, h, t, d), (b, g, t, d)
    cos, sin = kwargs["position_embeddings"]
    rotate = sys.modules[type(mod).__module__].apply_rotary_pos_emb  # the family's own RoPE
    q, k = rotate(q, k, cos, sin)
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # (b, h, t, d): each group's key
    window = getattr(mod, "sliding_window", None)
    if window is None and getattr(mod.config, "model_type", "") == "mistral":
        window = getattr(mod.config, "sliding_window", None)
    return q, k, float(mod.scaling), window


def _reader(model_type: str, module: Any) -> Reader | None:
    if model_type == "gpt2":
        return _read_gpt2
    if model_type == "gpt_neo":
        return _read_gpt_neo
    if model_type == "opt":
        return _read_opt
    if all(hasattr(module, a) for a in ("q_proj", "k_proj", "head_dim", "scaling")):
        return _read_llama
    return None


def _attention_modules(model: torch.nn.Module, model_type: str) -> list[Any]:
    """The modules that compute each layer's q·k, in layer order."""
    by_family = {"gpt2": ("c_attn",), "gpt_neo": ("q_proj", "attention_type")}
    wanted = by_family.get(model_type, ("q_proj", "k_proj"))
    return [
        m for m in model.modules()
        if type(m).__name__.endswith("Attention") and all(hasattr(m, a) for a in wanted)
    ]  # fmt: skip


def _allowed(t: int, window: int | None) -> np.ndarray:
    back = np.arange(t)[:, None] - np.arange(t)[None, :]  # (t, t) i - j
    return (back >= 0) & ((back < window) if window else True)


def hf_traces(model: torch.nn.Module, ids: list[int]) -> tuple[list[LayerTrace], str | None]:
    """Every layer of a Hugging Face causal LM on ``ids``: the library's weights, with the
    rebuilt q and k where they reproduce them; and the reason the switches are off, if so."""
    model_type = getattr(model.config, "model_type", "?")
    family = family_name(model_type)  # as page text spells it
    modules = _attention_modules(model, model_type)
    captured: dict[int, tuple[torch.Tensor, dict]] = {}

    def catch(i: int) -> Callable:
        def hook(mod: Any, args: tuple, kwargs: dict) -> None:
            captured[i] = (args[0] if args else kwargs["hidden_states"], kwargs)

        return hook

    hooks = [m.register_forward_pre_hook(catch(i), with_kwargs=True) for i, m in enumerate(modules)]
    device = next(model.parameters()).device
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids], device=device), output_attentions=True)
    finally:
        for hook in hooks:
            hook.remove()
    weights = [numpy_of(a) for a in out.attentions]  # (h, t, t) each
    library = [LayerTrace(weights=w) for w in weights]
    if len(modules) != len(weights) or _reader(model_type, modules[0]) is None:
        return library, (f"the explorer has no reader for the q and k of {family} models, so "
                         "the weights are the library's own")  # fmt: skip
    traces, worst = [], 0.0
    try:
        for i, (mod, w) in enumerate(zip(modules, weights, strict=True)):
            x, kwargs = captured[i]
            with torch.no_grad():
                q, k, scale, window = _reader(model_type, mod)(mod, x, kwargs, i)
            q, k = numpy_of(q), numpy_of(k)  # (h, t, d)
            if not (scale == 1.0 or math.isclose(scale, q.shape[-1] ** -0.5, rel_tol=1e-6)):
                return library, f"{family} scales q·k by {scale:g}, not by 1/√d_k or 1"
            rebuilt = rebuilt_weights(q, k, scale, _allowed(q.shape[1], window))  # (h, t, t)
            worst = max(worst, float(np.abs(rebuilt - w).max()))
            traces.append(LayerTrace(weights=w, q=q, k=k, scale=scale, window=window,
                                     value_norms=hf_value_norms(mod, x, q.shape[0])))
    except (AttributeError, KeyError, TypeError, ValueError, RuntimeError) as err:
        return library, f"the q and k of this {family} model could not be rebuilt ({err})"
    return matched(traces, library, worst, family)


class HFModel:
    """A loaded folder: the model (or its attnlab conversion), its tokenizer and facts."""

    def __init__(
        self, folder: Path, model: torch.nn.Module, tokenizer: Any, converted: bool
    ) -> None:
        self.folder, self.model, self.tokenizer = folder, model, tokenizer
        self.converted = converted
        cfg = model.cfg if converted else model.config
        self.model_type = "gpt2" if converted else cfg.model_type
        self.context = (cfg.n_ctx if converted else getattr(cfg, "max_position_embeddings", None)
                        or getattr(cfg, "n_positions", None))  # fmt: skip

    def view(self, text: str, name: str | None = None) -> tuple[dict[str, Any], bool]:
        """One view of ``text`` and whether the model divides by √d_k."""
        ids = list(self.tokenizer(text)["input_ids"])
        if not ids:
            raise UsageError("the sentence is empty")
        if self.context and len(ids) > self.context:
            raise UsageError("the input is %s tokens; the model's context is %s", len(ids),
                             self.context)  # fmt: skip
        if self.converted:
            traces, fixed = attnlab_traces(self.model, ids), None
        else:
            traces, fixed = hf_traces(self.model, ids)
        tokens = hf_token_strings(self.tokenizer, ids)
        view = view_from_traces(name or self.model_type, tokens, traces, fixed=fixed)
        return view, own_scale(traces) if fixed is None else True


def _check_folder(folder: Path) -> Any:
    config = read_config(folder)
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    if type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING or config.is_encoder_decoder:
        raise DataError("%s holds a %s model, which is not a causal language model "
                        "(AutoModelForCausalLM does not load it)", folder,
                        config.model_type)  # fmt: skip
    if is_encoder(config):
        if config.architectures:
            raise DataError("%s holds a %s encoder saved as %s (is_decoder is false): its "
                            "tokens look at later tokens too, so it is not a causal language "
                            "model", folder, config.model_type,
                            config.architectures[0])  # fmt: skip
        raise DataError("%s holds a %s encoder (is_decoder is false): its tokens look at later "
                        "tokens too, so it is not a causal language model", folder,
                        config.model_type)  # fmt: skip
    check_tokenizer_files(folder)
    return config


def load_hf(folder: str | Path, device: torch.device | None = None) -> HFModel:
    """Load a causal LM and its tokenizer from a local folder, on ``device`` (default: the
    resolved ``auto`` device); a folder that cannot be shown is a DataError saying why.

    transformers' progress bars stay off and its warnings (about the folder's own config,
    say) are gathered into one logged line (``quiet_transformers``). Without transformers
    (the ``hf`` extra), a ``UsageError`` saying how to install it."""
    require("transformers", "hf", "reading a Hugging Face folder")
    with quiet_transformers(str(folder)):
        return _load_hf(Path(folder), device)


def _load_hf(folder: Path, device: torch.device | None) -> HFModel:
    from attnlab.train.runtime import resolve_device

    config = _check_folder(folder)
    check_weight_files(folder)
    device = device or resolve_device("auto")
    tokenizer = load_tokenizer(folder)
    model = load_weights(folder, config)
    if config.model_type == "gpt2" and not any(getattr(config, a, False) for a in GPT2_UNCONVERTED):
        from attnlab.nn.gpt2 import from_hf

        return HFModel(folder, from_hf(model).to(device).eval(), tokenizer, converted=True)
    model = model.to(device).eval()
    with torch.no_grad():
        probe = model(torch.tensor([[0, 1, 2]], device=device), output_attentions=True)
    if not getattr(probe, "attentions", None) or probe.attentions[0] is None:
        raise DataError("%s holds a %s model, which returns no attention weights "
                        "(output_attentions): there is no attention to show", folder,
                        config.model_type)  # fmt: skip
    later = max(float(torch.triu(a[0].float(), diagonal=1).abs().max()) for a in probe.attentions)
    if later > 0:  # an encoder the config checks did not catch
        raise DataError("%s holds a %s model whose tokens give weight to later tokens (up to "
                        "%.2g): not a causal language model", folder, config.model_type, later)
    return HFModel(folder, model, tokenizer, converted=False)


def hf_compute(folder: str | Path, *, target: str | None = None, lang: str = "en") -> Compute:
    """Load the folder once; return ``compute(text) -> data`` for the page or the server.

    A causal language model gives one view; an encoder one view and an encoder–decoder
    three, of ``text`` as source and ``target`` (default: the model's greedy output), with
    their names in ``lang`` (``attnlab.explorer.sources.hf_seq``). A folder that cannot
    be shown, or a ``target`` for a model with no decoder to read it, says why in one line."""
    require("transformers", "hf", "reading a Hugging Face folder")
    folder = Path(folder)
    with quiet_transformers(str(folder)):
        config = read_config(folder)
    kind = model_kind(config)
    if kind is None:
        raise DataError("%s holds a %s model, which is none of the kinds the explorer shows: "
                        "a causal language model (GPT-2, OPT, Llama…), a text encoder (BERT, "
                        "RoBERTa…) or a text encoder–decoder (T5, BART, Marian…)", folder,
                        config.model_type)  # fmt: skip
    if target is not None and kind != "encoder-decoder":
        family = family_name(config.model_type)
        if kind == "encoder":
            raise UsageError("%s holds an encoder (%s), which has no decoder to read a target: "
                             "--target is for encoder–decoders (T5, BART, Marian…); leave it "
                             "out", folder, family)  # fmt: skip
        raise UsageError("%s holds a causal language model (%s), which has no decoder to read "
                         "a target: --target is for encoder–decoders (T5, BART, Marian…); "
                         "leave it out", folder, family)  # fmt: skip
    if kind != "causal":
        return seq_compute(folder, config, kind, target=target, lang=lang)
    loaded = load_hf(folder)
    family = family_name(loaded.model_type)
    how = say("explorer", "hf.converted" if loaded.converted else "hf.library_weights", lang)
    model = a_model(loaded.model_type) if lang == "en" else \
        say("explorer", "hf.a_model", lang, family=family)
    title = say("explorer", "hf.title", lang, folder=loaded.folder.name, family=family)
    description = say("explorer", "hf.causal_description", lang, model=model,
                      folder=loaded.folder.name, how=how)

    def compute(text: str) -> dict[str, Any]:
        view, scaled = loaded.view(text)
        return page_data(title, description, [view], causal=True, scale=scaled)

    return compute
