"""The transformer encoder–decoder of 2017: three kinds of attention, one block each side.

Dimension legend: ``b`` batch, ``s`` source positions, ``t`` target positions, ``c`` model
width, ``h`` heads, ``v`` target vocabulary.

    source → embedding + positions → [EncoderLayer × n] → (LN) → memory (b, s, c)
    target → embedding + positions → [DecoderLayer × n, each reading memory] → (LN) → logits

``EncoderLayer``  bidirectional self-attention (every source word sees every other, the
                  padded ones hidden by the key mask), then the MLP: attnlab's block
                  without the causal mask — "an encoder sees the whole input at once".
``DecoderLayer``  causal self-attention (the decoder-only model's own ``MultiHeadAttention``),
                  then cross-attention, queries from the target and keys and values from
                  the memory (``attnlab.nn.cross``), then the MLP.

``trace(src, src_lengths, tgt_in)`` runs one forward pass through the readable kernels and
returns an ``EncDecTrace``: the logits and, per layer, each attention's ``BlockTrace``
(``attnlab.nn.trace``: q, k, v, scores, weights) — the encoder's self-attention, the
decoder's causal self-attention and its cross-attention (queries from the target, keys
from the source): what the explorer shows of a translation model.

LayerNorm placement is ``cfg.norm``, as in the decoder-only block (``attnlab.nn.block``):
``pre`` x + f(LN(x)), with a final LN on each side (GPT-2's and most later models'); ``post``
LN(x + f(x)), the 2017 layout, which is ``torch.nn.TransformerDecoderLayer``'s and
``TransformerEncoderLayer``'s default (``norm_first=False``) and the one the tests and
``attnlab verify`` compare with copied weights (``copy_from_torch_decoder_layer``). A
pre-norm decoder layer does not normalise the memory it reads: the encoder's final LN did.

Left out: weight sharing between the embeddings and the output layer, the √c scaling of
the embeddings (Vaswani et al. §3.4), label smoothing, beam search, and a KV cache for
decoding (``attnlab.nn.seq2seq.greedy_decode`` recomputes the prefix each step).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnlab.nn.block import MLP
from attnlab.nn.cross import CrossAttention, copy_from_torch_mha, padding_mask
from attnlab.nn.mixers import MultiHeadAttention
from attnlab.nn.model_config import Seq2SeqConfig
from attnlab.nn.positions import AdditivePositions
from attnlab.nn.trace import BlockTrace


class _Sublayers(nn.Module):
    """What both layers share: the norm placement and the residual join."""

    def __init__(self, cfg: Seq2SeqConfig, n_norms: int) -> None:
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.norms = nn.ModuleList(nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
                                   for _ in range(n_norms))
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout > 0 else None

    def before(self, x: Tensor, n: int) -> Tensor:
        """The input of sublayer ``n``: LN(x) when pre-norm, x itself when post-norm."""
        return self.norms[n](x) if self.pre else x

    def join(self, x: Tensor, y: Tensor, n: int) -> Tensor:
        """Sublayer ``n``'s output y added to its input x: x + y, or LN(x + y) post-norm."""
        if self.drop is not None:
            y = self.drop(y)
        return x + y if self.pre else self.norms[n](x + y)


class EncoderLayer(_Sublayers):
    """Bidirectional self-attention and an MLP, each a residual sublayer."""

    def __init__(self, cfg: Seq2SeqConfig) -> None:
        super().__init__(cfg, n_norms=2)
        self.attn = CrossAttention(cfg.d_model, cfg.n_head, dropout=cfg.dropout,
                                   backend=cfg.backend)
        self.mlp = MLP(cfg.block_config())

    def forward(self, x: Tensor, key_mask: Tensor | None = None,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """x (b, s, c) → (b, s, c), and the self-attention weights (b, h, s, s) if asked."""
        h = self.before(x, 0)
        y, weights = self.attn(h, h, key_mask, need_weights=need_weights)  # no causal mask
        x = self.join(x, y, 0)
        return self.join(x, self.mlp(self.before(x, 1)), 1), weights

    def trace(self, x: Tensor, key_mask: Tensor | None = None) -> tuple[Tensor, BlockTrace]:
        """``forward``, and what its self-attention computed (``CrossAttention.trace``)."""
        h = self.before(x, 0)
        y, record = self.attn.trace(h, h, key_mask)
        x = self.join(x, y, 0)
        return self.join(x, self.mlp(self.before(x, 1)), 1), record


class DecoderLayer(_Sublayers):
    """Causal self-attention, cross-attention over the memory, and an MLP."""

    def __init__(self, cfg: Seq2SeqConfig) -> None:
        super().__init__(cfg, n_norms=3)
        block = cfg.block_config()
        self.self_attn = MultiHeadAttention(block)  # the decoder-only model's mixer
        self.cross = CrossAttention(cfg.d_model, cfg.n_head, dropout=cfg.dropout,
                                    backend=cfg.backend)
        self.mlp = MLP(block)

    def forward(self, x: Tensor, memory: Tensor, memory_mask: Tensor | None = None,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """x (b, t, c) reading memory (b, s, c) → (b, t, c), and the cross-attention
        weights (b, h, t, s) if asked."""
        positions = torch.arange(x.shape[1], device=x.device)  # (t,): the mixer's signature
        x = self.join(x, self.self_attn(self.before(x, 0), positions), 0)
        y, weights = self.cross(self.before(x, 1), memory, memory_mask,
                                need_weights=need_weights)
        x = self.join(x, y, 1)
        return self.join(x, self.mlp(self.before(x, 2)), 2), weights

    def trace(self, x: Tensor, memory: Tensor,
              memory_mask: Tensor | None = None) -> tuple[Tensor, BlockTrace, BlockTrace]:
        """``forward``, and what its self-attention and its cross-attention computed."""
        positions = torch.arange(x.shape[1], device=x.device)  # (t,)
        y, own = self.self_attn.trace(self.before(x, 0), positions)
        x = self.join(x, y, 0)
        y, cross = self.cross.trace(self.before(x, 1), memory, memory_mask)
        x = self.join(x, y, 1)
        return self.join(x, self.mlp(self.before(x, 2)), 2), own, cross


@dataclass(frozen=True)
class EncDecTrace:
    """The logits of one encoder–decoder pass and every attention of it, layer by layer."""

    logits: Tensor  # (b, t, v)
    encoder: list[BlockTrace]  # bidirectional self-attention over the source: (b, h, s, s)
    decoder: list[BlockTrace]  # causal self-attention over the target: (b, h, t, t)
    cross: list[BlockTrace]  # target queries over source keys: (b, h, t, s)


class TransformerEncoderDecoder(nn.Module):
    """Vaswani et al. 2017's translation model, at attnlab's scale."""

    def __init__(self, cfg: Seq2SeqConfig) -> None:
        super().__init__()
        if cfg.arch != "transformer":
            raise ValueError(f"TransformerEncoderDecoder needs arch 'transformer', "
                             f"got {cfg.arch!r}")
        self.cfg = cfg
        c = cfg.d_model
        self.src_tok, self.tgt_tok = nn.Embedding(cfg.src_vocab, c), nn.Embedding(cfg.tgt_vocab, c)
        self.src_pos = AdditivePositions(cfg.position, cfg.n_pos, c)
        self.tgt_pos = AdditivePositions(cfg.position, cfg.n_pos, c)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layer))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layer))
        final = cfg.norm == "pre"
        self.enc_norm = nn.LayerNorm(c, eps=cfg.norm_eps) if final else nn.Identity()
        self.dec_norm = nn.LayerNorm(c, eps=cfg.norm_eps) if final else nn.Identity()
        self.head = nn.Linear(c, cfg.tgt_vocab)

    def _embed(self, idx: Tensor, table: nn.Embedding, pos: AdditivePositions) -> Tensor:
        n = idx.shape[1]
        if self.cfg.position == "learned" and n > self.cfg.n_pos:
            raise ValueError(f"{n} positions exceed the learned position table "
                             f"({self.cfg.n_pos} rows); use a larger n_pos")
        return table(idx) + pos(0, n)  # (b, n, c)

    def encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor]:
        """The memory (b, s, c) of source ids (b, s) and its key mask (b, s)."""
        key_mask = padding_mask(src_lengths, src.shape[1])
        x = self._embed(src, self.src_tok, self.src_pos)
        for layer in self.encoder:
            x, _ = layer(x, key_mask)
        return self.enc_norm(x), key_mask

    def decode(self, tgt_in: Tensor, memory: Tensor, key_mask: Tensor,
               need_weights: bool = False) -> tuple[Tensor, list[Tensor | None]]:
        """Logits (b, t, v) for target ids (b, t) given the memory, and each decoder layer's
        cross-attention weights (b, h, t, s) (``None`` each unless ``need_weights``)."""
        x = self._embed(tgt_in, self.tgt_tok, self.tgt_pos)
        weights = []
        for layer in self.decoder:
            x, w = layer(x, memory, key_mask, need_weights=need_weights)
            weights.append(w)
        return self.head(self.dec_norm(x)), weights

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
        """Logits (b, t, v): source ids (b, s) with their lengths (b,), target input ids (b, t)
        (bos, then the target shifted right). Target padding needs no mask: it comes after
        every real target token, which the causal mask already keeps from seeing it."""
        memory, key_mask = self.encode(src, src_lengths)
        return self.decode(tgt_in, memory, key_mask)[0]

    def trace(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> EncDecTrace:
        """The forward pass of ``forward`` through the readable kernels, recording each
        attention (``EncDecTrace``); the logits are the forward pass's."""
        key_mask = padding_mask(src_lengths, src.shape[1])
        x = self._embed(src, self.src_tok, self.src_pos)
        encoder, decoder, cross = [], [], []
        for layer in self.encoder:
            x, record = layer.trace(x, key_mask)
            encoder.append(record)
        memory = self.enc_norm(x)
        y = self._embed(tgt_in, self.tgt_tok, self.tgt_pos)
        for layer in self.decoder:
            y, own, across = layer.trace(y, memory, key_mask)
            decoder.append(own)
            cross.append(across)
        return EncDecTrace(self.head(self.dec_norm(y)), encoder, decoder, cross)

    def attention_weights(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> Tensor:
        """Cross-attention weights (layers, b, h, t, s): target words × source words, per
        layer and head (zero on padded source positions); the readable kernel's."""
        memory, key_mask = self.encode(src, src_lengths)
        return torch.stack(self.decode(tgt_in, memory, key_mask, need_weights=True)[1])


def copy_from_torch_encoder_layer(ours: EncoderLayer, ref: nn.TransformerEncoderLayer) -> None:
    """Copy a ``torch.nn.TransformerEncoderLayer``'s weights into ``ours`` (same norm placement,
    activation "gelu", dim_feedforward = mlp_ratio · c)."""
    copy_from_torch_mha(ours.attn, ref.self_attn)
    _copy_mlp_and_norms(ours, ref, (ref.norm1, ref.norm2))


def copy_from_torch_decoder_layer(ours: DecoderLayer, ref: nn.TransformerDecoderLayer) -> None:
    """Copy a ``torch.nn.TransformerDecoderLayer``'s weights into ``ours``: its ``self_attn``
    fuses q|k|v as our ``qkv`` does; ``multihead_attn`` is the cross-attention."""
    with torch.no_grad():
        ours.self_attn.qkv.weight.copy_(ref.self_attn.in_proj_weight)
        ours.self_attn.qkv.bias.copy_(ref.self_attn.in_proj_bias)
        ours.self_attn.o.weight.copy_(ref.self_attn.out_proj.weight)
        ours.self_attn.o.bias.copy_(ref.self_attn.out_proj.bias)
    copy_from_torch_mha(ours.cross, ref.multihead_attn)
    _copy_mlp_and_norms(ours, ref, (ref.norm1, ref.norm2, ref.norm3))


def _copy_mlp_and_norms(ours: _Sublayers, ref: nn.Module, norms: tuple[nn.LayerNorm, ...]) -> None:
    with torch.no_grad():
        ours.mlp.up.weight.copy_(ref.linear1.weight)
        ours.mlp.up.bias.copy_(ref.linear1.bias)
        ours.mlp.down.weight.copy_(ref.linear2.weight)
        ours.mlp.down.bias.copy_(ref.linear2.bias)
        for mine, theirs in zip(ours.norms, norms, strict=True):
            mine.weight.copy_(theirs.weight)
            mine.bias.copy_(theirs.bias)
