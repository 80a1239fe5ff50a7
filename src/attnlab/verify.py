"""Equivalence checks (docs/model.md): each returns one row (name, max |diff|, tolerance).

``attnlab verify`` prints the rows and fails if any exceeds its tolerance; the
tests assert the same rows. Every check builds its own small random inputs
from a fixed seed, so the figures are reproducible. Run under a ``torch.device``
context (``attnlab verify --device cuda``), every tensor and module a check makes
lives on that device; the comparisons are made in float64 on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attnlab.nn.attention import attention, causal_mask
from attnlab.nn.mixers import MultiHeadAttention, UniformCausalMean
from attnlab.nn.model import KVCache, LanguageModel
from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.nn.params import gpt2_formula


@dataclass(frozen=True)
class Check:
    name: str
    diff: float  # max |difference| (or |count difference|)
    tol: float

    @property
    def ok(self) -> bool:
        return bool(self.diff <= self.tol)


def _cpu(x: torch.Tensor | np.ndarray) -> np.ndarray:
    """``x`` as a float64 NumPy array (from whatever device it is on)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def _maxdiff(a: torch.Tensor | np.ndarray, b: torch.Tensor | np.ndarray) -> float:
    return float(np.abs(_cpu(a) - _cpu(b)).max())


def _mha(d: int = 64, h: int = 4, qkv_bias: bool = True) -> MultiHeadAttention:
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=d, n_head=h, mixer="mha", qkv_bias=qkv_bias, position="none",
                      backend="naive")  # the readable kernel is what these checks verify
    return MultiHeadAttention(cfg).eval()


@torch.no_grad()
def check_torch_mha(b: int = 2, t: int = 16, d: int = 64, h: int = 4) -> Check:
    """Ours vs ``nn.MultiheadAttention`` with the same weights, causal."""
    ours = _mha(d, h)
    ref = torch.nn.MultiheadAttention(d, h, bias=True, batch_first=True).eval()
    ref.in_proj_weight.copy_(ours.qkv.weight)  # both fuse q|k|v in one (3d, d) map
    ref.in_proj_bias.copy_(ours.qkv.bias)
    ref.out_proj.weight.copy_(ours.o.weight)
    ref.out_proj.bias.copy_(ours.o.bias)
    x = torch.randn(b, t, d)
    y = ours(x, torch.arange(t))
    forbidden = ~causal_mask(t, t)  # nn.MultiheadAttention: True = may NOT attend
    y_ref, _ = ref(x, x, x, attn_mask=forbidden, need_weights=False)
    return Check("ours vs torch.nn.MultiheadAttention (fp32)", _maxdiff(y, y_ref), 1e-6)


@torch.no_grad()
def check_sdpa(b: int = 2, h: int = 4, t: int = 32, d: int = 16) -> Check:
    """Our attention core vs ``F.scaled_dot_product_attention``, causal."""
    torch.manual_seed(1)
    q, k, v = (torch.randn(b, h, t, d) for _ in range(3))
    ours, _ = attention(q, k, v, causal=True, backend="naive")
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return Check("ours vs F.scaled_dot_product_attention (fp32)", _maxdiff(ours, ref), 1e-6)


@torch.no_grad()
def check_fused(t: int = 32) -> Check:
    """Readable per-head path vs the fused SDPA path, the same model."""
    torch.manual_seed(2)
    cfg = ModelConfig(vocab_size=97, n_ctx=t, d_model=64, n_layer=2, n_head=4)
    naive = LanguageModel(cfg.replace(backend="naive")).eval()
    fused = LanguageModel(cfg.replace(backend="sdpa")).eval()
    fused.load_state_dict(naive.state_dict())
    idx = torch.randint(0, 97, (2, t))
    return Check("per-head vs fused SDPA model logits (fp32)", _maxdiff(naive(idx), fused(idx)),
                 1e-5)


@torch.no_grad()
def check_numpy_reference(b: int = 2, t: int = 12, d: int = 32, h: int = 4) -> Check:
    """NumPy float64 reference multi-head attention vs our fp32 module, same weights."""
    from attnlab.reference import multi_head_attention

    ours = _mha(d, h)
    x = torch.randn(b, t, d)
    y = ours(x, torch.arange(t))
    w = dict(zip("qkv", _cpu(ours.qkv.weight).reshape(3, d, d), strict=True))
    bias = dict(zip("qkv", _cpu(ours.qkv.bias).reshape(3, d), strict=True))
    w["o"], bias["o"] = _cpu(ours.o.weight), _cpu(ours.o.bias)
    y_ref, _ = multi_head_attention(
        _cpu(x), w["q"], w["k"], w["v"], w["o"], bias["o"], n_head=h,
        b_q=bias["q"], b_k=bias["k"], b_v=bias["v"], causal=True,
    )
    return Check("NumPy reference vs torch module", _maxdiff(y, y_ref), 1e-6)


@torch.no_grad()
def check_means(b: int = 2, t: int = 20, c: int = 8) -> list[Check]:
    """Prefix-mean loop == averaging matrix == softmax of all-zero masked scores;
    and a shuffled context gives the same mean."""
    torch.manual_seed(3)
    x = torch.randn(b, t, c)
    loop = torch.stack([x[:, : i + 1].mean(1) for i in range(t)], dim=1)  # (b, t, c)
    matrix = UniformCausalMean()(x, torch.arange(t))
    zeros = torch.zeros(t, t).masked_fill(~causal_mask(t, t), float("-inf"))
    softmax = torch.softmax(zeros, dim=-1) @ x
    perm = torch.randperm(t - 1)
    shuffled = torch.cat([x[:, :-1][:, perm], x[:, -1:]], dim=1)  # same set before the last
    last_shuffled = UniformCausalMean()(shuffled, torch.arange(t))
    return [
        Check("prefix-mean loop vs averaging matrix", _maxdiff(loop, matrix), 1e-6),
        Check("averaging matrix vs softmax(all-zero masked scores)", _maxdiff(matrix, softmax),
              1e-6),
        Check("shuffled context gives the same mean", _maxdiff(matrix[:, -1], last_shuffled[:, -1]),
              1e-6),
    ]


@torch.no_grad()
def check_kv_cache(t: int = 24) -> Check:
    """Decoding token by token with the KV cache == one full forward."""
    torch.manual_seed(4)
    cfg = ModelConfig(vocab_size=97, n_ctx=t, d_model=32, n_layer=2, n_head=4, position="rope")
    model = LanguageModel(cfg).eval()
    idx = torch.randint(0, 97, (2, t))
    full = model(idx)  # the default (fused) kernel, all positions at once
    cache = KVCache(cfg.n_layer)
    steps = [model(idx[:, i : i + 1], cache=cache) for i in range(t)]
    return Check("KV-cache decoding vs full forward", _maxdiff(full, torch.cat(steps, 1)), 1e-5)


def needs(package: str, extra: str, title: str) -> Callable[[Callable], Callable]:
    """Mark a check that needs an optional package (installed by ``extra``): without it,
    ``attnlab verify`` prints the check's row as ``title`` and SKIP, saying what to install."""
    def mark(fn: Callable) -> Callable:
        fn.needs, fn.title = (package, extra), title  # type: ignore[attr-defined]
        return fn

    return mark


def _small_gpt2_config():  # noqa: ANN202 - transformers type
    from transformers import GPT2Config

    return GPT2Config(vocab_size=211, n_positions=64, n_embd=48, n_layer=3, n_head=4,
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                      bos_token_id=0, eos_token_id=0)


@needs("transformers", "hf", "ours vs Hugging Face GPT2LMHeadModel logits")
@torch.no_grad()
def check_hf_gpt2(t: int = 40) -> Check:
    """Our model with GPT-2's settings and HF weights vs ``GPT2LMHeadModel`` logits."""
    from transformers import GPT2LMHeadModel

    from attnlab.nn.gpt2 import from_hf

    torch.manual_seed(5)
    hf = GPT2LMHeadModel(_small_gpt2_config()).eval()
    ours = from_hf(hf)
    idx = torch.randint(0, 211, (2, t))
    return Check("ours vs Hugging Face GPT2LMHeadModel logits", _maxdiff(ours(idx),
                 hf(idx).logits), 1e-5)


@torch.no_grad()
def check_memeff(t: int = 130) -> Check:
    """attnlab's tiled memory-efficient attention vs the naive kernel."""
    torch.manual_seed(6)
    q, k, v = (torch.randn(2, 4, t, 16) for _ in range(3))
    naive, _ = attention(q, k, v, causal=True, backend="naive")
    tiled, _ = attention(q, k, v, causal=True, backend="memeff")
    return Check("memory-efficient (tiled) vs naive attention (fp32)", _maxdiff(naive, tiled), 1e-5)


def check_gpt2_params() -> list[Check]:
    """12d² + 13d per block + V·d + n_ctx·d + 2d == our count == GPT-2 small's 124,439,808
    (no transformers needed)."""
    formula = gpt2_formula(768, 12, 50257, 1024)
    ours = LanguageModel(gpt2_config()).num_parameters()
    return [
        Check(f"GPT-2 small params: formula {formula:,} vs ours {ours:,}", abs(formula - ours), 0),
        Check(f"GPT-2 small params: formula = 124,439,808 ({formula:,})",
              abs(formula - 124_439_808), 0),
    ]


@needs("transformers", "hf", "GPT-2 small params: formula vs Hugging Face's count")
def check_hf_gpt2_params() -> Check:
    """The same formula == ``GPT2LMHeadModel(GPT2Config())``'s count."""
    from transformers import GPT2Config, GPT2LMHeadModel

    formula = gpt2_formula(768, 12, 50257, 1024)
    with torch.device("meta"):  # count shapes without allocating 500 MB
        hf = sum(p.numel() for p in GPT2LMHeadModel(GPT2Config()).parameters())
    return Check(f"GPT-2 small params: formula {formula:,} vs HF {hf:,}", abs(formula - hf), 0)


# ---------------------------------------------------------------- two sequences (issue 49)

_SOURCE_LENGTHS = (9, 5, 1)  # a batch of sources of unequal lengths, padded to 9


@torch.no_grad()
def check_cross_attention(t: int = 6, d: int = 32, h: int = 4) -> list[Check]:
    """Cross-attention vs ``nn.MultiheadAttention`` with separate query and key/value
    inputs and a key-padding mask: outputs and per-head weights, same weights."""
    from attnlab.nn.cross import CrossAttention, copy_from_torch_mha, padding_mask

    torch.manual_seed(7)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    ours = CrossAttention(d, h, backend="naive").eval()
    copy_from_torch_mha(ours, ref)
    lengths = torch.tensor(_SOURCE_LENGTHS)
    x, memory = torch.randn(len(lengths), t, d), torch.randn(len(lengths), max(lengths), d)
    keep = padding_mask(lengths, memory.shape[1])  # True = a real key (ours)
    y, w = ours(x, memory, keep, need_weights=True)
    y_ref, w_ref = ref(x, memory, memory, key_padding_mask=~keep,  # theirs: True = ignore
                       average_attn_weights=False)
    return [Check("cross-attention vs nn.MultiheadAttention, key padding (fp32)",
                  _maxdiff(y, y_ref), 1e-6),
            Check("cross-attention weights vs nn.MultiheadAttention's (fp32)",
                  _maxdiff(w, w_ref), 1e-6)]


def _torch_layer(kind: str, d: int, h: int, norm: str) -> torch.nn.Module:
    layer = getattr(torch.nn, f"Transformer{kind}Layer")
    return layer(d, h, dim_feedforward=4 * d, dropout=0.0, activation="gelu",
                 batch_first=True, norm_first=norm == "pre").eval()


@torch.no_grad()
def check_decoder_layer(t: int = 7, d: int = 32, h: int = 4) -> list[Check]:
    """Our encoder–decoder layers vs ``nn.TransformerDecoderLayer`` (post-norm, the 2017 layout,
    and ``norm_first``) and ``nn.TransformerEncoderLayer``, with copied weights: causal
    self-attention, cross-attention over a padded memory, MLP."""
    from attnlab.nn.cross import padding_mask
    from attnlab.nn.encdec import (
        DecoderLayer,
        EncoderLayer,
        copy_from_torch_decoder_layer,
        copy_from_torch_encoder_layer,
    )
    from attnlab.nn.model_config import Seq2SeqConfig

    rows = []
    lengths = torch.tensor(_SOURCE_LENGTHS)
    keep = padding_mask(lengths, max(_SOURCE_LENGTHS))
    for norm in ("post", "pre"):
        torch.manual_seed(8)
        cfg = Seq2SeqConfig(d_model=d, n_head=h, norm=norm, backend="naive")
        ref = _torch_layer("Decoder", d, h, norm)
        ours = DecoderLayer(cfg).eval()
        copy_from_torch_decoder_layer(ours, ref)
        x, memory = torch.randn(len(lengths), t, d), torch.randn(len(lengths), keep.shape[1], d)
        y, _ = ours(x, memory, keep)
        y_ref = ref(x, memory, tgt_mask=~causal_mask(t, t), memory_key_padding_mask=~keep)
        rows.append(Check(f"decoder layer vs nn.TransformerDecoderLayer, {norm}-norm (fp32)",
                          _maxdiff(y, y_ref), 1e-5))
    torch.manual_seed(9)
    ref = _torch_layer("Encoder", d, h, "post")
    ours = EncoderLayer(Seq2SeqConfig(d_model=d, n_head=h, norm="post", backend="naive")).eval()
    copy_from_torch_encoder_layer(ours, ref)
    x = torch.randn(len(lengths), keep.shape[1], d)
    y, _ = ours(x, keep)
    with torch.enable_grad():  # PyTorch's inference fast path zeroes padded rows; skip it
        y_ref = ref(x.requires_grad_(), src_key_padding_mask=~keep)
    real = keep[..., None].expand_as(y)  # padded positions' outputs are never read
    rows.append(Check("encoder layer vs nn.TransformerEncoderLayer (fp32)",
                      _maxdiff(y[real], y_ref[real]), 1e-5))
    return rows


def check_additive(b: int = 2, i: int = 4, j: int = 6) -> list[Check]:
    """Additive (Bahdanau) attention: our module vs the NumPy reference (fp32 vs float64,
    padded source), and the reference's hand-written backward vs torch autograd (float64)."""
    from attnlab.nn.additive import AdditiveAttention
    from attnlab.nn.cross import padding_mask
    from attnlab.reference.additive import additive_attention_backward, additive_attention_forward

    torch.manual_seed(10)
    ours = AdditiveAttention(5, 7, 8).eval()
    s, h, dc = torch.randn(b, i, 5), torch.randn(b, j, 7), torch.randn(b, i, 7)
    keep = padding_mask(torch.tensor([j, 3]), j)
    w, u, v = (_cpu(p) for p in (ours.W.weight, ours.U.weight, ours.v.weight[0]))
    context_ref, weights_ref, cache = additive_attention_forward(
        _cpu(s), _cpu(h), w, u, v, mask=_cpu(keep)[:, None, :].astype(bool))
    with torch.no_grad():
        context, weights = ours(s, h, keep)
    grads = additive_attention_backward(_cpu(dc), cache)
    ours64 = ours.double()
    s64, h64 = (x.detach().double().requires_grad_() for x in (s, h))
    (ours64(s64, h64, keep)[0] * dc.double()).sum().backward()
    auto = (s64.grad, h64.grad, ours64.W.weight.grad, ours64.U.weight.grad, ours64.v.weight.grad[0])
    return [
        Check("additive attention vs NumPy reference, padded (fp32)",
              max(_maxdiff(context, context_ref), _maxdiff(weights, weights_ref)), 1e-6),
        Check("additive backward by hand vs torch autograd (float64)",
              max(_maxdiff(a, g) for a, g in zip(auto, grads, strict=True)), 1e-10),
    ]


@torch.no_grad()
def check_source_padding() -> list[Check]:
    """A source alone and the same source padded in a batch of longer ones: the same logits,
    for each of the three translation models (padding is invisible to all three)."""
    from attnlab.nn.model_config import Seq2SeqConfig
    from attnlab.nn.seq2seq import build_seq2seq

    rows = []
    for arch in ("rnn", "bahdanau", "transformer"):
        torch.manual_seed(11)
        model = build_seq2seq(Seq2SeqConfig(arch=arch, src_vocab=23, tgt_vocab=29, d_model=32,
                                            backend="naive")).eval()
        lengths = torch.tensor(_SOURCE_LENGTHS)
        src = torch.randint(3, 23, (len(lengths), max(_SOURCE_LENGTHS)))
        src[torch.arange(src.shape[1]) >= lengths[:, None]] = 0  # the pad id past each length
        tgt = torch.randint(3, 29, (len(lengths), 6))
        batch = model(src, lengths, tgt)
        alone = [model(src[k : k + 1, : n], lengths[k : k + 1], tgt[k : k + 1])
                 for k, n in enumerate(_SOURCE_LENGTHS)]
        rows.append(Check(f"{arch}: source alone vs padded in a batch (fp32)",
                          _maxdiff(batch, torch.cat(alone)), 1e-5))
    return rows


CHECKS: list[Callable[[], Check | list[Check]]] = [
    check_torch_mha,
    check_sdpa,
    check_fused,
    check_numpy_reference,
    check_means,
    check_kv_cache,
    check_memeff,
    check_cross_attention,
    check_decoder_layer,
    check_additive,
    check_source_padding,
    check_gpt2_params,
    check_hf_gpt2,
    check_hf_gpt2_params,
]


def run_checks() -> list[Check]:
    rows: list[Check] = []
    for fn in CHECKS:
        out = fn()
        rows.extend(out if isinstance(out, list) else [out])
    return rows
