"""Explorer data from a Hugging Face encoder (BERT and its kin) or encoder–decoder (T5, BART,
Marian, …) saved in a local folder: each kind of attention in a view of its own.

Dimension legend: ``h`` heads, ``t`` query positions, ``s`` key positions (``s == t`` in
self-attention, the source's length in cross-attention), ``d`` query/key width of a head,
``c`` model width.

An encoder reads its whole input at once: its one view is marked ``attends:
"bidirectional"``, and the page's causal switch does not govern it. An encoder–decoder
gives three views: the encoder's self-attention over the source (bidirectional), the
decoder's over the target (``causal``), and the cross-attention, the target's rows over
the source's columns (``cross``, with the source as the view's ``sources``). The target is
the text given, read teacher-forced (the decoder reads it as it is, whatever it would have
said), or else the model's own greedy output, at most ``GREEDY_TOKENS`` new tokens. The
decoder's rows are its inputs: the start token, then the target without its closing
end-of-sequence token (nothing is read after it).

As for causal models (``attnlab.explorer.sources.hf``), the weights shown are the
library's own, ``output_attentions`` under the readable ("eager") kernel, and a small
reader per layout rebuilds each head's q and k from the attention module's input, caught
by a forward hook: BERT's ``query``/``key``, BART's and Marian's ``q_proj``/``k_proj``, T5's
``q``/``k`` with its relative position bias (T5 does not divide by √d_k). A view whose
rebuilt softmax(q·kᵀ·scale + bias) differs from the library's weights, or that has no
reader, is shown with the weights alone, the switches off and the reason on the page.

Left out: padding and batches; the pooler of an encoder (it comes after every attention
layer); attention composed across layers for the decoder and cross views (each decoder
layer also reads the source, which a rollout over one kind of attention would leave out);
encoder–decoders over speech or images (Whisper, …); beam search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attnlab.errors import DataError, Said, UsageError
from attnlab.explorer.sources.build import family_name, own_scale, page_data, view_from_traces
from attnlab.explorer.sources.hf_files import (
    check_tokenizer_files,
    check_weight_files,
    hf_token_strings,
    load_tokenizer,
    load_weights,
    quiet_transformers,
)
from attnlab.explorer.sources.traces import LayerTrace, hf_value_norms, numpy_of, value_norms
from attnlab.i18n import text as say

__all__ = [
    "ATTENDS",
    "GREEDY_TOKENS",
    "MATCH_TOLERANCE",
    "matched",
    "SeqModel",
    "load_seq",
    "rebuilt_weights",
    "seq_compute",
    "seq_traces",
    "split_heads",
]

MATCH_TOLERANCE = 1e-4  # largest |rebuilt − library| weight accepted (float32 arithmetic)
GREEDY_TOKENS = 40  # new tokens the model may write as its own target
ATTENDS = {"encoder": "bidirectional", "decoder": "causal", "cross": "cross"}  # each kind's mask

# a reader: (attention module, its queries' input x (1, t, c), its keys' input (1, s, c),
#   its output) -> q (1, h, t, d), k (1, h, s, d), scale, bias (1, h, t, s) or None
Reader = Callable[[Any, torch.Tensor, torch.Tensor, Any], tuple]


def split_heads(x: torch.Tensor, d: int) -> torch.Tensor:
    b, t, _ = x.shape
    return x.view(b, t, -1, d).transpose(1, 2)  # (b, h, t, d)


def rebuilt_weights(
    q: np.ndarray, k: np.ndarray, scale: float, allowed: np.ndarray, bias: np.ndarray | None = None
) -> np.ndarray:
    """softmax(q·kᵀ·scale + bias) (h, t, s) over the keys ``allowed`` (t, s) marks, from
    q (h, t, d) and k (h, s, d): what a library's attention computes, to check a rebuild."""
    s = q @ k.transpose(0, 2, 1) * scale + (0.0 if bias is None else bias)  # (h, t, s)
    s = np.where(allowed, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _read_bert(mod: Any, x: torch.Tensor, kv: torch.Tensor, out: Any) -> tuple:
    d = mod.attention_head_size
    return split_heads(mod.query(x), d), split_heads(mod.key(kv), d), float(mod.scaling), None


def _read_bart(mod: Any, x: torch.Tensor, kv: torch.Tensor, out: Any) -> tuple:
    d = mod.head_dim  # BART, Marian, mBART, Pegasus: one layout
    return split_heads(mod.q_proj(x), d), split_heads(mod.k_proj(kv), d), float(mod.scaling), None


def _read_t5(mod: Any, x: torch.Tensor, kv: torch.Tensor, out: Any) -> tuple:
    d = mod.key_value_proj_dim
    bias = out[1]  # (1, h, t, s): the relative position bias it added (zeros across)
    q, k = split_heads(mod.q(x), d), split_heads(mod.k(kv), d)
    return q, k, float(mod.scaling), bias if bool(bias.any()) else None


def _reader(module: Any) -> Reader | None:
    if all(hasattr(module, a) for a in ("query", "key", "attention_head_size", "scaling")):
        return _read_bert
    if all(hasattr(module, a) for a in ("q_proj", "k_proj", "head_dim", "scaling")):
        return _read_bart
    if all(hasattr(module, a) for a in ("q", "k", "key_value_proj_dim", "scaling")):
        return _read_t5
    return None


@dataclass(frozen=True)
class _Call:
    """One call of an attention module during the forward pass."""

    module: Any
    x: torch.Tensor  # (1, t, c) the queries' input
    kv: torch.Tensor  # (1, s, c) the keys' input: x itself, or the encoder's output (cross)
    out: Any  # what the module returned
    cross: bool


def _run(model: torch.nn.Module, inputs: dict[str, Any]) -> tuple[Any, list[_Call]]:
    """The model's output with its attention weights, and every call of a module a reader
    reads, in the order they ran."""
    calls: list[_Call] = []

    def keep(mod: Any, args: tuple, kwargs: dict, out: Any) -> None:
        x = args[0] if args else kwargs["hidden_states"]
        kv = kwargs.get("key_value_states")  # given as a keyword by every layout read here
        calls.append(_Call(mod, x, x if kv is None else kv, out, kv is not None))

    modules = [m for m in model.modules()
               if type(m).__name__.endswith("Attention") and _reader(m) is not None]  # fmt: skip
    hooks = [m.register_forward_hook(keep, with_kwargs=True) for m in modules]
    try:
        with torch.no_grad():
            out = model(**inputs, output_attentions=True)
    finally:
        for hook in hooks:
            hook.remove()
    return out, calls


def _values(call: _Call, parents: dict[int, Any], n_head: int) -> np.ndarray | None:
    """``value_norms`` (h, s) of one call: BART's ``v_proj``/``out_proj``, T5's ``v``/``o``,
    BERT's ``value`` and its parent's ``output.dense``; None for any other layout."""
    mod = call.module
    norms = hf_value_norms(mod, call.kv, n_head)
    if norms is not None:
        return norms
    if hasattr(mod, "v") and hasattr(mod, "o"):
        v, o = mod.v, mod.o
    else:
        v = getattr(mod, "value", None)
        o = getattr(getattr(parents.get(id(mod)), "output", None), "dense", None)
    if not isinstance(v, torch.nn.Linear) or not isinstance(o, torch.nn.Linear):
        return None
    with torch.no_grad():
        values = v(call.kv)  # (1, s, h·e)
    return value_norms(split_heads(values, values.shape[-1] // n_head), o.weight)


def _traces(
    calls: Sequence[_Call], weights: list[np.ndarray], attends: str, family: str,
    parents: dict[int, Any] | None,
) -> tuple[list[LayerTrace], str | None]:
    """One kind's layers: the library's ``weights`` (h, t, s) each, with the rebuilt q and k
    where they reproduce them (and the value norms where ``parents`` is given)."""
    library = [LayerTrace(weights=w) for w in weights]
    if not calls or len(calls) != len(weights):
        return library, (f"the explorer has no reader for the q and k of {family} models, so "
                         "the weights are the library's own")  # fmt: skip
    traces, worst = [], 0.0
    try:
        for call, w in zip(calls, weights, strict=True):
            with torch.no_grad():
                q, k, scale, bias = _reader(call.module)(call.module, call.x, call.kv, call.out)
            q, k, bias = numpy_of(q), numpy_of(k), numpy_of(bias)  # (h, t, d), (h, s, d)
            if not (scale == 1.0 or math.isclose(scale, q.shape[-1] ** -0.5, rel_tol=1e-6)):
                return library, f"{family} scales q·k by {scale:g}, not by 1/√d_k or 1"
            allowed = np.tril(np.ones(w.shape[1:], bool)) if attends == "causal" else True
            worst = max(worst, float(np.abs(rebuilt_weights(q, k, scale, allowed, bias) - w).max()))
            norms = None if parents is None else _values(call, parents, q.shape[0])
            traces.append(LayerTrace(weights=w, q=q, k=k, scale=scale, bias=bias,
                                     value_norms=norms))  # fmt: skip
    except (AttributeError, KeyError, TypeError, ValueError, RuntimeError) as err:
        return library, f"the q and k of this {family} model could not be rebuilt ({err})"
    return matched(traces, library, worst, family)


def matched(traces: list[LayerTrace], library: Any, worst: float,
            family: str) -> tuple[Any, str | None]:
    """The rebuilt ``traces`` when their weights match the library's within MATCH_TOLERANCE,
    else the ``library``'s own and why (shared by the causal and the seq2seq readers)."""
    if worst > MATCH_TOLERANCE:
        return library, (f"q·k rebuilt for {family} differs from the library's weights by "
                         f"{worst:.1e}, so the weights are the library's own")  # fmt: skip
    return traces, None


def seq_traces(
    model: torch.nn.Module, ids: list[int], decoder_ids: list[int] | None = None
) -> dict[str, tuple[list[LayerTrace], str | None]]:
    """Every layer of an encoder on ``ids`` (``decoder_ids`` None), or of an encoder–decoder
    on source ``ids`` and decoder inputs ``decoder_ids``, per kind of attention (``encoder``;
    ``decoder`` and ``cross`` too): the layers, and the reason the switches are off, if so."""
    family = family_name(model.config.model_type)
    device = next(model.parameters()).device
    inputs: dict[str, Any] = {"input_ids": torch.tensor([ids], device=device)}
    if decoder_ids is not None:
        inputs.update(decoder_input_ids=torch.tensor([decoder_ids], device=device),
                      use_cache=False)  # fmt: skip
    out, calls = _run(model, inputs)
    if decoder_ids is None:
        library, encoder = {"encoder": out.attentions}, model
    else:
        library = {"encoder": out.encoder_attentions, "decoder": out.decoder_attentions,
                   "cross": out.cross_attentions}  # fmt: skip
        encoder = model.get_encoder()
    if any(not w or w[0] is None for w in library.values()):
        raise DataError("a %s model returns no attention weights (output_attentions): there "
                        "is no attention to show", family)  # fmt: skip
    inside = {id(m) for m in encoder.modules()}
    parents = {id(child): parent for parent in model.modules() for child in parent.children()}
    result = {}
    for kind, weights in library.items():
        mine = [c for c in calls if ("cross" if c.cross else "encoder" if id(c.module) in inside
                                     else "decoder") == kind]  # fmt: skip
        result[kind] = _traces(mine, [numpy_of(w) for w in weights], ATTENDS[kind], family,
                               parents if kind == "encoder" else None)  # fmt: skip
    return result


class SeqModel:
    """A loaded encoder or encoder–decoder folder: the model, its tokenizer and facts."""

    def __init__(self, folder: Path, model: torch.nn.Module, tokenizer: Any, kind: str) -> None:
        self.folder, self.model, self.tokenizer, self.kind = folder, model, tokenizer, kind
        cfg = model.config
        self.model_type = cfg.model_type
        self.context = getattr(cfg, "max_position_embeddings", None)
        gen = getattr(model, "generation_config", None)  # the folder's, else the config's
        self.start = next((x for x in (getattr(gen, "decoder_start_token_id", None),
                                       getattr(cfg, "decoder_start_token_id", None))
                           if x is not None), None)  # fmt: skip
        eos = getattr(gen, "eos_token_id", None) or getattr(cfg, "eos_token_id", None)
        self.eos = set(eos) if isinstance(eos, (list, tuple)) else {eos}

    def _fits(self, ids: list[int], side: str) -> list[int]:
        """``ids`` of the ``side`` (``input`` or ``target``), or a UsageError if there are none
        or more than the model's context (each side's error its own template, to be said in
        the user's language)."""
        if not ids:
            if side == "target":
                raise UsageError("the target is empty")
            raise UsageError("the input is empty")
        if self.context and len(ids) > self.context:
            if side == "target":
                raise UsageError("the target is %s tokens; the model's context is %s", len(ids),
                                 self.context)  # fmt: skip
            raise UsageError("the input is %s tokens; the model's context is %s", len(ids),
                             self.context)  # fmt: skip
        return ids

    def decoder_inputs(self, ids: list[int], target: str | None) -> list[int]:
        """The decoder's inputs for source ``ids``: the start token and ``target``'s tokens,
        or the model's own greedy output; the closing end-of-sequence token left out."""
        if self.start is None:
            raise DataError("%s/config.json names no decoder_start_token_id: the decoder has "
                            "no first token to read", self.folder)  # fmt: skip
        if target is not None:
            out = [self.start, *self.tokenizer(text_target=target)["input_ids"]]
        else:
            device = next(self.model.parameters()).device
            with quiet_transformers(str(self.folder)), torch.no_grad():
                out = self.model.generate(torch.tensor([ids], device=device), do_sample=False,
                                          num_beams=1, max_new_tokens=GREEDY_TOKENS)[0].tolist()
        return self._fits(out[:-1] if len(out) > 1 and out[-1] in self.eos else out, "target")

    def views(self, text: str, target: str | None, lang: str) -> tuple[list[dict], bool]:
        """The page's views of ``text`` (and the target) and whether the model divides by √d_k."""
        ids = self._fits(list(self.tokenizer(text)["input_ids"]), "input")
        source = hf_token_strings(self.tokenizer, ids)
        if self.kind == "encoder":
            traces = seq_traces(self.model, ids)
            return [_view(say("explorer", "hf.encoder", lang), source, traces["encoder"],
                          "bidirectional", lang)], own_scale(traces["encoder"][0])  # fmt: skip
        decoder_ids = self.decoder_inputs(ids, target)
        rows = hf_token_strings(self.tokenizer, decoder_ids)
        traces = seq_traces(self.model, ids, decoder_ids)
        views = [
            _view(say("explorer", "hf.encoder", lang), source, traces["encoder"],
                  "bidirectional", lang),
            _view(say("explorer", "hf.decoder", lang), rows, traces["decoder"], "causal", lang),
            _view(say("explorer", "hf.cross", lang), rows, traces["cross"], "cross", lang,
                  sources=source),
        ]  # fmt: skip
        return views, own_scale([t for layers, _ in traces.values() for t in layers])


def _view(
    name: str, tokens: list[str], traced: tuple[list[LayerTrace], str | None], attends: str,
    lang: str, sources: list[str] | None = None,
) -> dict[str, Any]:
    """One view of a kind of attention, marked with what its model's own mask is."""
    traces, fixed = traced
    view = view_from_traces(name, tokens, traces, fixed=fixed, lang=lang,
                            compose=attends == "bidirectional")  # fmt: skip
    if sources is not None:
        view["sources"] = sources
    view["attends"] = attends
    return view


def load_seq(folder: Path, config: Any, kind: str, device: torch.device) -> SeqModel:
    """Load an encoder or encoder–decoder (``kind``) and its tokenizer from a checked folder."""
    needs = Said("an encoder–decoder reads its source and writes its target with it") \
        if kind == "encoder-decoder" else None  # fmt: skip
    check_tokenizer_files(folder, needs)
    check_weight_files(folder, kind)
    tokenizer = load_tokenizer(folder)
    model = load_weights(folder, config, kind).to(device).eval()
    return SeqModel(folder, model, tokenizer, kind)


def seq_compute(
    folder: Path, config: Any, kind: str, *, target: str | None = None, lang: str = "en"
) -> Callable[[str], dict[str, Any]]:
    """Load the folder once; return ``compute(text) -> data``: the encoder's view of ``text``,
    or an encoder–decoder's three views of ``text`` as source and ``target`` (default: the
    model's own greedy output), its words in ``lang``."""
    from attnlab.train.runtime import resolve_device

    with quiet_transformers(str(folder)):
        loaded = load_seq(folder, config, kind, torch.device(resolve_device("auto")))
    family = family_name(loaded.model_type)
    title = say("explorer", "hf.title", lang, folder=folder.name, family=family)
    if kind == "encoder":
        description = say("explorer", "hf.encoder_description", lang, family=family,
                          folder=folder.name)  # fmt: skip
    else:
        which = say("explorer", "hf.target_given" if target is not None else "hf.target_greedy",
                    lang, most=GREEDY_TOKENS)  # fmt: skip
        description = say("explorer", "hf.seq_description", lang, family=family,
                          folder=folder.name, target=which)  # fmt: skip

    def compute(text: str) -> dict[str, Any]:
        views, scaled = loaded.views(text, target, lang)
        return page_data(title, description, views, causal=False, scale=scaled)

    return compute
