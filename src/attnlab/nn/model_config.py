"""The model configurations from which every model in attnlab is built.

Every experiment (the ladder rows, the √d_k runs, pre/post-norm, the position
schemes, the Winograd probe, GPT-2 parity) is a ``ModelConfig`` value, never a
model class of its own. Choices are fields with a fixed set of values, checked
on construction so that a typo fails at once with a clear ``UsageError`` (a ``ValueError``,
raised as a template and its values: ``attnlab.errors``, said in the command's language).
Models of two sequences (a source and a target: translation) are a
``Seq2SeqConfig`` value, whose ``arch`` field picks one of three encoder–decoders
(``attnlab.nn.seq2seq``); their transformer blocks are built from the
``ModelConfig`` it derives (``block_config``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from attnlab.errors import UsageError
from attnlab.i18n.logs import Grouped

MIXERS = ("none", "mean", "head", "mha", "rnn", "lstm")
POSITIONS = ("none", "learned", "sinusoidal", "rope", "alibi")
NORMS = ("none", "pre", "post")
GELUS = ("exact", "tanh")
BACKENDS = ("auto", "naive", "sdpa", "memeff")
# Stated ranges of the whole-number fields (both ends included): wide enough for GPT-2 and
# Llama-sized vocabularies and contexts, narrow enough that a typo is refused, not allocated.
RANGES = {
    "vocab_size": (1, 1 << 20),
    "n_ctx": (1, 1 << 20),
    "d_model": (1, 1 << 16),
    "n_layer": (0, 1024),
    "n_head": (1, 1024),
    "mlp_ratio": (1, 64),
}


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only language model, from "no context" to GPT-2."""

    vocab_size: int = 1024  # tokens in the vocabulary (BPE-1024 by default)
    n_ctx: int = 128  # longest context the model is trained on
    d_model: int = 128  # width of the residual stream
    n_layer: int = 1  # number of blocks (mixer [+ MLP]) stacked
    mixer: str = "mha"  # context mixer: none | mean | head | mha | rnn | lstm (nn/recurrent.py)
    n_head: int = 4  # heads of the "mha" mixer, each of width d_model / n_head
    head_dim: int | None = None  # q/k width of the single "head" mixer (None: d_model)
    scale: bool = True  # divide scores by √d_k (off: docs/experiments.md, "Why divide by √d_k")
    qkv_bias: bool = False  # biases on the q, k, v maps (GPT-2 has them)
    out_proj: bool = True  # "mha": W_o (with bias) after the concat of heads
    position: str = "learned"  # none | learned | sinusoidal | rope | alibi
    n_pos: int | None = None  # rows of a learned table (None: n_ctx); larger to probe extrapolation
    mlp: bool = True  # the ×4 GELU MLP sublayer after the mixer
    mlp_ratio: int = 4  # hidden width of the MLP as a multiple of d_model
    gelu: str = "exact"  # exact erf GELU, or GPT-2's tanh approximation
    norm: str = "pre"  # LayerNorm placement: none | pre (and at the end) | post
    norm_eps: float = 1e-5  # LayerNorm epsilon
    residual: bool = True  # add each sublayer to its input, or replace the input
    dropout: float = 0.0  # on attention weights, sublayer outputs and the embedding sum
    tie_weights: bool = False  # output layer shares the token embedding
    lm_head_bias: bool = True  # bias on the output layer (GPT-2 has none)
    # Attention kernel: auto (the fastest correct one, sdpa) | naive (readable: verify, tests,
    # trace) | sdpa (PyTorch's fused) | memeff (attnlab's tiled, linear memory). Same model;
    # a checkpoint written with one loads with any other.
    backend: str = "auto"

    def __post_init__(self) -> None:
        _check_choice("mixer", self.mixer, MIXERS)
        _check_choice("position", self.position, POSITIONS)
        _check_choice("norm", self.norm, NORMS)
        _check_choice("gelu", self.gelu, GELUS)
        _check_choice("backend", self.backend, BACKENDS)
        for name, (lo, hi) in RANGES.items():  # before any tensor is made of them
            _check_range(name, getattr(self, name), lo, hi)
        if self.head_dim is not None:
            _check_range("head_dim", self.head_dim, 1, RANGES["d_model"][1])
        if self.n_pos is not None:
            _check_range("n_pos", self.n_pos, 1, RANGES["n_ctx"][1])
        if not 0 < self.norm_eps <= 1:  # nan fails it; <= 0 divides by zero, > 1 is no norm
            raise UsageError("norm_eps must be a number in (0, 1], got %s", self.norm_eps)
        if self.mixer == "mha" and self.d_model % self.n_head:
            raise UsageError("n_head=%s does not divide d_model=%s: each head must have width "
                             "d_model / n_head", self.n_head, self.d_model)
        if self.position == "rope" and self.mixer in ("head", "mha") and self.qk_dim % 2:
            raise UsageError("RoPE rotates pairs of dims: head width %s must be even", self.qk_dim)
        if not 0.0 <= self.dropout < 1.0:
            raise UsageError("dropout must be in [0, 1), got %s", self.dropout)
        if self.n_pos is not None and self.n_pos < self.n_ctx:
            raise UsageError("n_pos=%s must be >= n_ctx=%s", self.n_pos, self.n_ctx)

    @property
    def heads(self) -> int:
        """Number of heads the mixer uses (1 for the single head)."""
        return self.n_head if self.mixer == "mha" else 1

    @property
    def qk_dim(self) -> int:
        """Width d_k of each head's queries and keys."""
        if self.mixer == "mha":
            return self.d_model // self.n_head
        return self.head_dim or self.d_model

    @property
    def pos_rows(self) -> int:
        """Rows of the learned position table."""
        return self.n_pos or self.n_ctx

    def replace(self, **changes: Any) -> ModelConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError("unknown ModelConfig field(s): %s", ", ".join(unknown))
        return cls(**data)


SEQ2SEQ_ARCHS = ("rnn", "bahdanau", "transformer")
SEQ2SEQ_NORMS = ("pre", "post")
SEQ2SEQ_POSITIONS = ("sinusoidal", "learned")


@dataclass(frozen=True)
class Seq2SeqConfig:
    """An encoder–decoder from a source vocabulary to a target vocabulary (translation)."""

    # rnn: GRU encoder–decoder whose decoder sees only the encoder's last state (Cho et al.
    # 2014) | bahdanau: the same with additive attention (Bahdanau et al. 2015) |
    # transformer: encoder–decoder of blocks with cross-attention (Vaswani et al. 2017)
    arch: str = "transformer"
    src_vocab: int = 64  # source words (pad, bos, eos included)
    tgt_vocab: int = 64  # target words (pad, bos, eos included)
    d_model: int = 64  # the width: the GRU state (rnn, bahdanau) or the residual stream
    d_embed: int | None = None  # word-vector width of the recurrent models (None: d_model)
    d_attn: int | None = None  # width a of Bahdanau's score vᵀ tanh(W s + U h) (None: d_model)
    bidirectional: bool = False  # recurrent encoder reads both ways (Bahdanau's); off: one way
    n_layer: int = 2  # transformer: blocks in the encoder, and as many in the decoder
    n_head: int = 4  # transformer: heads of every attention, each of width d_model / n_head
    mlp_ratio: int = 4  # transformer: hidden width of the MLP as a multiple of d_model
    gelu: str = "exact"  # transformer MLP's GELU: exact erf, or the tanh approximation
    norm: str = "pre"  # transformer LayerNorm: pre (GPT-2's, + a final LN) | post (2017's)
    norm_eps: float = 1e-5  # LayerNorm epsilon
    position: str = "sinusoidal"  # transformer: sinusoidal (any length) | learned (n_pos rows)
    n_pos: int = 512  # longest sequence a learned table holds (sinusoids: computed beyond)
    dropout: float = 0.0  # on attention weights and sublayer outputs (transformer)
    backend: str = "auto"  # transformer attention kernel; weights asked for use naive's

    def __post_init__(self) -> None:
        _check_choice("arch", self.arch, SEQ2SEQ_ARCHS)
        _check_choice("norm", self.norm, SEQ2SEQ_NORMS)
        _check_choice("position", self.position, SEQ2SEQ_POSITIONS)
        _check_choice("gelu", self.gelu, GELUS)
        _check_choice("backend", self.backend, BACKENDS)
        for name in ("src_vocab", "tgt_vocab"):
            _check_range(name, getattr(self, name), 1, RANGES["vocab_size"][1])
        for name in ("d_model", "d_embed", "d_attn"):
            if getattr(self, name) is not None:
                _check_range(name, getattr(self, name), 1, RANGES["d_model"][1])
        _check_range("n_layer", self.n_layer, 1, RANGES["n_layer"][1])
        _check_range("n_head", self.n_head, 1, RANGES["n_head"][1])
        _check_range("mlp_ratio", self.mlp_ratio, *RANGES["mlp_ratio"])
        _check_range("n_pos", self.n_pos, 1, RANGES["n_ctx"][1])
        if self.arch == "transformer" and self.d_model % self.n_head:
            raise UsageError("n_head=%s does not divide d_model=%s: each head must have width "
                             "d_model / n_head", self.n_head, self.d_model)
        if not 0 < self.norm_eps <= 1:
            raise UsageError("norm_eps must be a number in (0, 1], got %s", self.norm_eps)
        if not 0.0 <= self.dropout < 1.0:
            raise UsageError("dropout must be in [0, 1), got %s", self.dropout)

    @property
    def embed_width(self) -> int:
        return self.d_embed or self.d_model

    @property
    def attn_width(self) -> int:
        return self.d_attn or self.d_model

    def block_config(self) -> ModelConfig:
        """The ``ModelConfig`` of the transformer's blocks: multi-head attention with biases
        on q, k, v and W_o, no positions inside (they are added to the embeddings)."""
        return ModelConfig(d_model=self.d_model, n_head=self.n_head, mixer="mha",
                           qkv_bias=True, position="none", mlp_ratio=self.mlp_ratio,
                           gelu=self.gelu, norm=self.norm, norm_eps=self.norm_eps,
                           dropout=self.dropout, backend=self.backend)

    def replace(self, **changes: Any) -> Seq2SeqConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Seq2SeqConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError("unknown Seq2SeqConfig field(s): %s", ", ".join(unknown))
        return cls(**data)


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        raise UsageError("%s must be in [%s, %s], got %s", name, Grouped(lo), Grouped(hi),
                         _grouped(value))


def _grouped(value: Any) -> Any:
    """A whole number as a ``Grouped`` (``1,000,000`` in English, ``1 000 000`` in Spanish);
    any other number written grouped as English writes it (a float given in code)."""
    return Grouped(value) if isinstance(value, int) else format(value, ",")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError("unknown %s %r; choose one of: %s", name, value, ", ".join(choices))


def gpt2_config(
    vocab_size: int = 50257, n_ctx: int = 1024, d_model: int = 768, n_layer: int = 12,
    n_head: int = 12,
) -> ModelConfig:
    """GPT-2's architecture settings (Radford et al. 2019) as a ModelConfig.

    Pre-norm blocks with a final LayerNorm, biases on q, k, v, o and the MLP,
    tanh GELU, learned positions, output layer tied to the token embedding and
    without bias. Defaults give GPT-2 small.
    """
    return ModelConfig(
        vocab_size=vocab_size, n_ctx=n_ctx, d_model=d_model, n_layer=n_layer,
        mixer="mha", n_head=n_head, qkv_bias=True, position="learned", mlp=True,
        gelu="tanh", norm="pre", residual=True, tie_weights=True, lm_head_bias=False,
    )
