"""The three translation models of one ``Seq2SeqConfig``, and what they share.

Dimension legend: ``b`` batch, ``s`` source positions, ``t`` target positions, ``v`` target
vocabulary.

``cfg.arch`` picks the model; every one is called the same way,
``model(src, src_lengths, tgt_in) -> logits (b, t, v)``, and has ``encode`` and ``decode``
(``model.decode(tgt_in, *model.encode(src, src_lengths))`` is the forward pass) and
``attention_weights`` (target words × source words, or None):

``rnn``          ``RecurrentEncoderDecoder``: the decoder sees only the encoder's last state;
``bahdanau``     the same with additive attention; weights (b, t, s), one row per step;
``transformer``  ``TransformerEncoderDecoder``; cross-attention weights (layers, b, h, t, s).

"Matched in parameters": ``matched_width(cfg, target)`` is ``cfg`` with the width whose
parameter count is nearest ``target`` (every other width-like field left None grows with
it), and ``matched_configs`` gives the three models at one count, so a comparison of them
compares what they do with their parameters, not how many they have.
Left out: beam search, length penalties, a decoding cache (``greedy_decode`` reruns the
decoder over the prefix at each step, which is fine at attnlab's lengths).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn.encdec import TransformerEncoderDecoder
from attnlab.nn.model_config import SEQ2SEQ_ARCHS, Seq2SeqConfig
from attnlab.nn.rnn_seq2seq import RecurrentEncoderDecoder

Seq2SeqModel = RecurrentEncoderDecoder | TransformerEncoderDecoder


def build_seq2seq(cfg: Seq2SeqConfig) -> Seq2SeqModel:
    """The model ``cfg.arch`` names."""
    if cfg.arch == "transformer":
        return TransformerEncoderDecoder(cfg)
    return RecurrentEncoderDecoder(cfg)


def num_parameters(model: nn.Module) -> int:
    """Trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def count_parameters(cfg: Seq2SeqConfig) -> int:
    """Parameters of the model ``cfg`` builds, by formula (no model is built; a test checks
    it against ``num_parameters`` of the built model). With e the word-vector width, d the
    GRU width, d_h = d (or 2d both ways), a the scoring width, c the transformer's width,
    r its MLP ratio, L its layers and V_s, V_t the vocabularies:

    recurrent  (V_s + V_t)·e                          word vectors
               + dirs·(3d·e + 3d² + 6d)               the encoder GRU
               + d_h·d + d                            the bridge W_init
               + [a·d + a·d_h + a]                    W, U, v: bahdanau only
               + 3d·(e + d_h) + 3d² + 6d              the decoder GRU cell
               + (d + d_h)·V_t + V_t                  the output layer
    transformer (V_s + V_t)·c [+ 2·n_pos·c learned]   word vectors, positions
               + L·(4c² + 4c + M + 4c)                encoder layers: attention, MLP, 2 LNs
               + L·(8c² + 8c + M + 6c)                decoder layers: two attentions, 3 LNs
               + [4c pre-norm]                        the two final LNs
               + c·V_t + V_t                          the output layer
               with M = 2r·c² + r·c + c               the MLP

    >>> count_parameters(Seq2SeqConfig(arch="rnn", src_vocab=10, tgt_vocab=10, d_model=4))
    478
    """
    v_s, v_t = cfg.src_vocab, cfg.tgt_vocab
    if cfg.arch == "transformer":
        c, r, n = cfg.d_model, cfg.mlp_ratio, cfg.n_layer
        mlp = 2 * r * c * c + r * c + c
        total = (v_s + v_t) * c + (2 * cfg.n_pos * c if cfg.position == "learned" else 0)
        total += n * (4 * c * c + 4 * c + mlp + 4 * c) + n * (8 * c * c + 8 * c + mlp + 6 * c)
        return total + (4 * c if cfg.norm == "pre" else 0) + c * v_t + v_t
    e, d, a = cfg.embed_width, cfg.d_model, cfg.attn_width
    dirs = 2 if cfg.bidirectional else 1
    d_h = dirs * d
    total = (v_s + v_t) * e + dirs * (3 * d * e + 3 * d * d + 6 * d) + d_h * d + d
    total += (a * d + a * d_h + a) if cfg.arch == "bahdanau" else 0
    return total + 3 * d * (e + d_h) + 3 * d * d + 6 * d + (d + d_h) * v_t + v_t


def matched_width(cfg: Seq2SeqConfig, target: int, max_width: int = 4096) -> Seq2SeqConfig:
    """``cfg`` with the ``d_model`` (a multiple of ``n_head`` for the transformer) whose
    parameter count is nearest ``target``; a tie goes to the narrower. The count grows
    with the width, so a bisection finds it.

    >>> base = Seq2SeqConfig(arch="rnn", src_vocab=20, tgt_vocab=20)
    >>> count_parameters(matched_width(base, 10_000)) - 10_000
    -190
    """
    step = cfg.n_head if cfg.arch == "transformer" else 1
    if target < 1:
        raise ValueError(f"target must be a positive number of parameters, got {target}")

    def count(k: int) -> int:
        return count_parameters(cfg.replace(d_model=k * step))

    lo, hi = 1, max(1, max_width // step)
    if count(hi) < target:
        raise ValueError(f"{target:,} parameters need a {cfg.arch} wider than {max_width}")
    while lo < hi:  # the least multiple whose count reaches the target
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if count(mid) < target else (lo, mid)
    best = lo if lo == 1 or count(lo) - target < target - count(lo - 1) else lo - 1
    return cfg.replace(d_model=best * step)


def matched_configs(base: Seq2SeqConfig, target: int) -> dict[str, Seq2SeqConfig]:
    """The three models (``rnn``, ``bahdanau``, ``transformer``) built like ``base``, matched
    in parameters: the transformer at the width whose count is nearest ``target``, then the
    two recurrent models at the widths nearest the transformer's count. The transformer's
    width moves in steps of ``n_head`` (a few percent of the count at small widths), the
    GRUs' in steps of one, so matching them to it, not to ``target``, keeps all three close."""
    transformer = matched_width(base.replace(arch="transformer"), target)
    reached = count_parameters(transformer)
    return {arch: transformer if arch == "transformer" else
            matched_width(base.replace(arch=arch), reached) for arch in SEQ2SEQ_ARCHS}


def seq2seq_loss(logits: Tensor, targets: Tensor, pad_id: int) -> Tensor:
    """Mean cross-entropy of ``logits`` (b, t, v) against ``targets`` (b, t) over the real
    target words (``pad_id`` positions count for nothing); computed in fp32 at least."""
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=pad_id)


@torch.no_grad()
def greedy_decode(model: Seq2SeqModel, src: Tensor, src_lengths: Tensor, bos: int, eos: int,
                  max_len: int) -> Tensor:
    """Target ids (b, n ≤ max_len) written one word at a time, each the decoder's most
    likely next word; bos is not included, and a row that wrote eos writes eos after it.
    The source is encoded once; the decoder reruns over the prefix at every step."""
    encoded = model.encode(src, src_lengths)
    tgt = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(tgt, *encoded)[0][:, -1]  # (b, v): the newest position
        word = torch.where(done, torch.full_like(done, eos, dtype=torch.long), logits.argmax(-1))
        tgt = torch.cat([tgt, word[:, None]], dim=1)
        done |= word == eos
        if bool(done.all()):
            break
    return tgt[:, 1:]
